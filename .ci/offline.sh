#!/usr/bin/env bash
# CI job: the offline analysis of docs/offline-analysis.md, run for real in
# DuckDB and in Spark (a local session), each running the doc's own SQL.
source "$(dirname "$0")/common.sh"

# Pinned: the doc's Spark SQL is checked against this Spark. pyspark bundles
# Spark's jars (a 430 MB download); Spark 4.0 runs on Java 17 or 21.
PYSPARK_VERSION=4.0.1

step "offline analysis: DuckDB and Spark join exported dictionaries (docs/offline-analysis.md)"
command -v python3 >/dev/null || { apt-get update -qq && apt-get install -y -qq python3 python3-pip; }
java_major() { java -version 2>&1 | sed -n 's/.* version "\([0-9]*\).*/\1/p' | head -n 1; }
if ! { command -v java >/dev/null && [ "$(java_major)" -ge 17 ] 2>/dev/null; }; then
    apt-get update -qq && apt-get install -y -qq openjdk-17-jre-headless
fi
java -version 2>&1 | head -n 1
python3 -m pip install --quiet duckdb "pyspark==$PYSPARK_VERSION" \
    || python3 -m pip install --quiet --break-system-packages duckdb "pyspark==$PYSPARK_VERSION"
cargo test -p stringdb-cli --test offline -- --ignored
