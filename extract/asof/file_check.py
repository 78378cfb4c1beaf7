"""A snapshot file is checked whole before its run starts: every row goes through the target's own
parser into a temporary table, which goes with its session, so that a value the target refuses, a key left
empty or a key held twice is refused (exit 2) with nothing written, not found halfway through a landing."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

import psycopg
from psycopg import sql

from extract.config.urls import DatabaseUrl
from extract.core.errors import EXIT_BAD_INPUT, KEY_PLACE, KeyValueRefused, TidemarkError
from extract.core.quoting import ParameterSafeIdentifier
from extract.landing.staging import column_defs, duplicate_key_sample, key_sample, rows_without_key
from extract.planning.table_plan import TablePlan

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

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


def check_snapshot_file(target: DatabaseUrl, frame: DataFrame, plan: TablePlan, path: Path) -> None:
    """Refuse the file (TidemarkError) unless the target takes every value and each row has its own key.
    A temporary table only: it goes with the connection, and no run id is taken."""
    names = [ParameterSafeIdentifier(c.target_name) for c in plan.columns]
    scratch = ParameterSafeIdentifier(_SCRATCH)
    key, labels = plan.key_columns, plan.table.primary_key
    with psycopg.connect(target.libpq_url) as conn:
        try:
            conn.execute(
                sql.SQL("create temporary table {} ({})").format(
                    scratch, sql.SQL(", ").join(column_defs(plan.columns, with_not_null=False))
                )
            )
            copy_in = sql.SQL("copy {} ({}) from stdin").format(scratch, sql.SQL(", ").join(names))
            with conn.cursor().copy(copy_in) as copy:
                for row in frame.toLocalIterator():
                    copy.write_row(tuple(row))
        except (psycopg.DataError, psycopg.IntegrityError) as exc:
            raise _refused_value(path, exc) from None
        keyless = rows_without_key(conn, ("pg_temp", _SCRATCH), key, None)
        if keyless:
            raise TidemarkError(
                f"snapshot file {str(path)!r} has {keyless} row(s) with no value in the key "
                f"({', '.join(labels)}); every row of a snapshot needs its key"
            )
        repeated = duplicate_key_sample(conn, ("pg_temp", _SCRATCH), key, None)
        if repeated is not None:
            raise KeyValueRefused(
                f"snapshot file {str(path)!r} holds {KEY_PLACE} more than once; a snapshot must hold each key once",
                key_sample(labels, repeated),
                exit_code=EXIT_BAD_INPUT,
            )
