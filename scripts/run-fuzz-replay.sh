#!/usr/bin/env bash
# Replay every fuzz corpus through its harness (built with a plain main).
set -u
build=$1
pass=0; fail=0
for bin in "$build"/tests/fuzz/*-replay; do
	[ -x "$bin" ] || continue
	name=$(basename "$bin" -replay)
	corpus=tests/fuzz/corpus/${name#fuzz_}
	if "$bin" "$corpus" >/dev/null 2>&1; then
		echo "ok   $name corpus ($(ls "$corpus" | wc -l) inputs)"; pass=$((pass + 1))
	else
		echo "FAIL $name corpus"; "$bin" "$corpus" 2>&1 | tail -20; fail=$((fail + 1))
	fi
done
[ -n "${PACER_COUNTS:-}" ] && echo "$pass $fail" >> "$PACER_COUNTS"
echo "fuzz replay: $pass passed, $fail failed"
[ $fail -eq 0 ]
