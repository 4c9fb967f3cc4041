#!/usr/bin/env bash
# CI job: a short run of the contention harness.
source "$(dirname "$0")/common.sh"

step "contention harness, short (full run: cargo run --release -p perf)"
cargo run --release -p perf -- --duration 0.2 --reps 1 --threads 1,2,256 \
    --miss-budget 100000 --out target/perf-ci
test -s target/perf-ci/contention.csv

step "fill: filled from empty, then hits in order and in a random order, short"
# Every subject (the default), so that no strategy is named here.
for pass in "" "--hits" "--hits --shuffled"; do
    # shellcheck disable=SC2086 # the pass's flags, split on purpose
    cargo run --release -p perf --bin fill -- --sizes 1000 --reps 1 --threads 1,4 $pass
done
