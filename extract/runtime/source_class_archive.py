"""Writing the class archive of the source's JVM (runtime/source_jvm.py): a JVM that loads every class of
the JDBC drivers and tidemark's landing jar, what a connection attempt needs of Java's own, and what
landing a batch needs of Spark's, then writes them at its exit.

No database is needed: the drivers' classes are loaded by name, without running them; one connection per
driver is tried on a port where nothing listens; and a batch is landed from a table in memory (Derby,
which Spark ships) towards such a port. Spark's classes are initialised as they load (its settings,
dialects, row converters: most of a first landing's second), so they are learnt by running them.
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


#: A column of each type a batch commonly holds: Derby's type, a value of it, the type it lands in.
TRAINING_COLUMNS = (
    ("integer", "1", "integer"),
    ("bigint", "2", "bigint"),
    ("smallint", "3", "smallint"),
    ("decimal(12, 2)", "4.5", "numeric(12,2)"),
    ("double", "6.5", "double precision"),
    ("real", "7.5", "real"),
    ("varchar(20)", "'x'", "varchar(20)"),
    ("char(3)", "'abc'", "char(3)"),
    ("date", "date('2024-01-02')", "date"),
    ("timestamp", "timestamp('2024-01-02 03:04:05.123456')", "timestamp"),
    ("time", "time('01:02:03')", "time"),
    ("boolean", "true", "boolean"),
    ("varchar(8) for bit data", "x'0102'", "bytea"),
    ("clob", "'text'", "text"),
)
TRAINING_URL = "jdbc:derby:memory:tidemark_archive;create=true"


def _land_a_batch(gateway: Any) -> None:
    """Land a row of TRAINING_COLUMNS from Derby towards a port where nothing listens: Spark's JDBC code
    resolves the relation and makes the rows' converters before the COPY fails to connect. Nothing is
    learnt where Derby or Spark is not on the class path."""
    jvm = gateway.jvm
    try:
        table = jvm.java.sql.DriverManager.getConnection(TRAINING_URL, jvm.java.util.Properties())
        statement = table.createStatement()
        columns = ", ".join(f"c{i} {kind}" for i, (kind, _, _) in enumerate(TRAINING_COLUMNS))
        statement.execute(f"create table batch ({columns})")
        statement.execute(f"insert into batch values ({', '.join(value for _, value, _ in TRAINING_COLUMNS)})")
        table.close()
        target_types = gateway.new_array(jvm.String, len(TRAINING_COLUMNS))
        for i, (_, _, target) in enumerate(TRAINING_COLUMNS):
            target_types[i] = target
        none = jvm.java.util.Properties()
        relation, copy, mark = "(select * from batch) as b", "copy t from stdin", "select 1"
        jvm.tidemark.landing.DriverLanding.land(
            TRAINING_URL, none, relation, "1 = 1", target_types, UNREACHABLE_URLS[0], none, copy, mark, 0, True, 1
        )
    except Exception:  # the COPY cannot connect (nor start, without Derby or Spark): what loaded is kept
        return


def write_source_archive(jars: list[str], path: Path, log: Path | None = None, by_name: list[str] | None = None) -> int:
    """Write the archive of a source JVM of class path `jars` to `path` (whole, or not at all), from every
    class of `by_name` (by default, of `jars`) and a batch landed; the classes loaded by name."""
    partial = path.with_suffix(f".{os.getpid()}.tmp")
    jvm = SourceJvm(jars, log, [f"-XX:ArchiveClassesAtExit={partial}", "-Xlog:disable", "-Xlog:all=error:stderr"])
    try:
        loaded = _load_classes(jvm.jvm, jars if by_name is None else by_name)
        _land_a_batch(jvm.gateway)
    finally:
        process = jvm.stop()
        if process is not None:
            process.wait(timeout=120)  # the archive is written as the JVM exits
    if partial.exists():
        partial.replace(path)
    return loaded
