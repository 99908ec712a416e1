#!/usr/bin/env bash
# Builds the tiny suite the bench and report e2e tests run, from examples/colsum:
# DIR/level1/1_ColSum.py with its cpu seed 1_ColSum.cpu.py, and 2_ColSumNoSeed.py (no seed:
# skipped under the tuner). Usage: tests/e2e/make-suite.sh DIR
set -eu
cd "$(dirname "$0")/../.."
dir=${1:?usage: make-suite.sh DIR}
mkdir -p "$dir/level1"
cp examples/colsum/problem.py "$dir/level1/1_ColSum.py"
cp examples/colsum/cpu_seed.py "$dir/level1/1_ColSum.cpu.py"
cp examples/colsum/problem.py "$dir/level1/2_ColSumNoSeed.py"
