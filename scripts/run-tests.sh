#!/usr/bin/env bash
# `make test`: every test. In order: the release build, the layers (include
# graph, and the calls inside each module), the release unit tests; then two
# things at once: the integration tests that mostly wait, in parallel shards
# (tests/integration/suite.py), and, at nice 10 beside them, the CPU-bound
# stages: unit tests and fuzz corpus replay under ASan+UBSan, a short
# libFuzzer run of each harness, unit tests under ThreadSanitizer, valgrind
# on the parsers' and statistics' unit tests; last, with nothing beside
# them, the integration tests that measure time or CPU (suite.py: ALONE).
# Inside each stage the work runs in parallel too (JOBS, default: the CPUs).
# Prints each stage's wall time and ends with one line "N passed, N failed"
# (", N skipped" when integration tests skipped themselves).
#
# SERIAL=1 runs the CPU-bound stages before the integration tests instead of
# beside them (slower; for a machine where even niced work disturbs them).
set -u
cd "$(dirname "$0")/.."
export PACER_COUNTS=$(mktemp)
tmp=$(mktemp -d)
cpu_pid=""
# On the way out, the CPU-bound stages (their own process group) stop too.
cleanup() {
	[ -n "$cpu_pid" ] && kill -TERM -- -"$cpu_pid" 2>/dev/null
	rm -rf "$PACER_COUNTS" "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
status=0
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}
export UNIT_JOBS=${UNIT_JOBS:-$JOBS} FUZZ_JOBS=${FUZZ_JOBS:-$JOBS}

# step NAME: starts a stage (and ends the one before), noting its wall time
# in $1's file.
t_all=$SECONDS
step() {
	local log=$1; shift
	if [ -n "${step_name:-}" ]; then
		printf '%5ds  %s\n' $((SECONDS - t_step)) "$step_name" >>"$log"
	fi
	step_name=$*; t_step=$SECONDS
	[ -n "$step_name" ] && { echo; echo "== $*"; }
	return 0
}

step "$tmp/times" "build (release)"
make -s -j"$JOBS" pacer tools build/rel/libpacer.a || exit 1
make -s -j"$JOBS" $(make -s print-unit-bins) >/dev/null || exit 1

step "$tmp/times" "layers: no include cycle, pure modules pure, no call cycle inside a module"
if make -s check-layers LAYERS_OBJECTS=1; then
	echo "1 0" >> "$PACER_COUNTS"
else
	echo "0 1" >> "$PACER_COUNTS"; status=1
fi

step "$tmp/times" "unit tests (release)"
make -s test-unit || status=1
step "$tmp/times" ""

# The CPU-bound stages; their output goes to $tmp/cpu.log, their times to
# $tmp/cpu.times; exit status 1 if any failed.
cpu_stages() {
	local st=0 log=$tmp/cpu.times
	step "$log" "unit tests and fuzz corpus replay (ASan+UBSan)"
	# a build that fails runs no test: it counts as one failure, named (the
	# test binaries' own failures are counted by run-unit.sh)
	if make -s -j"$JOBS" SAN=1 build-unit; then
		make -s -j"$JOBS" SAN=1 test-unit || st=1
	else
		echo "FAIL unit test build (ASan+UBSan)"; echo "0 1" >> "$PACER_COUNTS"; st=1
	fi
	make -s -j"$JOBS" SAN=1 test-fuzz-replay || st=1

	# Each libFuzzer harness for a short run beside the replay (the build,
	# then the harnesses x FUZZ_CI_SECONDS, JOBS at a time); `make fuzz` runs
	# the long campaign.
	if command -v clang >/dev/null; then
		step "$log" "fuzz: every harness for ${FUZZ_CI_SECONDS:-2}s (libFuzzer, ASan+UBSan)"
		if make -s -j"$JOBS" fuzz-build >/dev/null; then
			scripts/run-fuzz.sh build/fuzz "${FUZZ_CI_SECONDS:-2}" || st=1
		else
			echo "FAIL fuzz build"; echo "0 1" >> "$PACER_COUNTS"; st=1
		fi
	fi

	step "$log" "unit tests (ThreadSanitizer)"
	# TSan needs its shadow memory where ASLR may put the binary: run without it.
	if make -s -j"$JOBS" SAN=thread build-unit; then
		TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" setarch "$(uname -m)" -R \
			make -s -j"$JOBS" SAN=thread test-unit || st=1
	else
		echo "FAIL unit test build (ThreadSanitizer)"; echo "0 1" >> "$PACER_COUNTS"; st=1
	fi

	# valgrind finds what the sanitizers cannot, reads of uninitialised
	# memory, and it is slow (20-50x). The rule: it runs the unit tests of the
	# code that parses outside bytes or computes statistics, where such a read
	# changes a figure without crashing: the modules without threads,
	# sockets, clocks or loops (VALGRIND_MODULES), and util's parsers
	# (VALGRIND_UTIL). The rest (engine, runner, target, net, metrics, probe,
	# history, cli and util's other files) run under ASan+UBSan and TSan.
	# (The slowest first: stats/test_summary takes a third of the stage.)
	local VALGRIND_MODULES="stats http plan table doc report result"
	local VALGRIND_UTIL="yaml_get units b64 text timestamp sysinfo"
	if command -v valgrind >/dev/null; then
		step "$log" "unit tests under valgrind (parsers and statistics)"
		local vbins=() bins mod name
		bins=$(make -s print-unit-bins | tr ' ' '\n')
		for mod in $VALGRIND_MODULES; do
			vbins+=($(grep "^build/rel/tests/unit/$mod/" <<<"$bins"))
		done
		for name in $VALGRIND_UTIL; do
			vbins+=($(grep -x "build/rel/tests/unit/util/test_$name" <<<"$bins"))
		done
		UNIT_WRAP="valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite" \
			UNIT_COUNT=binaries UNIT_LABEL=valgrind scripts/run-unit.sh "${vbins[@]}" || st=1
	fi
	step "$log" ""
	return $st
}

# The integration tests of one part of the suite (shared or alone).
integration() {
	PACER_SUITE_PART=$1 scripts/run-integration.sh build/rel 2>&1 | tee "$tmp/int.$1"
	[ "${PIPESTATUS[0]}" -eq 0 ] || status=1
	counts=$(sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\1 \2/p' "$tmp/int.$1" | tail -1)
	echo "${counts:-0 1}" >> "$PACER_COUNTS"
}

if [ -n "${SERIAL:-}" ]; then
	cpu_stages || status=1
	step "$tmp/times" "integration tests in shards"
	integration shared
else
	echo
	echo "== the CPU-bound stages at nice 10 (their output follows the integration tests in shards)"
	set -m # a process group of their own, stopped by cleanup
	(renice -n 10 -p $BASHPID >/dev/null; cpu_stages) >"$tmp/cpu.log" 2>&1 &
	cpu_pid=$!
	set +m
	step "$tmp/times" "integration tests in shards (beside the CPU-bound stages)"
	integration shared
	# the shards are done: the rest at the usual priority, where allowed
	renice -n 0 -g "$cpu_pid" >/dev/null 2>&1
	step "$tmp/times" "waiting for the CPU-bound stages"
	wait "$cpu_pid" || status=1
	cpu_pid=""
	cat "$tmp/cpu.log"
fi

step "$tmp/times" "integration tests alone"
integration alone
step "$tmp/times" ""

passed=0; failed=0
while read -r p f; do passed=$((passed + p)); failed=$((failed + f)); done < "$PACER_COUNTS"
skipped=0
for f in "$tmp"/int.*; do
	s=$(sed -n 's/^\([0-9]*\) skipped$/\1/p' "$f" | tail -1)
	skipped=$((skipped + ${s:-0}))
done
echo
echo "stage wall times:"
cat "$tmp/times"
[ -f "$tmp/cpu.times" ] && sed 's/^/  cpu: /' "$tmp/cpu.times"
printf '%5ds  in all\n' $((SECONDS - t_all))
echo
if [ "$skipped" -gt 0 ]; then
	echo "$passed passed, $failed failed, $skipped skipped"
else
	echo "$passed passed, $failed failed"
fi
[ $status -eq 0 ] && [ $failed -eq 0 ]
