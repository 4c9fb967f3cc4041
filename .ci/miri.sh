#!/usr/bin/env bash
# CI job: Miri over the unit tests of the two crates with unsafe code: the
# library (its unsafe module, src/raw/, included) and the C ABI crate. Not
# the whole workspace: perf's and the CLI's tests touch the file system,
# which Miri's isolation refuses, and have no unsafe code of their own.
#
# Miri interprets on one core, whatever --test-threads says, and the
# library's unit tests took 19 of CI's minutes in one process; so they run
# as two processes side by side on the machine's two cores: the shards'
# unit tests (`shard::tests::`, the longest) and the by-id table's in one,
# every other test in the other. (Measured 2026-12-05 on the 2-core VM:
# the shards' 7.3 minutes; the others 10.3, of which the by-id table's
# 1.5. So the two halves end about together.)
source "$(dirname "$0")/common.sh"

step "miri over the unit tests of the library (src/raw/) and of capi/"
export MIRIFLAGS="-Zmiri-strict-provenance"
miri() { cargo +"$NIGHTLY" miri test -p interned-string-db -p interned-string-db-capi --lib "$@"; }
miri --no-run
first=(shard::tests:: id_table::tests::)
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
