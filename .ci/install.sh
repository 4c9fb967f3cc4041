#!/usr/bin/env bash
# CI job: installs what the other jobs need, and checks the toolchains.
source "$(dirname "$0")/common.sh"

step "install"
rustup component add rustfmt clippy
if ! command -v valgrind >/dev/null || ! command -v gcc >/dev/null; then
    apt-get update -qq && apt-get install -y -qq valgrind gcc
fi
# The pinned nightly: the image's nightly when it is that date (linked under
# the pinned name, since this machine cannot fetch toolchains), else that
# nightly installed where rustup can fetch it.
if ! rustc "+$NIGHTLY" -V >/dev/null 2>&1; then
    if rustc +nightly -V 2>/dev/null | grep -q "$NIGHTLY_DATE"; then
        rustup component add miri rust-src --toolchain nightly
        rustup toolchain link "$NIGHTLY" "$(rustc +nightly --print sysroot)"
    else
        rustup toolchain install "nightly-$NIGHTLY_DATE" --profile minimal --component miri,rust-src
        rustup toolchain link "$NIGHTLY" "$(rustc "+nightly-$NIGHTLY_DATE" --print sysroot)"
    fi
fi
rustc "+$NIGHTLY" -V
# The declared minimum Rust version (Cargo.toml's rust-version) is the one
# every job but the nightly ones builds with.
MSRV=$(sed -n 's/^rust-version = "\(.*\)"/\1/p' Cargo.toml)
rustc -V | grep -q "^rustc $MSRV[. ]" \
    || { echo "stable is $(rustc -V), but Cargo.toml declares rust-version $MSRV"; exit 1; }
