# Sourced by tests/run.sh and tests/run-qemu.sh (bash): runs queued tests
# JOBS at a time and prints each one's summary as soon as it ends (its
# lines together), prefixed with how many of the queue have ended and the
# time since the run began, "[ 12/148  3:05]", so a long run shows where
# it is.
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
		echo "not ok - $name planned $n tests but reported $((p + f))" >>"$log"; f=$((f + 1))
	fi
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		f=1; echo "not ok - $name exited with status $rc" >>"$log"
	fi
	tap_passed=$((tap_passed + p)); tap_failed=$((tap_failed + f))
	tap_skipped=$((tap_skipped + s))
	printf '%s %-40s %4d ok %3d failed %3d skipped (%ds)\n' "$tap_progress" "$name" "$p" "$f" \
		"$s" "$secs"
	if [ "$f" -ne 0 ]; then
		grep -E '^(not ok|#)' "$log" | head -40 | sed 's/^/    /'
		tail -5 "$log" | sed 's/^/    | /'
	fi
	grep '# SKIP' "$log" | sed 's/^/    /'
}

tap_run() {
	local total=${#tap_names[@]} next=0 ended=0 i rc secs t0=$SECONDS
	local -a reported=()
	while [ "$ended" -lt "$total" ]; do
		while [ $((next - ended)) -lt "$tap_jobs" ] && [ "$next" -lt "$total" ]; do
			i=$next
			( start=$(date +%s)
			  eval "${tap_cmds[$i]}" >"$tap_dir/$i.log" 2>&1
			  echo "$? $(( $(date +%s) - start ))" >"$tap_dir/$i.tmp"
			  mv "$tap_dir/$i.tmp" "$tap_dir/$i.end" ) &
			next=$((next + 1))
		done
		wait -n 2>/dev/null || sleep 0.2
		for ((i = 0; i < next; i++)); do
			[ -z "${reported[$i]}" ] && [ -f "$tap_dir/$i.end" ] || continue
			reported[$i]=1
			ended=$((ended + 1))
			read -r rc secs <"$tap_dir/$i.end"
			printf -v tap_progress '[%*d/%d %3d:%02d]' "${#total}" "$ended" "$total" \
				$(( (SECONDS - t0) / 60 )) $(( (SECONDS - t0) % 60 ))
			tap_summary "${tap_names[$i]}" "$tap_dir/$i.log" "$rc" "$secs"
			rm -f "$tap_dir/$i.log"
		done
	done
}
