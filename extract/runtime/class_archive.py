"""A JVM class-data archive (AppCDS) for Spark's driver: the JVM maps Spark's classes from it
instead of loading and verifying them, which halves the time a Spark session takes to start.

`python -m extract spark-archive` (run by `make install`) writes it once per Java, Spark and
driver jar set; `get_spark` uses it when it matches. Without one, Spark starts as usual.
"""

from __future__ import annotations

import hashlib
import shutil
import sys
from pathlib import Path

import pyspark

from extract.config.environment import java_home

#: JVM messages (a stale archive is only a warning) go to stderr, never into stdout's --json.
QUIET_JVM_LOG = "-Xlog:disable -Xlog:all=warning:stderr"


def _java_identity() -> str:
    """The java binary pyspark starts (JAVA_HOME's, else the one on PATH), resolved, with its size and
    time: it names the installed JVM without starting one, which would cost every session a JVM start."""
    home = java_home()
    found = str(home / "bin" / "java") if home else shutil.which("java")
    if not found or not Path(found).exists():
        return "unknown"
    binary = Path(found).resolve()
    stat = binary.stat()
    return f"{binary} {stat.st_size} {stat.st_mtime_ns}"


def archive_path(jars: list[str]) -> Path:
    """Where the archive for this Java, this Spark and these jars lives (inside the Python environment)."""
    key = hashlib.sha256("\n".join([_java_identity(), pyspark.__version__, *jars]).encode()).hexdigest()[:16]
    return Path(sys.prefix) / "tidemark-spark" / f"classes-{key}.jsa"


def java_options(jars: list[str]) -> str:
    """The driver JVM's options that use the archive, or "" when there is none."""
    path = archive_path(jars)
    return f"-XX:SharedArchiveFile={path} {QUIET_JVM_LOG}" if path.exists() else ""
