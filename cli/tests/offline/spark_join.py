"""The Spark half of the offline-analysis check (run by cli/tests/offline.rs):
on a local Spark session, writes the trace's events, whose ids are computed
independently of the Rust code, to Parquet, runs the Spark SQL of the doc
exactly as the doc has it, and checks and prints what its two queries
returned (offline_check.run_doc_sql).

Usage, in the folder that holds dict/host*.parquet:
    spark_join.py DOC EVENT_NAMES_FILE
"""

import os
import sys

from pyspark.sql import SparkSession

from offline_check import as_signed, load_events, run_doc_sql


def local_session():
    """Two cores, no web UI and no progress bars, two shuffle partitions (the
    default 200 would make the small joins here slow), on the loopback
    address only, warnings only."""
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    spark = (
        SparkSession.builder.master("local[2]")
        .appName("stringdb offline-analysis check")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("WARN")
    # A glob in a view's path makes this logger warn, with a stack trace,
    # that no file has the glob's literal name: true, and no news.
    log4j = spark._jvm.org.apache.logging.log4j
    log4j.core.config.Configurator.setLevel(
        "org.apache.spark.sql.execution.streaming.FileStreamSink", log4j.Level.ERROR
    )
    return spark


def main():
    doc, event_names = sys.argv[1], sys.argv[2]
    events = load_events(event_names)
    spark = local_session()
    try:
        # The trace, as a JVM runtime would leave it: Parquet files of events
        # that carry only ids, as signed BIGINTs with the ids' bits, in two
        # parts for the doc's glob to gather.
        half = len(events) // 2
        for part, rows in enumerate((events[:half], events[half:])):
            spark.createDataFrame(
                [(t, as_signed(i), d) for t, i, d, _ in rows],
                "timestamp BIGINT, id BIGINT, duration BIGINT",
            ).write.mode("overwrite").parquet(f"trace/events-{part}.parquet")
        run_doc_sql(doc, "Spark SQL", events, lambda sql: spark.sql(sql).collect())
    finally:
        spark.stop()


if __name__ == "__main__":
    main()
