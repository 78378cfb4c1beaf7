"""JVM class-data archives (AppCDS): the JVM maps classes from one instead of loading and verifying
them. Spark's driver starts in half the time with its archive; the JVM of the source's queries
(runtime/source_jvm.py) in two thirds, which is most of a pass that finds nothing to read.

`python -m extract spark-archive` (run by `make install`) writes both, once per Java, Spark and
driver jar set; a JVM uses its archive when it matches. Without one, the JVM starts as usual.
"""

from __future__ import annotations

import hashlib
import shutil
import sys
from pathlib import Path

from extract.config.environment import java_home
from extract.runtime.pyspark_files import pyspark_version

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


def _archive_file(prefix: str, keyed_by: list[str]) -> Path:
    """An archive's file inside the Python environment, named by what it holds for: this Java and `keyed_by`."""
    key = hashlib.sha256("\n".join([_java_identity(), *keyed_by]).encode()).hexdigest()[:16]
    return Path(sys.prefix) / "tidemark-spark" / f"{prefix}-{key}.jsa"


def archive_path(jars: list[str]) -> Path:
    """Where the driver's archive for this Java, this Spark and these jars lives."""
    return _archive_file("classes", [pyspark_version(), *jars])


def java_options(jars: list[str]) -> str:
    """The driver JVM's options that use the archive, or "" when there is none."""
    path = archive_path(jars)
    return f"-XX:SharedArchiveFile={path} {QUIET_JVM_LOG}" if path.exists() else ""


def source_archive_path(classpath: list[str]) -> Path:
    """Where the archive of the source's JVM for this Java and this class path lives."""
    return _archive_file("source-classes", classpath)


def source_java_options(classpath: list[str]) -> list[str]:
    """The options of the source's JVM that use its archive, or none when there is none."""
    path = source_archive_path(classpath)
    return [f"-XX:SharedArchiveFile={path}", *QUIET_JVM_LOG.split()] if path.exists() else []
