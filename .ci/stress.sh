#!/usr/bin/env bash
# CI job: the #[ignore]d stress and fault tests, at scale, in release.
source "$(dirname "$0")/common.sh"

step "stress and faults at scale (release, the #[ignore]d tests)"
cargo test --release --test stress --test faults -- --ignored --nocapture --test-threads 1
