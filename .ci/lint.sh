#!/usr/bin/env bash
# CI job: formatting, clippy, the docs, and the library under every feature.
source "$(dirname "$0")/common.sh"

step "fmt"
cargo fmt --all -- --check

step "clippy"
cargo clippy --workspace --all-targets -- -D warnings

step "docs"
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps

step "the library with no feature, with each feature alone, with the default and with all"
# Without dev-dependencies (the root package's dev-dependency on itself
# would turn on every strategy), and the library only: a check, not tests.
cargo hack clippy --each-feature --no-dev-deps -p interned-string-db -- -D warnings
