#!/usr/bin/env bash
# Runs the loom models of interned-string-db.
#
#   loom-tests/run.sh                       # CI's bounds: 2 preemptions
#   LOOM_MAX_PREEMPTIONS=3 loom-tests/run.sh  # deeper (minutes to hours)
#   LOOM_MAX_PREEMPTIONS=  loom-tests/run.sh  # unbounded: exhaustive, very slow
#   loom-tests/run.sh optimistic_reader     # one model by name
#
# On a failure, LOOM_CHECKPOINT_FILE=f.json LOOM_LOG=trace reproduces it.
set -euo pipefail
cd "$(dirname "$0")/.."
export RUSTFLAGS="${RUSTFLAGS:-} --cfg interner_loom"
export LOOM_MAX_PREEMPTIONS="${LOOM_MAX_PREEMPTIONS-2}"
[ -n "$LOOM_MAX_PREEMPTIONS" ] || unset LOOM_MAX_PREEMPTIONS
# A separate target dir, so the loom build does not evict the normal one.
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target}/loom"
exec cargo test --release -p loom-tests --test models --test lock_free -- --test-threads=2 "$@"
