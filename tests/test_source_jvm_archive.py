"""The class archive of the JVM for the source's queries and small landings: written without a database,
from every class of the JDBC drivers and what a landing loads of Spark's, and mapped by a JVM of that
class path (which then starts in two thirds of the time)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from extract.config.urls import parse_url
from extract.core.errors import TidemarkError
from extract.runtime.jars import jar_paths, source_jvm_jars
from extract.runtime.source_class_archive import class_names, write_source_archive
from extract.runtime.source_jvm import SourceJvm
from extract.source.jdbc import JdbcConnection


def test_a_jvm_of_the_same_class_path_maps_the_archive_and_queries(pg_admin_url: str, tmp_path: Path) -> None:
    jars = jar_paths()
    archive = tmp_path / "source.jsa"
    loaded = write_source_archive(jars, archive)
    assert archive.is_file() and not list(tmp_path.glob("*.tmp"))
    assert loaded >= sum(1 for _ in class_names("/usr/share/java/postgresql.jar"))

    # -Xshare:on: a JVM that cannot map the archive refuses to start instead of starting without it.
    mapped = SourceJvm(jars, java_options=[f"-XX:SharedArchiveFile={archive}", "-Xshare:on"])
    try:
        with JdbcConnection(mapped.jvm, parse_url(pg_admin_url)) as conn:
            assert conn.query("select ? || 'k'", ["o"]) == [("ok",)]
    finally:
        stopped = mapped.stop()
        assert stopped is not None and stopped.wait(timeout=60) == 0

    other_path = SourceJvm(jars[1:], java_options=[f"-XX:SharedArchiveFile={archive}", "-Xshare:on"])
    with pytest.raises(TidemarkError, match="cannot start a JVM"):
        other_path.jvm  # noqa: B018 (the JVM starts on first use)


def test_the_archive_holds_what_a_landing_initialises_of_spark(tmp_path: Path) -> None:
    """Spark's classes run their initialisers as they load (its settings, its JDBC dialects), most of a first
    landing's second without them: the archive learns them from a batch landed from a table in memory."""
    jars = source_jvm_jars()
    archive = tmp_path / "source.jsa"
    by_name = jar_paths()
    assert write_source_archive(jars, archive, by_name=by_name) == sum(len(list(class_names(j))) for j in by_name)
    loading = tmp_path / "loading.log"
    options = [f"-XX:SharedArchiveFile={archive}", "-Xshare:on", f"-Xlog:class+load=info:file={loading}"]
    landed = (
        "org.apache.spark.sql.execution.datasources.jdbc.JdbcUtils$",
        "org.apache.spark.sql.internal.SQLConf$",
        "org.apache.spark.sql.jdbc.JdbcDialects$",
        "tidemark.landing.CopyLanding",
    )
    mapped = SourceJvm(jars, java_options=options)
    try:
        for name in landed:
            mapped.jvm.java.lang.Class.forName(name)
    finally:
        stopped = mapped.stop()
        assert stopped is not None and stopped.wait(timeout=60) == 0
    sources = dict(re.findall(r"\[class,load\] (\S+) source: (.*)", loading.read_text()))
    for name in landed:
        assert "shared objects file" in sources.get(name, ""), (name, sources.get(name))
