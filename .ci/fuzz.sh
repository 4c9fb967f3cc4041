#!/usr/bin/env bash
# CI job: every fuzz target, briefly.
source "$(dirname "$0")/common.sh"

step "fuzz: each target's committed corpus replayed, then 45 s of the three side by side (longer runs: docs/reliability.md)"
command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked
# The minimized corpora in fuzz/corpus/ (fuzz/long.sh grows them): every
# input there must still pass. -runs=0 runs the corpus and nothing else.
# ISDB_PRINT_STRATEGIES makes ops_model print the strategies it runs: they
# must be the crate's one list, every strategy (examples/strategies.rs).
mkdir -p target
targets=(c_abi ops_model snapshot_file)
for target in "${targets[@]}"; do
    ISDB_PRINT_STRATEGIES=1 cargo +"$NIGHTLY" fuzz run "$target" "fuzz/corpus/$target" -- \
        -runs=0 -max_len=65536 2>&1 | tee "target/fuzz-replay-$target.log"
done
cargo run -q --example strategies | cut -f1 >target/strategies.list
sed -n 's/^ops_model strategy: //p' target/fuzz-replay-ops_model.log \
    | diff -u target/strategies.list - \
    || { echo "ops_model runs other strategies than the list (-) does (+)" >&2; exit 1; }
# The three campaigns side by side: 45 s of wall clock each on CI's two
# cores is about the 30 s of one core each that they had one after the
# other, in half the time. Each writes its own log, printed after; any
# failure fails the job. New inputs go to target/fuzz-new-<target> (the
# first corpus directory), not into the committed corpus. A campaign
# loads the committed corpus as well, except `ops_model`'s: replaying its
# corpus alone takes 45 to 64 s here (done above), which would leave its
# campaign no time to fuzz, so it starts from nothing.
status=0
pids=()
for target in "${targets[@]}"; do
    fresh="target/fuzz-new-$target"
    rm -rf "$fresh" && mkdir -p "$fresh"
    corpora=("$fresh")
    [ "$target" = ops_model ] || corpora+=("fuzz/corpus/$target")
    args=(-max_total_time=45)
    [ "$target" = c_abi ] && args+=(-max_len=65536)
    cargo +"$NIGHTLY" fuzz run "$target" "${corpora[@]}" -- "${args[@]}" \
        >"target/fuzz-run-$target.log" 2>&1 &
    pids+=("$!")
done
for pid in "${pids[@]}"; do
    wait "$pid" || status=$?
done
for target in "${targets[@]}"; do
    printf '\n=== fuzz %s\n' "$target"
    tail -n 40 "target/fuzz-run-$target.log"
done
exit "$status"
