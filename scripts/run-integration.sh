#!/bin/sh
# Runs pacer's integration tests (tests/integration/test_*.py) against real
# processes: nginx, tests/tools/badserver and the pacer binary.
#
#   scripts/run-integration.sh BUILD_DIR [TEST_NAME...]
#
# Without TEST_NAME: the whole suite, in parallel shards, with the tests that
# measure time or CPU alone at the end (tests/integration/suite.py; the
# shards: PACER_TEST_JOBS, default the CPUs + 1; PACER_SUITE_PART=shared or
# alone: one of the two parts). With TEST_NAMEs (a module, module.Class or
# module.Class.test_method, e.g. test_run_badinput.BadInputTest.
# test_bad_rate): those tests, one after the other.
#
# BUILD_DIR holds tests/tools/badserver (and pacer). The pacer binary is
# $PACER_BIN when set, else BUILD_DIR/pacer when it exists, else ./pacer.
# Prints PASS/FAIL/SKIP per test and ends with "N passed, N failed"; exits
# non-zero when a test failed. Without a pacer binary the tests that need it
# are skipped and the script fails, unless PACER_ALLOW_MISSING=1 (for
# running the harness self-tests alone).
set -u
if [ $# -lt 1 ]; then
	echo "usage: $0 BUILD_DIR [TEST_NAME...]" >&2
	exit 2
fi
root=$(cd "$(dirname "$0")/.." && pwd)
build=$1
shift
case $build in /*) ;; *) build=$root/$build ;; esac
export PACER_BUILD="$build"
if [ -z "${PACER_BIN:-}" ]; then
	if [ -x "$build/pacer" ]; then
		PACER_BIN=$build/pacer
	else
		PACER_BIN=$root/pacer
	fi
fi
export PACER_BIN
if [ ! -x "$PACER_BIN" ] && [ "${PACER_ALLOW_MISSING:-0}" != 1 ]; then
	echo "pacer binary not found at $PACER_BIN (build it first, or set PACER_ALLOW_MISSING=1)" >&2
	echo "0 passed, 1 failed"
	exit 1
fi
if [ ! -x /usr/sbin/nginx ] && [ -z "${NGINX_BIN:-}" ]; then
	echo "nginx not found at /usr/sbin/nginx (Debian package nginx-light)" >&2
	echo "0 passed, 1 failed"
	exit 1
fi
cd "$root/tests/integration" || exit 1
# Debian's own Python sees the Debian modules the browser and schema tests use.
PY=python3; [ -x /usr/bin/python3 ] && PY=/usr/bin/python3
if [ $# -eq 0 ]; then
	exec "$PY" suite.py
fi
exec "$PY" -c 'import sys, harness; sys.exit(harness.run_suite())' "$@"
