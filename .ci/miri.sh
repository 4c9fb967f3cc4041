#!/usr/bin/env bash
# CI job: Miri over the library's unit tests (the unsafe module's included).
source "$(dirname "$0")/common.sh"

step "miri over the unsafe module's unit tests"
MIRIFLAGS="-Zmiri-strict-provenance" cargo +"$NIGHTLY" miri test --lib
