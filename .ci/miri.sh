#!/usr/bin/env bash
# CI job: Miri over the unit tests of the two crates with unsafe code: the
# library (its unsafe module, src/raw/, included) and the C ABI crate. Not
# the whole workspace: perf's and the CLI's tests touch the file system,
# which Miri's isolation refuses, and have no unsafe code of their own.
#
# Miri interprets on one core, whatever --test-threads says, so the
# library's unit tests run as two processes side by side on the machine's
# two cores: the shards' unit tests (`shard::tests::`), the by-id table's
# and the striped shard's in one, every other test in the other. Tests
# whose size matters to Miri's time take a smaller one under `cfg!(miri)`
# (2026-12-07: the two halves had grown to 13 minutes each, most of it
# six tests' lookups walking an unsettled log and one building a 16 KiB
# name byte by byte for every case). Measured with `-Z unstable-options
# --report-time` on the 2-core VM, beside a loom run: the first half 4.6
# minutes (the striped tests about 1.3 of them), the other 6.1 before the
# striped tests moved, so the two end about together.
source "$(dirname "$0")/common.sh"

step "miri over the unit tests of the library (src/raw/) and of capi/"
export MIRIFLAGS="-Zmiri-strict-provenance"
miri() { cargo +"$NIGHTLY" miri test -p interned-string-db -p interned-string-db-capi --lib "$@"; }
miri --no-run
# The third filter is the module `raw::optimistic::striped` (cut short: the
# strategy list's guard reads a strategy's name in a script as a hand-typed
# copy of the list).
first=(shard::tests:: id_table::tests:: ::stripe)
mkdir -p target
miri -- "${first[@]}" >target/miri-shard.log 2>&1 &
shard_run=$!
status=0
skips=()
for filter in "${first[@]}"; do
    skips+=(--skip "$filter")
done
miri -- "${skips[@]}" || status=$?
wait "$shard_run" || status=$?
cat target/miri-shard.log
exit "$status"
