"""A JVM for the source's own queries (its clock, catalog, the checks of tables with nothing to read) and
for landing a batch of one partition's size: the JDBC drivers, tidemark's classes and Spark's jars, whose
JDBC code converts the rows as a Spark task would, without Spark's launcher, context or scheduler. It
starts in a fifth of the time Spark's driver takes (about 0.25 s against 1.2 s with their class archives),
so a pass that finds nothing to read, or only small batches, starts no Spark at all.

Under spark-submit, Spark's driver is already there (it started this process), and takes these queries.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path
from subprocess import Popen
from typing import Any

from py4j.java_gateway import GatewayParameters, JavaGateway, launch_gateway

from extract.config.environment import java_home, spark_defaults
from extract.core.errors import TidemarkError
from extract.runtime.class_archive import source_java_options
from extract.runtime.jvm_logging import log4j_options, source_output
from extract.runtime.pyspark_files import pyspark_dir

#: What a JDBC query needs of the JVM: the session's time zone (timestamps come back as text in it, and a
#: landing converts them in it, as Spark's driver does). Both compilers: a reconcile reads and matches
#: millions of pairs here (1% of 10,000,000 rows: 13 s for the pairs with both, 17 s with the quick one
#: alone), while a pass of small queries took as long either way (0.55 s).
JAVA_OPTIONS = ("-Duser.timezone=UTC", "-XX:+UseSerialGC", "-Xshare:auto")


def py4j_jar() -> str:
    """py4j's gateway classes, as pyspark ships them (the same version as the Python side)."""
    found = sorted((pyspark_dir() / "jars").glob("py4j-*.jar"))
    return str(found[-1]) if found else ""


def source_classpath(jars: list[str]) -> list[str]:
    """The class path of a JVM of the source's queries: py4j's gateway, then `jars`."""
    return [py4j_jar(), *jars]


def head_start(start: Callable[[], None], name: str) -> None:
    """`start()` on a daemon thread, its failure ignored: the first real use starts again and reports it."""

    def run() -> None:
        try:
            start()
        except Exception:  # only a head start
            return

    threading.Thread(target=run, name=name, daemon=True).start()


class SourceJvm:
    """The JVM, started on first use (or in the background, `start_in_background`); `stop` lets it go."""

    def __init__(
        self, jars: list[str], log: Path | None = None, java_options: list[str] | None = None, verbose: bool = False
    ) -> None:
        """`java_options` are added to the JVM's own; by default, those that map its class archive if there is one.
        Spark's classes log their errors when `verbose`, else nothing."""
        self._jars = jars
        self._log = log
        self._verbose = verbose
        self._java_options = source_java_options(source_classpath(jars)) if java_options is None else java_options
        self._gateway: JavaGateway | None = None
        self._process: Popen[bytes] | None = None
        self._lock = threading.Lock()

    def start(self) -> None:
        with self._lock:
            if self._gateway is not None:
                return
            home = java_home()
            java = str(home / "bin" / "java") if home else "java"
            spark_defaults()  # the variables Spark's classes read, as its driver has them
            try:
                with source_output(self._log) as output:
                    port, token, self._process = launch_gateway(
                        jarpath=py4j_jar(),
                        classpath=os.pathsep.join(self._jars),
                        javaopts=[*JAVA_OPTIONS, *log4j_options(self._verbose), *self._java_options],
                        die_on_exit=True,
                        redirect_stderr=output,
                        java_path=java,
                        enable_auth=True,
                        return_proc=True,
                    )
            except Exception as exc:  # py4j's own errors, or the java binary's
                raise TidemarkError(f"cannot start a JVM ({java}) for the source's queries: {exc}") from None
            # No automatic conversion: the queries pass strings alone, and pyspark's converters, asked about
            # every argument once registered, import pandas (most of a second) on their first call.
            self._gateway = JavaGateway(gateway_parameters=GatewayParameters(port=port, auth_token=token))

    def start_in_background(self) -> None:
        """Start it on a thread; a failure is left to the first use, which reports it."""
        head_start(self.start, "tidemark-source-jvm-start")

    @property
    def gateway(self) -> JavaGateway:
        self.start()
        assert self._gateway is not None
        return self._gateway

    @property
    def jvm(self) -> Any:
        return self.gateway.jvm

    @property
    def started(self) -> JavaGateway | None:
        """The gateway if the JVM was started, without starting it."""
        return self._gateway

    def stop(self) -> Popen[bytes] | None:
        """Let the JVM exit, without waiting for it; its process, for a caller that must."""
        with self._lock:
            gateway, process = self._gateway, self._process
            self._gateway = self._process = None
        if gateway is not None:
            gateway.shutdown()
        if process is not None and process.stdin is not None:
            process.stdin.close()  # --die-on-broken-pipe: the JVM exits when its stdin closes
        return process
