#!/usr/bin/env bash
# CI job: Miri over the unit tests of the two crates with unsafe code: the
# library (its unsafe module, src/raw/, included) and the C ABI crate. Not
# the whole workspace: perf's and the CLI's tests touch the file system,
# which Miri's isolation refuses, and have no unsafe code of their own.
source "$(dirname "$0")/common.sh"

step "miri over the unit tests of the library (src/raw/) and of capi/"
MIRIFLAGS="-Zmiri-strict-provenance" \
    cargo +"$NIGHTLY" miri test -p interned-string-db -p interned-string-db-capi --lib
