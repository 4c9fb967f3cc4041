#!/usr/bin/env bash
# CI job: the C tests and the C example, under valgrind and under ASan.
source "$(dirname "$0")/common.sh"

step "C tests and example under valgrind, then AddressSanitizer"
tests/c/run.sh --valgrind
tests/c/run.sh --asan
