#!/usr/bin/env bash
# CI job: the offline analysis of docs/offline-analysis.md, in DuckDB.
source "$(dirname "$0")/common.sh"

step "offline analysis: DuckDB joins exported dictionaries (docs/offline-analysis.md)"
command -v python3 >/dev/null || { apt-get update -qq && apt-get install -y -qq python3 python3-pip; }
python3 -m pip install --quiet duckdb \
    || python3 -m pip install --quiet --break-system-packages duckdb
cargo test -p stringdb-cli --test duckdb -- --ignored
