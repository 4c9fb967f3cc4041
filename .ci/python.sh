#!/usr/bin/env bash
# CI job: the Python package (python/): its wheel built with maturin and
# installed, then its pytest suite (with pyarrow, pandas and DuckDB, so that
# to_arrow and docs/offline-analysis.md's Python block run).
# Cold (no pip cache, an empty target directory), 77 s on a 2-vCPU VM:
# the downloads, PyO3 and the library in debug, the wheel, 64 tests in 2 s.
source "$(dirname "$0")/common.sh"

# Pinned: the versions the package was last checked with.
MATURIN_VERSION=1.16.0
PYTEST_VERSION=9.2.0
PYARROW_VERSION=26.0.1
# For the "From Python" block of docs/offline-analysis.md.
PANDAS_VERSION=3.1.1
DUCKDB_VERSION=2.0.1

step "python: the wheel built with maturin, installed, and its pytest suite"
command -v python3 >/dev/null || { apt-get update -qq && apt-get install -y -qq python3 python3-pip; }
python3 --version
pins=("maturin==$MATURIN_VERSION" "pytest==$PYTEST_VERSION" "pyarrow==$PYARROW_VERSION"
    "pandas==$PANDAS_VERSION" "duckdb==$DUCKDB_VERSION")
python3 -m pip install --quiet "${pins[@]}" \
    || python3 -m pip install --quiet --break-system-packages "${pins[@]}"
# A debug wheel: the cargo profile the other jobs built the library in, so
# only PyO3 and the bindings compile here (`pip install ./python`, the
# README's command, builds the release wheel a user gets).
wheels=target/python-wheels
rm -rf "$wheels"
python3 -m maturin build --manifest-path python/Cargo.toml --out "$wheels"
python3 -m pip install --quiet --force-reinstall "$wheels"/*.whl \
    || python3 -m pip install --quiet --break-system-packages --force-reinstall "$wheels"/*.whl
# From python/, so that `import interned_string_db` is the installed wheel.
(cd python && python3 -m pytest -q tests)
