#!/usr/bin/env bash
# Run every libFuzzer harness in FUZZ_BUILD (make fuzz-build) for SECONDS
# each, FUZZ_JOBS harnesses at a time (default: the CPUs), on a scratch copy
# of its corpus (tests/fuzz/corpus/NAME is read, never written), and report
# the executions per harness. A crash, timeout (over 10 s for one input),
# leak or out-of-memory (2 GiB) fails the harness: its log's tail and the
# input libFuzzer saved are shown.
#
#   scripts/run-fuzz.sh FUZZ_BUILD SECONDS
#
# Ends with "fuzz: N passed, N failed"; with $PACER_COUNTS set, appends
# "N_PASSED N_FAILED" to it (scripts/run-tests.sh). FUZZ_KEEP=1 keeps the
# scratch corpora (the new inputs found) and logs.
set -u
build=${1:?usage: $0 FUZZ_BUILD SECONDS}
secs=${2:?usage: $0 FUZZ_BUILD SECONDS}
jobs=${FUZZ_JOBS:-$(nproc 2>/dev/null || echo 2)}
res=$(mktemp -d)
trap 'rm -rf "$res"' EXIT
export secs res

# One harness: its scratch folder's path in $res/NAME.work, its exit status
# in $res/NAME.rc.
one() {
	local bin=$1 name work
	name=$(basename "$bin")
	work=$(mktemp -d)
	mkdir -p "$work/new"
	echo "$work" >"$res/$name.work"
	"$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
		-artifact_prefix="$work/" "$work/new" "tests/fuzz/corpus/${name#fuzz_}" \
		>"$work/log" 2>&1
	echo $? >"$res/$name.rc"
}
export -f one

bins=()
for bin in "$build"/fuzz_*; do
	[ -x "$bin" ] && [ -f "$bin" ] || continue
	case $bin in *.o|*.a|*.d) continue ;; esac
	bins+=("$bin")
done
printf '%s\0' "${bins[@]}" | xargs -0 -r -n 1 -P "$jobs" bash -c 'one "$0"'

pass=0; fail=0; total=0
for bin in "${bins[@]}"; do
	name=$(basename "$bin")
	work=$(cat "$res/$name.work"); keep=${FUZZ_KEEP:-}
	log=$work/log
	if [ "$(cat "$res/$name.rc" 2>/dev/null)" = 0 ]; then
		execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
		rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
		added=$(ls "$work/new" | wc -l)
		echo "ok   $name: ${execs:-?} executions in ${secs}s (${rate:-?}/s), $added new inputs"
		pass=$((pass + 1)); total=$((total + ${execs:-0}))
	else
		echo "FAIL $name"; tail -30 "$log"
		for a in "$work"/crash-* "$work"/timeout-* "$work"/leak-* "$work"/oom-*; do
			[ -f "$a" ] && echo "  input: $a ($(wc -c <"$a") bytes)" && keep=1
		done
		fail=$((fail + 1))
	fi
	if [ -n "$keep" ]; then echo "  kept: $work"; else rm -rf "$work"; fi
done
[ -n "${PACER_COUNTS:-}" ] && echo "$pass $fail" >> "$PACER_COUNTS"
echo "fuzz: $pass passed, $fail failed ($total executions)"
[ $fail -eq 0 ] && [ $pass -gt 0 ]
