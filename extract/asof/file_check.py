"""A snapshot file is checked whole before its run starts: every row goes through the target's own
parser into a temporary table that is rolled back, so that a value the target refuses, a key left
empty or a key held twice is refused (exit 2) with nothing written, not found halfway through a landing."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

import psycopg
from psycopg import sql
from pyspark.sql import DataFrame

from extract.config.urls import DatabaseUrl
from extract.core.errors import TidemarkError
from extract.landing.staging import column_defs
from extract.source.typemap import MappedColumn

_SCRATCH = "tidemark_snapshot_file"
#: Where COPY met a value it refused: `COPY table, line N, column NAME: "VALUE"`.
_COPY_CONTEXT = re.compile(r'COPY [^,]+, line (\d+), column (.+?): ".*"$', re.S)


def _refused_value(path: Path, exc: psycopg.Error) -> TidemarkError:
    """The target's words for the value (which they quote), and where it is: row and column, as COPY
    counts them."""
    said = exc.diag.message_primary or str(exc).splitlines()[0]
    lines = (exc.diag.context or "").splitlines()
    found = next((match for line in lines if (match := _COPY_CONTEXT.match(line))), None)
    where = f"row {found[1]}, column {found[2]}: " if found else ""
    return TidemarkError(f"snapshot file {str(path)!r}: {where}{said}")


def check_snapshot_file(
    target: DatabaseUrl,
    frame: DataFrame,
    columns: Sequence[MappedColumn],
    key: Sequence[str],
    key_labels: Sequence[str],
    path: Path,
) -> None:
    """Refuse the file (TidemarkError) unless the target takes every value and each row has its own key.
    `key` are the replica's key columns, `key_labels` the source's names for them."""
    names = [sql.Identifier(c.target_name) for c in columns]
    scratch = sql.Identifier(_SCRATCH)
    with psycopg.connect(target.libpq_url) as conn:
        try:
            conn.execute(
                sql.SQL("create temporary table {} ({}) on commit drop").format(
                    scratch, sql.SQL(", ").join(column_defs(columns, with_not_null=False))
                )
            )
            copy_in = sql.SQL("copy {} ({}) from stdin").format(scratch, sql.SQL(", ").join(names))
            with conn.cursor().copy(copy_in) as copy:
                for row in frame.toLocalIterator():
                    copy.write_row(tuple(row))
        except (psycopg.DataError, psycopg.IntegrityError) as exc:
            raise _refused_value(path, exc) from None
        keys = sql.SQL(", ").join(map(sql.Identifier, key))
        empty = sql.SQL(" or ").join(sql.SQL("{} is null").format(sql.Identifier(k)) for k in key)
        found = conn.execute(sql.SQL("select count(*) from {} where {}").format(scratch, empty)).fetchone()
        if found is not None and found[0]:
            raise TidemarkError(
                f"snapshot file {str(path)!r} has {found[0]} row(s) with no value in the key "
                f"({', '.join(key_labels)}); every row of a snapshot needs its key"
            )
        repeated = conn.execute(
            sql.SQL("select {0} from {1} group by {0} having count(*) > 1 limit 1").format(keys, scratch)
        ).fetchone()
        if repeated is not None:
            sample = ", ".join(f"{k}={v!r}" for k, v in zip(key_labels, repeated, strict=True))
            raise TidemarkError(
                f"snapshot file {str(path)!r} holds the key ({sample}) more than once; "
                "a snapshot must hold each key once"
            )
        conn.rollback()
