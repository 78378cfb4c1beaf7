"""dbo.Items in a project's source: ("Id" key, "Val", "ModifiedDate"), row i stamped `step` after the
previous one from 2026-01-01 00:00; with `rowversion`, a modify-id column "RowVer" too."""

from __future__ import annotations

from extract.devtools.rowversion import install_rowversion, stamp_with_rowversion
from tests.conftest import Project


def create_items(project: Project, rows: int, step: str = "1 minute", rowversion: bool = False) -> None:
    with project.source() as conn:
        if rowversion:
            install_rowversion(conn)
        conn.execute("create schema dbo")
        conn.execute('create table dbo."Items" ("Id" integer primary key, "Val" text, "ModifiedDate" timestamp(3))')
        conn.execute(
            """insert into dbo."Items" select i, 'v' || i, timestamp '2026-01-01' + i * %s::interval
            from generate_series(1, %s) as i""",
            (step, rows),
        )
        if rowversion:
            stamp_with_rowversion(conn, "dbo", "Items", "RowVer")
