#!/bin/sh
# `make run`: the experiments implemented so far, printed as tables.
echo "bpfrt: nothing to run yet"
