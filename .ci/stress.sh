#!/usr/bin/env bash
# CI job: the #[ignore]d stress and fault tests, at scale, in release, and
# at full size the tests that a debug build runs smaller.
source "$(dirname "$0")/common.sh"

step "stress and faults at scale (release, the #[ignore]d tests)"
# The modules stress and faults of the one integration-test binary (tests/it/).
cargo test --release --test it -- --ignored --nocapture --test-threads 1 stress:: faults::

step "the tests that a debug build runs smaller, at full size (release)"
# Each does less under debug_assertions, to stay within a minute a test
# (its doc says what); the same code at full size, in the release build the
# step above made.
cargo test --release --test it -- --test-threads 1 \
    differential::every_strategy::agrees_with_the_reference \
    hit_then_snapshot:: \
    behaviour::every_strategy::snapshot_while_eight_threads_intern \
    memory::every_strategy::drop_and_reset_free_every_byte \
    memory::every_strategy::snapshot_memory_is_bounded
