#!/usr/bin/env bash
# `make test`: every test, in order: release unit tests, the same under
# ASan+UBSan, fuzz corpus replay (sanitized) and a short libFuzzer run of
# each harness, ThreadSanitizer, valgrind on the unit tests,
# then the integration tests against real processes. Ends with one line
# "N passed, N failed".
set -u
cd "$(dirname "$0")/.."
export PACER_COUNTS=$(mktemp)
trap 'rm -f "$PACER_COUNTS"' EXIT
status=0
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}

step() { echo; echo "== $*"; }

step "build (release)"
make -s -j"$JOBS" pacer tools build/rel/libpacer.a || exit 1
make -s -j"$JOBS" $(make -s print-unit-bins) >/dev/null || exit 1

step "layers: no include cycle, pure modules pure, no call cycle inside a module"
if make -s check-layers LAYERS_OBJECTS=1; then echo "1 0" >> "$PACER_COUNTS"; else echo "0 1" >> "$PACER_COUNTS"; status=1; fi

step "unit tests (release)"
make -s test-unit || status=1

step "unit tests and fuzz corpus replay (ASan+UBSan)"
make -s -j"$JOBS" SAN=1 test-unit || status=1
make -s -j"$JOBS" SAN=1 test-fuzz-replay || status=1

# Each libFuzzer harness for a short run beside the replay (about a minute
# in all: the build ~25 s on 2 cores, 14 harnesses x FUZZ_CI_SECONDS);
# `make fuzz` runs the long campaign.
step "fuzz: every harness for ${FUZZ_CI_SECONDS:-2}s (libFuzzer, ASan+UBSan)"
if command -v clang >/dev/null; then
	if make -s -j"$JOBS" fuzz-build >/dev/null; then
		scripts/run-fuzz.sh build/fuzz "${FUZZ_CI_SECONDS:-2}" || status=1
	else
		echo "FAIL fuzz build"; echo "0 1" >> "$PACER_COUNTS"; status=1
	fi
fi

step "unit tests (ThreadSanitizer)"
# TSan needs its shadow memory where ASLR may put the binary: run without it.
TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" setarch "$(uname -m)" -R \
	make -s -j"$JOBS" SAN=thread test-unit || status=1

step "unit tests under valgrind"
if command -v valgrind >/dev/null; then
	vpass=0; vfail=0
	for bin in $(make -s print-unit-bins); do
		if valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite "$bin" >/dev/null 2>/tmp/pacer-vg.$$; then
			vpass=$((vpass + 1))
		else
			echo "FAIL valgrind $bin"; tail -30 /tmp/pacer-vg.$$; vfail=$((vfail + 1)); status=1
		fi
	done
	rm -f /tmp/pacer-vg.$$
	echo "$vpass $vfail" >> "$PACER_COUNTS"
	echo "valgrind: $vpass passed, $vfail failed"
fi

step "integration tests"
ilog=$(mktemp)
make -s test-integration 2>&1 | tee "$ilog"
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1
counts=$(sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed.*/\1 \2/p' "$ilog" | tail -1)
echo "${counts:-0 1}" >> "$PACER_COUNTS"
rm -f "$ilog"

passed=0; failed=0
while read -r p f; do passed=$((passed + p)); failed=$((failed + f)); done < "$PACER_COUNTS"
echo
echo "$passed passed, $failed failed"
[ $status -eq 0 ] && [ $failed -eq 0 ]
