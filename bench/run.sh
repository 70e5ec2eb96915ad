#!/usr/bin/env bash
# `make bench`: measure pacer beside wrk; writes bench/results/.
set -euo pipefail
cd "$(dirname "$0")/.."
exec python3 bench/bench.py "$@"
