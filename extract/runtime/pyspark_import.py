"""pyspark's import, made safe for threads: a command imports it only when it starts Spark, and that
can happen on several threads at once (the driver's head start, a table's landing)."""

from __future__ import annotations

import threading

_IMPORTING = threading.Lock()


def import_pyspark() -> None:
    """Import pyspark, once and on one thread at a time. Its packages import one another, and a thread
    that imports one while another thread is half way through it can find it half initialised: "cannot
    import name 'SparkSession' from 'pyspark.sql'" (a table's landing beside the driver's start)."""
    with _IMPORTING:
        import pyspark.java_gateway
        import pyspark.sql  # noqa: F401
