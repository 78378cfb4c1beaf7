"""The source's small queries (extract/source/jdbc.py): every value comes back as the database wrote it,
whatever characters it holds, through the JSON text that carries a result out of the JVM."""

from __future__ import annotations

from extract.config.urls import parse_url
from extract.runtime.jars import jar_paths
from extract.runtime.source_jvm import SourceJvm
from extract.source.jdbc import JdbcConnection

AWKWARD = [
    'a "quoted" \\ back\\slash',
    "line\nbreak\ttab\r\u0001\u001f",
    "",
    "Zoë, 東京, 𝄞 and 🙂",
    "\u2028\u2029 and </script>",
    "[1, null]",
]


def test_values_of_every_kind_of_character_come_back_as_written(pg_admin_url: str) -> None:
    jvm = SourceJvm(jar_paths())
    try:
        with JdbcConnection(jvm.jvm, parse_url(pg_admin_url)) as conn:
            rows = conn.query(
                "select v, null, length(v) from unnest(cast(? as text[])) with ordinality as t(v, n) order by n",
                ["{" + ",".join('"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"' for v in AWKWARD) + "}"],
            )
            assert rows == [(v, None, str(len(v))) for v in AWKWARD]
            assert conn.query("select 1 where false") == []
            assert conn.query("select ?, ?", [None, "x"]) == [(None, "x")]
    finally:
        stopped = jvm.stop()
        assert stopped is not None and stopped.wait(timeout=60) == 0
