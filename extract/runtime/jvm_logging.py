"""What the JVMs tidemark starts log, and where: Spark's classes (in Spark's driver, or in the source's JVM
that lands small batches with Spark's JDBC code) nothing, or their errors with --verbose, as
log4j2.properties here says; the driver's own output in the JVM log."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any


def log4j_options(verbose: bool) -> list[str]:
    """The JVM options that configure log4j; none when the package runs from a zip (spark-submit
    --py-files), where spark-submit set up the JVM."""
    config = Path(__file__).with_name("log4j2.properties")
    if not config.is_file():
        return []
    return [f"-Dlog4j2.configurationFile=file:{config}", f"-Dtidemark.log.level={'error' if verbose else 'off'}"]


@contextmanager
def _appended(path: Path | None, mode: str) -> Iterator[IO[Any] | None]:
    """`path` opened to append to (its folder made), or None for no path."""
    if path is None:
        yield None
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open(mode) as log:
        yield log


@contextmanager
def driver_output(path: Path | None) -> Iterator[dict[str, Any]]:
    """How the JVM is launched: with its stdout and stderr in `path` (None: this process's own). The
    JVM's and Spark's start-up notices (incubator modules, the default log level) are not for the user;
    a crash of the JVM is kept there. Nor does the JVM hold this process's stdout open: whoever reads it
    (a pipe, a scheduler) sees its end when this process exits, not when the JVM has shut down after it.
    Only the child's descriptors are set, so the JVM may start while this process prints."""
    with _appended(path, "ab") as log:
        yield {} if log is None else {"stdout": log, "stderr": log}


@contextmanager
def source_output(path: Path | None) -> Iterator[IO[Any]]:
    """Where the source's JVM's messages go: the JVM log (appended), or this process's stderr."""
    with _appended(path, "a") as log:
        yield sys.stderr if log is None else log
