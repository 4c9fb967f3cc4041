"""The DuckDB half of the offline-analysis check (run by
cli/tests/offline.rs): writes the trace's events, whose ids are computed
independently of the Rust code, to Parquet, runs the SQL of the doc's DuckDB
section exactly as the doc has it, and checks and prints what its two
queries returned (offline_check.run_doc_sql).

Usage, in the folder that holds dict/host*.parquet:
    duckdb_join.py DOC EVENT_NAMES_FILE
"""

import os
import sys

import duckdb

from offline_check import load_events, run_doc_sql


def main():
    doc, event_names = sys.argv[1], sys.argv[2]
    events = load_events(event_names)
    db = duckdb.connect()
    # The trace, as a runtime would leave it: Parquet files of events that
    # carry only ids, in two parts for the doc's glob to gather.
    os.makedirs("trace", exist_ok=True)
    half = len(events) // 2
    for part, rows in enumerate((events[:half], events[half:])):
        db.execute("CREATE TABLE part (timestamp BIGINT, id UBIGINT, duration BIGINT)")
        db.executemany("INSERT INTO part VALUES (?, ?, ?)", [e[:3] for e in rows])
        db.execute(f"COPY part TO 'trace/events-{part}.parquet' (FORMAT parquet)")
        db.execute("DROP TABLE part")
    run_doc_sql(doc, "DuckDB", events, lambda sql: db.execute(sql).fetchall())


if __name__ == "__main__":
    main()
