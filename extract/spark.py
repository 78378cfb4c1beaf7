"""One Spark session per process, with the JDBC drivers on the driver's class path."""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

from pyspark.sql import SparkSession

from extract import class_archive, landing_jar
from extract.errors import TidemarkError

# Debian's libpostgresql-jdbc-java and libjtds-java; mssql-jdbc comes through TIDEMARK_JARS.
DEFAULT_JARS = ("/usr/share/java/postgresql.jar", "/usr/share/java/jtds.jar")


def jar_paths(extra: tuple[str, ...] = ()) -> list[str]:
    """tidemark's landing jar (built if missing), the JDBC drivers that are installed, then `extra`
    (TIDEMARK_JARS), each of which must exist."""
    missing = [jar for jar in extra if not Path(jar).is_file()]
    if missing:
        raise TidemarkError(f"TIDEMARK_JARS names a jar that does not exist: {', '.join(missing)}")
    return [str(landing_jar.ensure_jar()), *(jar for jar in DEFAULT_JARS if Path(jar).exists()), *extra]


def get_spark(
    master: str = "local[*]", extra_jars: tuple[str, ...] = (), java_options: str | None = None
) -> SparkSession:
    """The session; `java_options` for the driver JVM default to using the class archive if there is one."""
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    # Workers must use this interpreter, or they miss the packages of this environment.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    jars = jar_paths(extra_jars)
    log_config = Path(__file__).with_name("log4j2.properties")
    extra = class_archive.java_options(jars) if java_options is None else java_options
    driver_options = f"-Duser.timezone=UTC -Dlog4j2.configurationFile=file:{log_config} {extra}".strip()
    executor_options = f"-Duser.timezone=UTC -Dlog4j2.configurationFile=file:{log_config}"
    builder = (
        SparkSession.builder.master(master)
        .appName("tidemark-extract")
        .config("spark.jars", ",".join(jars))
        # DriverManager only sees drivers on the JVM's own class path.
        .config("spark.driver.extraClassPath", ":".join(jars))
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.driver.extraJavaOptions", driver_options)
        .config("spark.executor.extraJavaOptions", executor_options)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
    )
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    return session


def warm_up(session: SparkSession) -> threading.Thread:
    """Run a tiny job in the background: the first job of a session pays for starting the scheduler
    and the executor threads, which an extract otherwise waits for after reading the catalog."""
    parallelism = session.sparkContext.defaultParallelism

    def run() -> None:
        try:
            session.range(0, parallelism, numPartitions=parallelism).collect()
        except Exception:  # only a head start: the real job reports any real failure
            return

    thread = threading.Thread(target=run, name="tidemark-warm-up", daemon=True)
    thread.start()
    return thread
