#!/usr/bin/env bash
# CI job: ThreadSanitizer over the concurrency tests of the strategies whose
# unsafe code is ours.
source "$(dirname "$0")/common.sh"

step "ThreadSanitizer over the concurrency tests (std rebuilt instrumented)"
# The strategies with unsafe code of ours (src/raw/) only: the others are safe
# Rust over std, crossbeam, parking_lot, dashmap and arc-swap, where a data
# race is not possible without unsafe code, and TSan would test those crates.
# TSan's allocator aborts on an allocation it cannot serve unless told to
# return NULL, as malloc does: behaviour::absurd_configs_are_errors checks
# that case.
RUSTFLAGS="-Zsanitizer=thread" TSAN_OPTIONS="halt_on_error=1:allocator_may_return_null=1" \
    ISDB_STRATEGIES=optimistic,lock-free CARGO_TARGET_DIR=target/tsan \
    cargo +"$NIGHTLY" test -Zbuild-std --target x86_64-unknown-linux-gnu \
    --test behaviour --test collisions --test handles --test faults -- every_strategy:: --test-threads 2
