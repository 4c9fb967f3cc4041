#!/usr/bin/env bash
# CI job: Miri over the unit tests of the two crates with unsafe code: the
# library (its unsafe module, src/raw/, included) and the C ABI crate. Not
# the whole workspace: perf's and the CLI's tests touch the file system,
# which Miri's isolation refuses, and have no unsafe code of their own.
#
# Miri interprets on one core, whatever --test-threads says, and the
# library's unit tests took 19 of CI's minutes in one process; so they run
# as two processes side by side on the machine's two cores: the shards'
# unit tests (`shard::tests::`, the longest) in one, every other test in
# the other.
source "$(dirname "$0")/common.sh"

step "miri over the unit tests of the library (src/raw/) and of capi/"
export MIRIFLAGS="-Zmiri-strict-provenance"
miri() { cargo +"$NIGHTLY" miri test -p interned-string-db -p interned-string-db-capi --lib "$@"; }
miri --no-run
shard=shard::tests::
mkdir -p target
miri -- "$shard" >target/miri-shard.log 2>&1 &
shard_run=$!
status=0
miri -- --skip "$shard" || status=$?
wait "$shard_run" || status=$?
cat target/miri-shard.log
exit "$status"
