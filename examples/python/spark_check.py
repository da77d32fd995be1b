"""Checks a file of URLs against a phishbloom blocklist with PySpark.

The list file is shipped to every executor with ``SparkContext.addFile``; each partition opens it
once (``phishbloom.Blocklist.open(SparkFiles.get(name))``) and answers every Arrow batch of URLs
with one ``Blocklist.check_many`` call, through ``DataFrame.mapInArrow``. The result — url,
verdict, listed, entry, entry_kind, categories, the fields of ``phishbloom check --json`` — is
written as Parquet (or CSV, categories joined by commas, when OUT ends in ``.csv``), and the
counts of rows and listed rows are printed.

Run::

    python examples/python/spark_check.py --list phishing.bloom --input urls.txt \\
        --output verdicts.parquet [--master local[2]]

``urls.txt`` holds one URL per line. Build a list with ``phishbloom build LIST -o phishing.bloom``.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Callable, Iterator

import pyarrow as pa
from pyspark import SparkFiles
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

import phishbloom

# The columns written: the URL and check --json's fields for it.
VERDICT_SCHEMA = (
    "url string, verdict string, listed boolean, entry string, entry_kind string, "
    "categories array<string>"
)
VERDICT_FIELDS = ["verdict", "listed", "entry", "entry_kind", "categories"]


def parse_args() -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--list", required=True, help="the blocklist file (phishbloom build)")
    parser.add_argument("--input", required=True, help="a text file of URLs, one per line")
    parser.add_argument("--output", required=True, help="where to write (Parquet, or .csv)")
    parser.add_argument("--master", default="local[2]", help="the Spark master (default local[2])")
    return parser.parse_args()


Batches = Iterator[pa.RecordBatch]


def verdicts(list_name: str) -> Callable[[Batches], Batches]:
    """The ``mapInArrow`` function: opens the shipped list once per partition and answers each
    batch of URLs with one ``check_many`` call."""

    def answer(batches: Batches) -> Batches:
        blocklist = phishbloom.Blocklist.open(SparkFiles.get(list_name))
        for batch in batches:
            urls = batch.column("url")
            # Spark runs a task per core already: one thread per task.
            answers = blocklist.check_many(urls, threads=1)
            columns = [urls] + [answers.column(field) for field in VERDICT_FIELDS]
            yield pa.RecordBatch.from_arrays(columns, names=["url"] + VERDICT_FIELDS)

    return answer


def check(spark: SparkSession, list_path: str, input_path: str) -> DataFrame:
    """The verdict of every line of ``input_path`` against the list at ``list_path``."""
    spark.sparkContext.addFile(os.path.abspath(list_path))
    urls = spark.read.text(input_path).withColumnRenamed("value", "url")
    return urls.mapInArrow(verdicts(os.path.basename(list_path)), VERDICT_SCHEMA)


def write(result: DataFrame, output: str) -> None:
    """Writes the verdicts as Parquet, or as CSV with a header when ``output`` ends in .csv."""
    if output.endswith(".csv"):
        flat = result.withColumn("categories", F.concat_ws(",", "categories"))
        flat.write.mode("overwrite").option("header", True).csv(output)
    else:
        result.write.mode("overwrite").parquet(output)


def main() -> None:
    """Checks, writes, and prints the counts of rows and listed rows."""
    args = parse_args()
    if args.master.startswith("local"):
        # Local workers run this interpreter, which has phishbloom, unless told otherwise.
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    spark = SparkSession.builder.master(args.master).appName("phishbloom-check").getOrCreate()
    try:
        # Cached: the write computes the verdicts once, and the counts read them back.
        result = check(spark, args.list, args.input).cache()
        write(result, args.output)
        counts = result.agg(
            F.count("*").alias("rows"), F.sum(F.col("listed").cast("long")).alias("listed")
        ).first()
        print(f"rows: {counts['rows']}, listed: {counts['listed'] or 0}")
    finally:
        spark.stop()


if __name__ == "__main__":
    main()
