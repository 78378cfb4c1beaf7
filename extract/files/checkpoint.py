"""A file source's checkpoint (the state schema's file_checkpoint): every file its merges took, with its
size, time and SHA-256; and the comparison of a listing with it. The checkpoint is a set of files, not a
greatest time: a late file with an older time is new all the same."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import psycopg
from psycopg import sql

from extract.config.naming import TargetNames
from extract.core.sql_contract import FILE_COLUMN, RUN_ID_COLUMN
from extract.core.state_schema import StateSchema
from extract.files.listing import ListedFile


@dataclass(frozen=True)
class Checkpointed:
    path: str
    size: int
    mtime: int
    sha256: str
    rows_landed: int | None


@dataclass(frozen=True)
class Candidates:
    """A listing against the checkpoint, before any file is read: which files may hold something new."""

    #: Not in the checkpoint, or with another size or time: their content decides (`FileChanges`).
    unsure: list[ListedFile]
    #: In the checkpoint and no longer listed.
    gone: list[Checkpointed]


@dataclass
class FileChanges:
    """What a run of the source does, its SHA-256 beside each file it reads."""

    #: New files, and files whose content changed: they land.
    land: list[tuple[ListedFile, str]] = field(default_factory=list)
    #: Files with a new time and the same content (an identical upload): only their time is kept.
    same: list[tuple[ListedFile, str]] = field(default_factory=list)
    #: Files gone whose rows go (on_file_removed=delete).
    remove: list[Checkpointed] = field(default_factory=list)

    @property
    def anything(self) -> bool:
        return bool(self.land or self.same or self.remove)


def committed_files(conn: psycopg.Connection, state: StateSchema, table_key: str) -> dict[str, Checkpointed]:
    if not state.has(conn, "file_checkpoint"):
        return {}
    rows = conn.execute(
        state.sql("select path, size, modified_ms, sha256, rows_landed from {file_checkpoint} where table_key = %s"),
        (table_key,),
    ).fetchall()
    conn.commit()
    return {row[0]: Checkpointed(*row) for row in rows}


def candidates(listed: list[ListedFile], kept: dict[str, Checkpointed]) -> Candidates:
    unsure = [f for f in listed if f.path not in kept or (kept[f.path].size, kept[f.path].mtime) != (f.size, f.mtime)]
    present = {f.path for f in listed}
    return Candidates(unsure, [k for path, k in sorted(kept.items()) if path not in present])


def changes(
    settled: list[ListedFile], digests: dict[str, str], kept: dict[str, Checkpointed], gone: list[Checkpointed]
) -> FileChanges:
    """What to do with each settled file, by its content against the checkpoint's; `gone` files go."""
    found = FileChanges(remove=gone)
    for listed in settled:
        digest = digests[listed.path]
        before = kept.get(listed.path)
        (found.same if before is not None and before.sha256 == digest else found.land).append((listed, digest))
    return found


def record_run_files(
    conn: psycopg.Connection, state: StateSchema, table_key: str, run_id: int, found: FileChanges
) -> None:
    """The run's files, in its transaction: a merge of the run moves them into the checkpoint."""
    rows = [(f.path, f.size, f.mtime, digest, "land") for f, digest in found.land]
    rows += [(f.path, f.size, f.mtime, digest, "same") for f, digest in found.same]
    rows += [(k.path, k.size, k.mtime, k.sha256, "remove") for k in found.remove]
    with conn.cursor() as cursor:
        cursor.executemany(
            state.sql(
                "insert into {file_log} (table_key, run_id, path, size, modified_ms, sha256, action)"
                " values (%s, %s, %s, %s, %s, %s, %s)"
            ),
            [(table_key, run_id, *row) for row in rows],
        )


def run_files(
    conn: psycopg.Connection, state: StateSchema, table_key: str, run_id: int, action: str
) -> list[tuple[str, int]]:
    """(path, size) of the run's files of one action, in path order (a landing's file numbers follow it)."""
    rows = conn.execute(
        state.sql(
            "select path, size from {file_log} where table_key = %s and run_id = %s and action = %s order by path"
        ),
        (table_key, run_id, action),
    ).fetchall()
    return [(row[0], row[1]) for row in rows]


SUMMARY_FIELDS = ("file_source", "files", "rows_landed", "newest_file", "newest_sha256", "committed_at")
FILE_FIELDS = ("path", "size", "modified_ms", "sha256", "rows_landed", "run_id")
#: Per file source: the files its checkpoint holds, their rows, and the newest file with its SHA-256.
_SUMMARY = """
select
    kept.table_key as file_source,
    count(*) as files,
    sum(kept.rows_landed)::bigint as rows_landed,
    (array_agg(kept.path order by kept.modified_ms desc, kept.path desc))[1] as newest_file,
    (array_agg(kept.sha256 order by kept.modified_ms desc, kept.path desc))[1] as newest_sha256,
    max(kept.committed_at) as committed_at
from {file_checkpoint} as kept
where %(table_key)s::text is null or kept.table_key = %(table_key)s
group by kept.table_key
order by kept.table_key
"""


def checkpoint_summary(conn: psycopg.Connection[Any], state: StateSchema, table_key: str | None = None) -> list[Any]:
    """One row per file source (or the one of `table_key`): what `status` and `tidemark state show` say."""
    if not state.has(conn, "file_checkpoint"):
        return []
    return conn.execute(state.sql(_SUMMARY), {"table_key": table_key}).fetchall()


def checkpoint_files(conn: psycopg.Connection[Any], state: StateSchema, table_key: str) -> list[Any]:
    """Every file of the source's checkpoint, as `tidemark state show --verbose` lists them."""
    return conn.execute(
        state.sql(
            "select path, size, modified_ms, sha256, rows_landed, run_id from {file_checkpoint}"
            " where table_key = %s order by path"
        ),
        (table_key,),
    ).fetchall()


def count_landed_rows(conn: psycopg.Connection, state: StateSchema, names: TargetNames, run_id: int) -> None:
    """Each landed file's rows, counted in staging, in the run's files (the checkpoint keeps them)."""
    staging = sql.Identifier(names.schema, names.staging_table)
    with conn.transaction():
        conn.execute(
            state.sql("update {file_log} set rows_landed = 0 where table_key = %s and run_id = %s and action = 'land'"),
            (names.table_key, run_id),
        )
        conn.execute(
            state.sql(
                "update {file_log} as logged set rows_landed = counted.landed"
                " from (select {file} as path, count(*) as landed from {staging} where {run} = %(run_id)s"
                " group by {file}) as counted"
                " where logged.table_key = %(table_key)s and logged.run_id = %(run_id)s and logged.path = counted.path",
                staging=staging,
                file=sql.Identifier(FILE_COLUMN),
                run=sql.Identifier(RUN_ID_COLUMN),
            ),
            {"table_key": names.table_key, "run_id": run_id},
        )


def mark_failed(conn: psycopg.Connection, state: StateSchema, table_key: str, run_id: int, path: str, why: str) -> None:
    """The run's file `path` could not land: it stays out of the checkpoint, and the next run reads it."""
    conn.execute(
        state.sql(
            "update {file_log} set action = 'failed', error = %s where table_key = %s and run_id = %s and path = %s"
        ),
        (why, table_key, run_id, path),
    )
