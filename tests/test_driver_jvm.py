"""The Spark driver JVM tidemark starts: room for a reconcile of dense differences on a large table, whose
queries list up to a million ranges of the hash space."""

from __future__ import annotations

import subprocess
import sys

from pyspark.sql import SparkSession

from extract.config.urls import parse_url
from extract.runtime.spark import PLAN_TEXT_CHARS, SparkRuntime
from tests.conftest import REPO

GIB = 1024**3


def test_the_driver_has_a_heap_of_two_gigabytes(spark: SparkSession) -> None:
    jvm = spark.sparkContext._jvm
    assert jvm is not None
    assert jvm.java.lang.Runtime.getRuntime().maxMemory() >= 1.8 * GIB


def test_a_query_of_megabytes_leaves_a_short_plan_text(spark: SparkSession, pg_admin_url: str) -> None:
    """Spark keeps the plan of each query it ran as text, for its UI; a reconcile's level lists a million
    ranges (megabytes of SQL), and the plans' whole texts filled the driver's heap. What is kept is what
    counts: the text of a plan printed from another thread follows that thread's settings."""
    session = SparkRuntime("local[2]").session
    listed = ",".join(str(n) for n in range(0, 3_000_000, 3))
    query = f"select n from generate_series(1, 10) as n where n = any(cast('{{{listed}}}' as bigint[]))"
    assert len(query) > 5_000_000
    url = parse_url(pg_admin_url)
    frame = session.read.jdbc(url.jdbc_url, f"({query}) as listed", properties=url.jdbc_properties())
    assert sorted(row.n for row in frame.collect()) == [3, 6, 9]
    kept = session._jsparkSession.sharedState().statusStore().executionsList()
    plans = [kept.apply(index).physicalPlanDescription() for index in range(kept.size())]
    listing = [plan for plan in plans if "generate_series" in plan]
    assert listing, "the query's plan is among those Spark kept"
    assert max(len(plan) for plan in listing) <= PLAN_TEXT_CHARS + 1000


_FIRST_CALL = """
import sys
from extract.runtime.spark import SparkRuntime
runtime = SparkRuntime("local[1]")
properties = runtime.jvm.java.util.Properties()
properties.setProperty("fetchsize", "1000")
assert properties.getProperty("fetchsize") == "1000"
print("pandas" in sys.modules)
"""


def test_passing_values_to_the_driver_imports_no_pandas() -> None:
    """pyspark's converters of numpy values import pandas when first asked about an argument: seconds of a
    small landing, which passes strings and numbers alone."""
    found = subprocess.run(
        [sys.executable, "-c", _FIRST_CALL], cwd=REPO, capture_output=True, text=True, timeout=120, check=False
    )
    assert found.returncode == 0, found.stderr[-2000:]
    assert found.stdout.strip() == "False"
