#!/usr/bin/env bash
# CI job: every fuzz target, briefly.
source "$(dirname "$0")/common.sh"

step "fuzz: each target's committed corpus replayed, then 30 s per target (longer runs: docs/reliability.md)"
command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked
# The minimized corpora in fuzz/corpus/ (fuzz/long.sh grows them): every
# input there must still pass. -runs=0 runs the corpus and nothing else.
for target in c_abi ops_model snapshot_file; do
    cargo +"$NIGHTLY" fuzz run "$target" "fuzz/corpus/$target" -- -runs=0 -max_len=65536
done
cargo +"$NIGHTLY" fuzz run c_abi -- -max_total_time=30 -max_len=65536
cargo +"$NIGHTLY" fuzz run ops_model -- -max_total_time=30
cargo +"$NIGHTLY" fuzz run snapshot_file -- -max_total_time=30
