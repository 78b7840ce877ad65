#!/bin/sh
# The layer rule (scripts/check-layers.sh): no include points from the
# engine up into the host layer or the facade, or from the host into the
# facade. Runs once per build directory given by tests/run.sh; the check is
# of the sources, so only the first (BUILD=build) runs it.
cd "$(dirname "$0")/.." || exit 2
echo "1..1"
case "${BUILD:-build}" in
build) ;;
*) echo "ok 1 - layers # SKIP checked once, with BUILD=build"; exit 0 ;;
esac
if out=$(scripts/check-layers.sh 2>&1); then
	echo "$out" | sed 's/^/# /'
	echo "ok 1 - layers: no include points up a layer (engine <- host <- api)"
else
	echo "$out" | sed 's/^/# /'
	echo "not ok 1 - layers: an include points up a layer"
fi
