#!/usr/bin/env bash
# Replay every fuzz corpus through its harness (built with a plain main),
# FUZZ_JOBS harnesses at a time (default: the CPUs).
#
#   scripts/run-fuzz-replay.sh BUILD_DIR
set -u
build=$1
jobs=${FUZZ_JOBS:-$(nproc 2>/dev/null || echo 2)}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
export out

one() {
	local bin=$1 name
	name=$(basename "$bin" -replay)
	"$bin" "tests/fuzz/corpus/${name#fuzz_}" >"$out/$name.log" 2>&1
	echo $? >"$out/$name.rc"
}
export -f one

bins=()
for bin in "$build"/tests/fuzz/*-replay; do
	[ -x "$bin" ] && bins+=("$bin")
done
printf '%s\0' "${bins[@]}" | xargs -0 -r -n 1 -P "$jobs" bash -c 'one "$0"'

pass=0; fail=0
for bin in "${bins[@]}"; do
	name=$(basename "$bin" -replay)
	corpus=tests/fuzz/corpus/${name#fuzz_}
	if [ "$(cat "$out/$name.rc" 2>/dev/null)" = 0 ]; then
		echo "ok   $name corpus ($(ls "$corpus" | wc -l) inputs)"; pass=$((pass + 1))
	else
		echo "FAIL $name corpus"; tail -20 "$out/$name.log"; fail=$((fail + 1))
	fi
done
[ -n "${PACER_COUNTS:-}" ] && echo "$pass $fail" >> "$PACER_COUNTS"
echo "fuzz replay: $pass passed, $fail failed"
[ $fail -eq 0 ]
