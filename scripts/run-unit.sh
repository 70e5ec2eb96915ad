#!/usr/bin/env bash
# Run cmocka unit-test binaries, UNIT_JOBS at a time (default: the CPUs);
# print one line per binary (in the order given, with its time) and a total.
# Exit non-zero if any test failed. Writes "passed failed" to $PACER_COUNTS
# if set.
#
#   scripts/run-unit.sh BIN...
#
# UNIT_WRAP: a command each binary runs under (scripts/run-tests.sh runs
# valgrind this way). UNIT_COUNT=binaries: count binaries, not tests (a
# valgrind pass is one check per binary). UNIT_LABEL: the total's label.
set -u
jobs=${UNIT_JOBS:-$(nproc 2>/dev/null || echo 2)}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
export out

# One binary: its output in $out/N.log; its exit status and time in $out/N.rc.
one() {
	local i=$1 bin=$2 t0 t1 rc
	t0=${EPOCHREALTIME/./}
	# shellcheck disable=SC2086 # UNIT_WRAP is a command line
	${UNIT_WRAP:-} "$bin" >"$out/$i.log" 2>&1
	rc=$?
	t1=${EPOCHREALTIME/./}
	echo "$rc $(((t1 - t0) / 100000))" >"$out/$i.rc"
}
export -f one

i=0
for bin in "$@"; do
	i=$((i + 1))
	printf '%s\0%s\0' "$i" "$bin"
done | xargs -0 -r -n 2 -P "$jobs" bash -c 'one "$0" "$1"'

pass=0; fail=0; i=0
for bin in "$@"; do
	i=$((i + 1))
	read -r rc ds <"$out/$i.rc" 2>/dev/null || { rc=127; ds=0; }
	took="$((ds / 10)).$((ds % 10))s"
	p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$out/$i.log" | tail -1)
	f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' "$out/$i.log" | tail -1)
	p=${p:-0}; f=${f:-0}
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi
	if [ "$f" -ne 0 ]; then
		cat "$out/$i.log"
		echo "FAIL $bin ($p passed, $f failed, exit $rc, $took)"
	else
		echo "ok   $bin ($p passed, $took)"
	fi
	if [ "${UNIT_COUNT:-tests}" = binaries ]; then
		if [ "$f" -ne 0 ]; then f=1; p=0; else p=1; fi
	fi
	pass=$((pass + p)); fail=$((fail + f))
done
[ -n "${PACER_COUNTS:-}" ] && echo "$pass $fail" >> "$PACER_COUNTS"
echo "${UNIT_LABEL:-unit}: $pass passed, $fail failed"
[ $fail -eq 0 ]
