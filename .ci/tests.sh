#!/usr/bin/env bash
# CI job: the README's test command.
source "$(dirname "$0")/common.sh"

step "tests (the README's test command)"
cargo test --workspace
