#!/usr/bin/env bash
# CI job: every fuzz target, briefly.
source "$(dirname "$0")/common.sh"

step "fuzz: each target's committed corpus replayed, then 30 s per target (longer runs: docs/reliability.md)"
command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked
# The minimized corpora in fuzz/corpus/ (fuzz/long.sh grows them): every
# input there must still pass. -runs=0 runs the corpus and nothing else.
# ISDB_PRINT_STRATEGIES makes ops_model print the strategies it runs: they
# must be the crate's one list, every strategy (examples/strategies.rs).
mkdir -p target
for target in c_abi ops_model snapshot_file; do
    ISDB_PRINT_STRATEGIES=1 cargo +"$NIGHTLY" fuzz run "$target" "fuzz/corpus/$target" -- \
        -runs=0 -max_len=65536 2>&1 | tee "target/fuzz-replay-$target.log"
done
cargo run -q --example strategies | cut -f1 >target/strategies.list
sed -n 's/^ops_model strategy: //p' target/fuzz-replay-ops_model.log \
    | diff -u target/strategies.list - \
    || { echo "ops_model runs other strategies than the list (-) does (+)" >&2; exit 1; }
cargo +"$NIGHTLY" fuzz run c_abi -- -max_total_time=30 -max_len=65536
cargo +"$NIGHTLY" fuzz run ops_model -- -max_total_time=30
cargo +"$NIGHTLY" fuzz run snapshot_file -- -max_total_time=30
