"""Spark in this process: its driver JVM with the JDBC drivers on its class path, and the session."""

from __future__ import annotations

import sys
import threading
from contextlib import suppress
from pathlib import Path
from typing import TYPE_CHECKING, Any

from py4j.protocol import Py4JError

from extract.config.environment import spark_defaults, under_spark_submit
from extract.runtime import class_archive
from extract.runtime.jars import hadoop_jars, jar_paths, source_jvm_jars
from extract.runtime.jvm_logging import driver_output, log4j_options
from extract.runtime.pyspark_import import import_pyspark
from extract.runtime.source_jvm import SourceJvm, head_start

if TYPE_CHECKING:
    from pyspark import SparkConf
    from pyspark.sql import SparkSession

#: The most of a query plan's text Spark keeps (its default has no limit).
PLAN_TEXT_CHARS = 64 * 1024


def spark_conf(
    master: str = "local[*]", extra_jars: tuple[str, ...] = (), java_options: str | None = None, verbose: bool = False
) -> SparkConf:
    """The session's settings; `java_options` for the driver JVM default to using the class archive if there is one.
    Spark logs nothing, or its errors when `verbose`."""
    import_pyspark()
    from pyspark import SparkConf

    spark_defaults()
    jars = jar_paths(extra_jars)
    extra = class_archive.java_options(jars) if java_options is None else java_options
    logging = " ".join(log4j_options(verbose))
    driver_options = f"-Duser.timezone=UTC {logging} {extra}".strip()
    executor_options = f"-Duser.timezone=UTC {logging}"
    return (
        SparkConf(loadDefaults=False)
        .setMaster(master)
        .setAppName("tidemark-extract")
        .set("spark.jars", ",".join(jars))
        # DriverManager only sees drivers on the JVM's own class path.
        .set("spark.driver.extraClassPath", ":".join(jars))
        .set("spark.sql.session.timeZone", "UTC")
        .set("spark.driver.extraJavaOptions", driver_options)
        .set("spark.executor.extraJavaOptions", executor_options)
        .set("spark.ui.enabled", "false")
        .set("spark.ui.showConsoleProgress", "false")
        .set("spark.sql.shuffle.partitions", "4")
        # A reconcile's queries list the ranges they read, up to a million numbers: Spark keeps each
        # query's plan as text, and whole texts of that size filled the driver's heap.
        .set("spark.sql.maxPlanStringLength", str(PLAN_TEXT_CHARS))
        .set("spark.sql.ui.retainedExecutions", "20")
        .set("spark.sql.execution.arrow.pyspark.enabled", "true")
    )


def _without_numpy_conversion(gateway: Any) -> None:
    """pyspark asks its converters of numpy values about every argument passed to the JVM, and they import
    pyspark.testing, and with it pandas, at the first call: 3 to 4 s of a landing of a few
    thousand rows. tidemark passes strings, numbers and Java objects; its client of the JVM goes without."""
    client = gateway._gateway_client
    converters = client.converters or []
    client.converters = [c for c in converters if not type(c).__name__.startswith("Numpy")]


class SparkRuntime:
    """Spark's driver JVM, started when first needed; Spark's context and session inside it only when first used.

    Reading the catalog and planning go through the source's JVM (`source_jvm`): the JDBC drivers, the
    landing classes and Spark's jars, without Spark's launcher and scheduler, which starts in a fraction
    of the driver's time. It also lands a batch of one partition's size (`landing_gateway`), with Spark's
    own JDBC code and no Spark job: a pass that reads only small batches starts no Spark at all. Input
    that is wrong in the seeds or on the command line is refused before any JVM starts.
    """

    def __init__(
        self,
        master: str = "local[*]",
        extra_jars: tuple[str, ...] = (),
        java_options: str | None = None,
        verbose: bool = False,
        jvm_log: Path | None = None,
    ):
        self._conf_arguments = (master, extra_jars, java_options, verbose)
        self._conf_made: SparkConf | None = None
        self._log_level = "ERROR" if verbose else "OFF"
        self._jvm_log = None if verbose else jvm_log
        self._session: SparkSession | None = None
        self._lock = threading.RLock()
        self._source = SourceJvm(source_jvm_jars(extra_jars), self._jvm_log, verbose=verbose)
        # No class archive: it is for the source's queries, which a pass makes far more often.
        self._files = SourceJvm([*jar_paths(extra_jars), *hadoop_jars()], self._jvm_log, java_options=[])

    @property
    def _conf(self) -> SparkConf:
        """Spark's settings, made when Spark is first needed: pyspark is imported then, not before."""
        with self._lock:
            if self._conf_made is None:
                self._conf_made = spark_conf(*self._conf_arguments)
            return self._conf_made

    def start(self) -> None:
        """Launch the driver JVM with the settings above (spark-submit's --conf), unless it runs."""
        import_pyspark()
        from pyspark import SparkContext
        from pyspark.java_gateway import launch_gateway

        with self._lock:
            if SparkContext._gateway is None:
                with driver_output(self._jvm_log) as popen_kwargs:
                    gateway = launch_gateway(self._conf, popen_kwargs=popen_kwargs)
                _without_numpy_conversion(gateway)
                SparkContext._ensure_initialized(gateway=gateway, conf=self._conf)

    def start_source_in_background(self) -> None:
        """Launch the JVM of the source's queries on a thread, for a command that will read the source: its
        start-up overlaps the process' own. A failure is left to the first use, which reports it."""
        if not self._spark_runs():
            self._source.start_in_background()

    @property
    def source_jvm(self) -> Any:
        """The JVM the source's own queries (clock, catalog, checks) go through: Spark's driver when it runs
        already (spark-submit started it, or a landing did), else the JVM of the JDBC drivers alone."""
        return self.jvm if self._spark_runs() else self._source.jvm

    @property
    def files_jvm(self) -> Any:
        """The JVM a file source's folder is listed and hashed in: Spark's driver when it runs already, else a
        JVM of Hadoop's filesystem classes alone (about 0.5 s against the driver's 4): a pass that finds no
        new file starts no Spark."""
        return self.jvm if self._spark_runs() else self._files.jvm

    @staticmethod
    def _spark_runs() -> bool:
        if under_spark_submit():
            return True
        if "pyspark" not in sys.modules:
            return False  # never imported in this process, so never started: not imported to ask
        from pyspark import SparkContext

        return SparkContext._gateway is not None

    def start_in_background(self) -> None:
        """Launch the driver JVM on a thread, for work that will need Spark: its start-up (a couple of
        seconds) overlaps the process' own. A failure is left to the first use, which reports it."""
        head_start(self.start, "tidemark-jvm-start")

    @property
    def landing_gateway(self) -> Any:
        """The gateway of the JVM a batch of one partition's size lands in, without a Spark job: Spark's driver
        when it runs already, else the source's JVM (about 1 s sooner than the driver's start, on a pass of
        10 small tables of 1,000)."""
        return self.gateway if self._spark_runs() else self._source.gateway

    @property
    def jvm(self) -> Any:
        import_pyspark()
        from pyspark import SparkContext

        self.start()
        return SparkContext._jvm

    @property
    def gateway(self) -> Any:
        import_pyspark()
        from pyspark import SparkContext

        self.start()
        return SparkContext._gateway

    @property
    def session(self) -> SparkSession:
        import_pyspark()
        from pyspark.sql import SparkSession

        with self._lock:
            if self._session is None:
                self.start()
                self._session = SparkSession.builder.config(conf=self._conf).getOrCreate()
                self._session.sparkContext.setLogLevel(self._log_level)
            return self._session

    def close_landing_connections(self) -> None:
        """Close the connections landings keep for their next batch (LandingConnections.java) in the JVMs
        that run: a loop may sleep longer than a server keeps them. Starts nothing."""
        driver = self.gateway if self._spark_runs() else None
        for gateway in (self._source.started, driver):
            # A JVM that is gone took its connections with it.
            with suppress(Py4JError):
                if gateway is not None:
                    gateway.jvm.tidemark.landing.LandingConnections.closeAll()

    def stop(self) -> None:
        """Stop Spark's session, if one started, and let the driver JVM exit without waiting for it. Once
        every table has landed the rest of a run (dbt's merge) needs neither, and the JVM's memory (a GB
        after a large load) is better left to the database doing the merge."""
        self._source.stop()
        self._files.stop()
        with self._lock:
            if self._session is not None:
                self._session.stop()
                self._session = None
        if "pyspark" not in sys.modules:
            return  # never imported: never started
        from pyspark import SparkContext

        gateway = SparkContext._gateway
        if gateway is None:
            return
        gateway.shutdown()
        SparkContext._gateway = None
        SparkContext._jvm = None
        process = getattr(gateway, "proc", None)
        if process is not None and process.stdin is not None:
            process.stdin.close()  # pyspark's protocol: the JVM exits when its stdin closes

    def start_session(self) -> threading.Thread:
        """Start the session in the background for a job that is known to come, and run a tiny job in
        it: a session's first job pays for starting the scheduler and the executor threads."""

        def run() -> None:
            try:
                session = self.session
                parallelism = session.sparkContext.defaultParallelism
                session.range(0, parallelism, numPartitions=parallelism).collect()
            except Exception:  # only a head start: the real job reports any real failure
                return

        thread = threading.Thread(target=run, name="tidemark-spark-start", daemon=True)
        thread.start()
        return thread


def get_spark(
    master: str = "local[*]",
    extra_jars: tuple[str, ...] = (),
    java_options: str | None = None,
    jvm_log: Path | None = None,
) -> SparkSession:
    """The session, started now."""
    return SparkRuntime(master, extra_jars, java_options, jvm_log=jvm_log).session
