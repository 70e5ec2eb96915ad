#!/usr/bin/env bash
# Run cmocka unit-test binaries; print one line per binary and a total.
# Exit non-zero if any test failed. Writes "passed failed" to $PACER_COUNTS if set.
set -u
pass=0; fail=0
for bin in "$@"; do
	out=$("$bin" 2>&1); rc=$?
	p=$(printf '%s\n' "$out" | sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' | tail -1)
	f=$(printf '%s\n' "$out" | sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' | tail -1)
	p=${p:-0}; f=${f:-0}
	if [ $rc -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi
	pass=$((pass + p)); fail=$((fail + f))
	if [ "$f" -ne 0 ]; then
		printf '%s\n' "$out"
		echo "FAIL $bin ($p passed, $f failed)"
	else
		echo "ok   $bin ($p passed)"
	fi
done
[ -n "${PACER_COUNTS:-}" ] && echo "$pass $fail" >> "$PACER_COUNTS"
echo "unit: $pass passed, $fail failed"
[ $fail -eq 0 ]
