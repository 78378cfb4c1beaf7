"""The class archive of the JVM for the source's queries: written without a database, from every class of
the JDBC drivers, and mapped by a JVM of that class path (which then starts in two thirds of the time)."""

from __future__ import annotations

from pathlib import Path

import pytest

from extract.config.urls import parse_url
from extract.core.errors import TidemarkError
from extract.runtime.jars import jar_paths
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
