"""Writing the class archive of the source's JVM (runtime/source_jvm.py): a JVM that loads every class
of its jars, and what a connection attempt needs of Java's own, then writes them at its exit.

No database is needed: every class of the JDBC drivers (and of the query class) is loaded by name,
without running it, and one connection per driver is tried on a port where nothing listens.
"""

from __future__ import annotations

import os
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from extract.runtime.source_jvm import SourceJvm

#: A URL per driver on a local port where nothing listens: the attempt loads the connection's classes.
UNREACHABLE_URLS = (
    "jdbc:postgresql://127.0.0.1:1/tidemark?connectTimeout=1",
    "jdbc:jtds:sqlserver://127.0.0.1:1/tidemark;loginTimeout=1",
    "jdbc:sqlserver://127.0.0.1:1;databaseName=tidemark;loginTimeout=1",
)


def class_names(jar: str) -> Iterator[str]:
    """The classes a jar holds, by name (the versioned copies of a multi-release jar left out)."""
    with zipfile.ZipFile(jar) as archive:
        for entry in archive.namelist():
            if entry.endswith(".class") and not entry.startswith("META-INF/") and not entry.endswith("-info.class"):
                yield entry.removesuffix(".class").replace("/", ".")


def _load_classes(jvm: Any, jars: list[str]) -> int:
    loader = jvm.java.lang.ClassLoader.getSystemClassLoader()
    loaded = 0
    for jar in jars:
        for name in class_names(jar):
            # A class whose optional dependency is not there fails, and is never used either. Once Spark
            # has run in this process, pyspark's handler of Java errors raises its own errors for this JVM.
            try:
                jvm.java.lang.Class.forName(name, False, loader)
                loaded += 1
            except Exception:
                continue
    for url in UNREACHABLE_URLS:
        try:
            jvm.java.sql.DriverManager.getConnection(url, jvm.java.util.Properties())
        except Exception:  # refused, or no such driver: what was loaded on the way is kept
            continue
    return loaded


def write_source_archive(jars: list[str], path: Path, log: Path | None = None) -> int:
    """Write the archive of a source JVM with `jars` to `path` (whole, or not at all); the classes loaded."""
    partial = path.with_suffix(f".{os.getpid()}.tmp")
    jvm = SourceJvm(jars, log, [f"-XX:ArchiveClassesAtExit={partial}", "-Xlog:disable", "-Xlog:all=error:stderr"])
    try:
        loaded = _load_classes(jvm.jvm, jars)
    finally:
        process = jvm.stop()
        if process is not None:
            process.wait(timeout=120)  # the archive is written as the JVM exits
    if partial.exists():
        partial.replace(path)
    return loaded
