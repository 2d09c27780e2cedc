#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# All benchmarks (`make bench`); run from anywhere, as root.  Environment
# variables are passed on (N, RUNS, FUNCS: see each script).
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== overhead: per-call cost of tracing (bench/overhead.sh)"
bash bench/overhead.sh
