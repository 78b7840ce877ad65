# Sourced by tests/run.sh and tests/run-qemu.sh (bash): runs queued tests
# JOBS at a time and prints each one's summary, in the order queued, once
# it and every test before it ended, so a test's lines stay together.
#
#   tap_add NAME COMMAND   queue a test (COMMAND is a shell command line)
#   tap_run                run the queue; totals in tap_passed, tap_failed,
#                          tap_skipped
#
# A test's output is TAP: "ok N - ...", "not ok N - ...", "# ..." and one
# plan "1..N" (first or last). It fails if it exits non-zero without a
# "not ok", prints no plan, or prints a different number of results than
# planned (it died half-way). "1..0 # SKIP why" is a whole-binary skip,
# counted as one skipped test.
tap_jobs=${BPFRT_TEST_JOBS:-2}
tap_names=() tap_cmds=()
tap_passed=0 tap_failed=0 tap_skipped=0
tap_dir=$(mktemp -d) || exit 2
trap 'rm -rf "$tap_dir"' EXIT

tap_add() {
	tap_names+=("$1")
	tap_cmds+=("$2")
}

# tap_summary NAME LOG RC SECONDS: the summary line (and failure details).
tap_summary() {
	local name=$1 log=$2 rc=$3 secs=$4 p f s plan n
	p=$(grep -c '^ok ' "$log"); f=$(grep -c '^not ok ' "$log")
	s=$(grep -c '^ok .*# SKIP' "$log")
	plan=$(grep -E '^1\.\.[0-9]+' "$log" | tail -1)
	n=${plan#1..}; n=${n%% *}
	if [ "$n" = 0 ] && [ -n "$plan" ] && [ $((p + f)) -eq 0 ]; then
		p=1; s=1        # its "1..0 # SKIP why" line is shown below
	elif [ -z "$plan" ]; then
		f=$((f + 1)); echo "not ok - $name printed no plan (1..N): it ended early" >>"$log"
	elif [ "$n" -ne $((p + f)) ]; then
		f=$((f + 1)); echo "not ok - $name planned $n tests but reported $((p + f))" >>"$log"
	fi
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		f=1; echo "not ok - $name exited with status $rc" >>"$log"
	fi
	tap_passed=$((tap_passed + p)); tap_failed=$((tap_failed + f))
	tap_skipped=$((tap_skipped + s))
	printf '%-40s %4d ok %3d failed %3d skipped (%ds)\n' "$name" "$p" "$f" "$s" "$secs"
	if [ "$f" -ne 0 ]; then
		grep -E '^(not ok|#)' "$log" | head -40 | sed 's/^/    /'
		tail -5 "$log" | sed 's/^/    | /'
	fi
	grep '# SKIP' "$log" | sed 's/^/    /'
}

tap_run() {
	local total=${#tap_names[@]} next=0 shown=0 running=0 i
	while [ "$shown" -lt "$total" ]; do
		while [ "$running" -lt "$tap_jobs" ] && [ "$next" -lt "$total" ]; do
			i=$next
			( start=$(date +%s)
			  eval "${tap_cmds[$i]}" >"$tap_dir/$i.log" 2>&1
			  echo "$? $(( $(date +%s) - start ))" >"$tap_dir/$i.tmp"
			  mv "$tap_dir/$i.tmp" "$tap_dir/$i.end" ) &
			next=$((next + 1)) running=$((running + 1))
		done
		wait -n 2>/dev/null || sleep 0.2
		running=0
		for ((i = shown; i < next; i++)); do
			[ -f "$tap_dir/$i.end" ] || running=$((running + 1))
		done
		while [ "$shown" -lt "$next" ] && [ -f "$tap_dir/$shown.end" ]; do
			read -r rc secs <"$tap_dir/$shown.end"
			tap_summary "${tap_names[$shown]}" "$tap_dir/$shown.log" "$rc" "$secs"
			rm -f "$tap_dir/$shown.log"
			shown=$((shown + 1))
		done
	done
}
