#!/usr/bin/env bash
# CI job: the #[ignore]d stress and fault tests, at scale, in release.
source "$(dirname "$0")/common.sh"

step "stress and faults at scale (release, the #[ignore]d tests)"
# The modules stress and faults of the one integration-test binary (tests/it/).
cargo test --release --test it -- --ignored --nocapture --test-threads 1 stress:: faults::
