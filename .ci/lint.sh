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
# The library alone (`-p`, `--lib`: no other member's features unify in, and
# no dev-dependency, whose self-dependency would turn on every strategy),
# with no feature, each feature alone, the default and all of them: a
# check, not tests. (`cargo hack --each-feature` from the workspace root
# built the default members with their features unified, so every
# combination compiled the same thing.)
features=$(sed -n '/^\[features\]/,/^\[/{s/^\([a-z][a-z-]*\) = .*/\1/p}' Cargo.toml)
for feature in "" $features; do
    echo "--- features: ${feature:-none}"
    cargo clippy -p interned-string-db --lib --no-default-features --features "$feature" \
        -- -D warnings
done
cargo clippy -p interned-string-db --lib -- -D warnings
