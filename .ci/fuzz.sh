#!/usr/bin/env bash
# CI job: every fuzz target, briefly.
source "$(dirname "$0")/common.sh"

step "fuzz: 30 s per target (longer runs: docs/reliability.md)"
command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked
cargo +"$NIGHTLY" fuzz run c_abi -- -max_total_time=30 -max_len=65536
cargo +"$NIGHTLY" fuzz run ops_model -- -max_total_time=30
cargo +"$NIGHTLY" fuzz run snapshot_file -- -max_total_time=30
