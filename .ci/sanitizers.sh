#!/usr/bin/env bash
# CI job: ThreadSanitizer over the concurrency tests of the strategies whose
# unsafe code is ours.
source "$(dirname "$0")/common.sh"

step "ThreadSanitizer over the concurrency tests (std rebuilt instrumented)"
# The strategies with unsafe code of ours only: those whose protocol lives in
# a module of src/raw/ (`Strategy::RAW_MODULE`), from the crate's one list
# (examples/strategies.rs). The others are safe Rust over std, crossbeam,
# parking_lot, dashmap and arc-swap, where a data race is not possible
# without unsafe code, and TSan would test those crates.
# TSan's allocator aborts on an allocation it cannot serve unless told to
# return NULL, as malloc does: behaviour::absurd_configs_are_errors checks
# that case. The tests are the modules behaviour, collisions, handles and
# faults of the one integration-test binary (tests/it/), over the list.
strategies="$(cargo run -q --example strategies -- --raw | cut -f1 | paste -sd, -)"
[ -n "$strategies" ] || { echo "no strategy has a module of src/raw/" >&2; exit 1; }
echo "strategies: $strategies"
RUSTFLAGS="-Zsanitizer=thread" TSAN_OPTIONS="halt_on_error=1:allocator_may_return_null=1" \
    ISDB_STRATEGIES="$strategies" CARGO_TARGET_DIR=target/tsan \
    cargo +"$NIGHTLY" test -Zbuild-std --target x86_64-unknown-linux-gnu \
    --test it -- --test-threads 2 \
    behaviour::every_strategy:: collisions::every_strategy:: \
    handles::every_strategy:: faults::every_strategy::
