#!/usr/bin/env bash
# CI job: the Rust examples, built and run.
source "$(dirname "$0")/common.sh"

step "Rust examples (examples/*.rs), built and run"
cargo run --example pinned_threads
cargo run --example delta_to_file target/example-deltas
