#!/usr/bin/env bash
# CI job: the loom models, and the loom mutants whenever src/raw or
# loom-tests differ from the tree they last passed on.
source "$(dirname "$0")/common.sh"

step "loom models (2 preemptions; loom-tests/run.sh documents deeper runs)"
RUSTFLAGS="--cfg interner_loom" CARGO_TARGET_DIR=target/loom \
    cargo clippy -p loom-tests --all-targets -- -D warnings
loom-tests/run.sh

step "loom mutants: each ordering in src/raw weakened to Relaxed must fail a model"
# The mutants prove the models have teeth; that can only change when the
# unsafe code or the models change. They take some 12 minutes of CI's 30
# (2026-12-08, the 2-CPU VM: 615 s and 47 s of mutants, and builds), so
# they run when src/raw or loom-tests hash to anything but the tree they
# last passed on (loom-tests/verified.sha256, written by loom-tests/verify.sh
# on success), or with MUTANTS=always. The last full table is in
# docs/reliability.md.
verified="$(cat loom-tests/verified.sha256 2>/dev/null || true)"
current="$(loom-tests/tree-hash.sh)"
if [ "${MUTANTS:-}" = always ] || [ "$verified" != "$current" ]; then
    echo "src/raw and loom-tests hash to $current; last verified: ${verified:-never}"
    loom-tests/verify.sh
else
    echo "src/raw and loom-tests are the tree the mutants last passed on ($current): skipped"
fi
