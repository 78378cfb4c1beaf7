"""`python -m extract spark-archive`: write the JVM class archives that make Spark and the source's JVM start faster."""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from extract.config.environment import extra_jars
from extract.runtime.class_archive import archive_path, source_archive_path
from extract.runtime.jars import jar_paths, source_jvm_jars
from extract.runtime.source_class_archive import write_source_archive
from extract.runtime.source_jvm import source_classpath
from extract.runtime.spark import get_spark


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m extract spark-archive",
        description="Start Spark once, run a landing-like job and write the classes it loaded to an archive "
        "that later sessions map instead of loading (JVM AppCDS); about 150 MB. Then the same for the JVM "
        "of the source's queries and small landings (the JDBC drivers' classes, and Spark's that a landing "
        "uses; about 50 MB).",
    )
    parser.add_argument("--force", action="store_true", help="write them again even if they exist")
    args = parser.parse_args(argv)
    # The archives hold for one class path: the extract's, with TIDEMARK_JARS (e.g. mssql-jdbc) if set.
    extra = extra_jars()
    jars = jar_paths(extra)
    # The source's first: once Spark has run in a process, pyspark handles every JVM's errors as its own.
    _source_archive(jars, source_jvm_jars(extra), args.force)
    _driver_archive(extra, archive_path(jars), args.force)
    return 0


def _driver_archive(extra: tuple[str, ...], path: Path, force: bool) -> None:
    if path.exists() and not force:
        print(f"Spark class archive: {path} (exists)")
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(f".{os.getpid()}.tmp")
    started = time.perf_counter()
    # The JVM writes the archive when it exits; it becomes visible under its name only then, whole.
    # Writing it lists every class it leaves out (signed jars, generated classes): errors only.
    # The archive holds classes, not compiled code nor the collector's: the quick compiler alone and a
    # single-threaded collector write the same archive, which JVMs of any options map, with half the CPU.
    spark = get_spark(
        "local[2]",
        extra,
        java_options=f"-XX:ArchiveClassesAtExit={partial} -XX:TieredStopAtLevel=1 -XX:+UseSerialGC "
        "-Xlog:disable -Xlog:all=error:stderr",
        jvm_log=path.parent / "spark-archive.log",
    )
    spark.range(0, 1000, numPartitions=2).selectExpr("id", "cast(id as string) as text").collect()
    gateway = spark.sparkContext._gateway
    assert gateway is not None, "a running session has a gateway"
    spark.stop()
    # The JVM exits when its stdin closes (pyspark's gateway protocol); wait until it has written the file.
    gateway.shutdown()
    gateway.proc.stdin.close()
    gateway.proc.wait(timeout=300)
    if not partial.exists():  # only a speed-up: everything works without it
        print("the JVM wrote no class archive; Spark starts without one", file=sys.stderr, flush=True)
        return
    partial.replace(path)
    print(f"Spark class archive: {path} ({path.stat().st_size / 2**20:,.0f} MiB, {time.perf_counter() - started:.0f}s)")


def _source_archive(jars: list[str], class_path: list[str], force: bool) -> None:
    path = source_archive_path(source_classpath(class_path))
    if path.exists() and not force:
        print(f"class archive of the source's queries: {path} (exists)")
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    loaded = write_source_archive(class_path, path, path.parent / "spark-archive.log", by_name=jars)
    if not path.exists():
        print("the JVM wrote no class archive; the source's JVM starts without one", file=sys.stderr, flush=True)
        return
    print(
        f"class archive of the source's queries: {path} ({loaded:,} classes of its drivers, and a landing's, "
        f"{path.stat().st_size / 2**20:,.0f} MiB, {time.perf_counter() - started:.0f}s)"
    )
