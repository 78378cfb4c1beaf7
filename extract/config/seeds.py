"""Read the configuration seeds that dbt also loads: tables to sync, host aliases, type map."""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from pathlib import Path

from extract.config.values import ROWS, SHARE
from extract.core.errors import TidemarkError

#: Columns of sync_tables.csv that hold names: taken exactly as written, blanks included.
NAME_COLUMNS = frozenset({"source_schema", "source_table", "cursor_column", "primary_key", "record_id", "unique_keys"})
#: on_schema_change's policies, the default first (extract/evolution/apply.py applies them).
POLICIES = ("evolve", "append_new_columns", "fail")
#: How a table's changes are found, automatic first (extract/planning/reader_choice.py decides).
READERS = ("auto", "change_tracking", "cdc", "rowversion", "clock", "full")
#: The reconcile guard's columns, each as its setting takes it (TIDEMARK_RECONCILE_MAX_DELETE_...).
GUARD_COLUMNS = ("max_delete_share", "max_delete_rows")
#: The seed of file sources (extract/config/file_sources.py): a project of files alone lists no table.
FILE_SOURCES = "file_sources.csv"
_TRUE = {"true", "1", "yes", "y", "t"}
_FALSE = {"false", "0", "no", "n", "f"}


@dataclass(frozen=True)
class SyncTable:
    source_schema: str
    source_table: str
    cursor_column: str | None = None
    primary_key: tuple[str, ...] = ()
    enabled: bool = True
    #: Keep an as-of history fed by snapshots (`--snapshot-date`), in any order of dates.
    asof_history: bool = False
    #: A stable identity of each row (such as a rowguid) that survives a change of its key: a row
    #: whose key changed is moved to its new key, not deleted and inserted.
    record_id: str | None = None
    #: The source's alternate unique keys to carry in the replica (each a tuple of columns).
    unique_keys: tuple[tuple[str, ...], ...] = ()
    #: How the replica follows a change of the source's schema (extract/evolution/apply.py).
    on_schema_change: str = "evolve"
    #: How its changes are found: one of READERS.
    reader: str = "auto"
    #: The reconcile's guard for this table, where it differs from the settings' (None: the setting's).
    max_delete_share: float | None = None
    max_delete_rows: int | None = None

    @property
    def key(self) -> str:
        return f"{self.source_schema}.{self.source_table}"


def read_csv(
    path: Path, required: set[str], optional: set[str], exact: frozenset[str] = frozenset()
) -> list[tuple[int, dict[str, str]]]:
    """(line number, row) of each row of a seed, refusing unknown or missing columns so a typo cannot
    pass silently, and rows with more fields than the header. Values are stripped of
    surrounding blanks, except in the `exact` columns (names, which may hold any character)."""
    if not path.exists():
        raise TidemarkError(f"seed file {path} does not exist")
    # utf-8-sig: a spreadsheet's byte order mark is not part of the first column's name.
    with path.open(newline="", encoding="utf-8-sig") as handle:
        reader = csv.reader(handle)
        try:
            header = [name.strip() for name in next(reader, [])]
            rows = list(enumerate(reader, start=2))
        except (csv.Error, UnicodeDecodeError) as exc:
            raise TidemarkError(f"{path}: not a readable CSV file ({exc})") from None
    _check_header(path, header, required, optional)
    parsed = []
    for number, fields in rows:
        if not fields:
            continue  # a blank line
        if len(fields) > len(header):
            raise TidemarkError(
                f"{path} line {number}: {len(fields)} fields where the header has {len(header)} "
                f"({', '.join(header)}): {fields!r}"
            )
        fields += [""] * (len(header) - len(fields))  # trailing columns left out are empty, as dbt reads them
        row = {name: value if name in exact else value.strip() for name, value in zip(header, fields, strict=True)}
        for column in sorted(required):
            if not row[column].strip():
                raise TidemarkError(f"{path} line {number}: {column} is empty")
        for column, value in row.items():
            if "\x00" in value:
                raise TidemarkError(f"{path} line {number}: {column} {value!r} holds a NUL character")
        parsed.append((number, row))
    return parsed


def _check_header(path: Path, header: list[str], required: set[str], optional: set[str]) -> None:
    if not header:
        raise TidemarkError(f"{path} is empty: its first line must name the columns {', '.join(sorted(required))}")
    repeated = sorted({name for name in header if header.count(name) > 1})
    if repeated:
        raise TidemarkError(f"{path}: column(s) {', '.join(repeated)} appear twice in the header")
    missing = required - set(header)
    if missing:
        raise TidemarkError(f"{path}: missing column(s) {', '.join(sorted(missing))}")
    unknown = set(header) - required - optional
    if unknown:
        known = ", ".join(sorted(required | optional))
        raise TidemarkError(f"{path}: unknown column(s) {', '.join(sorted(unknown))}; known columns: {known}")


def seed_flag(path: Path, number: int, column: str, value: str, default: bool) -> bool:
    lowered = value.lower()
    if lowered == "":
        return default
    if lowered in _TRUE:
        return True
    if lowered in _FALSE:
        return False
    raise TidemarkError(f"{path} line {number}: {column} must be true or false, not {value!r}")


def read_sync_tables(seeds_dir: Path) -> list[SyncTable]:
    path = seeds_dir / "sync_tables.csv"
    rows = read_csv(
        path,
        {"source_schema", "source_table"},
        {
            "cursor_column",
            "primary_key",
            "enabled",
            "asof_history",
            "record_id",
            "unique_keys",
            "on_schema_change",
            "reader",
            *GUARD_COLUMNS,
        },
        exact=NAME_COLUMNS,
    )
    tables = []
    seen: set[tuple[str, str]] = set()
    for number, row in rows:
        key = seed_columns(path, number, "primary_key", row.get("primary_key", ""))
        unique_text = row.get("unique_keys", "")
        unique_parts = unique_text.split(";") if unique_text.strip() else []
        unique = tuple(seed_columns(path, number, "unique_keys", part, required=True) for part in unique_parts)
        table = SyncTable(
            source_schema=row["source_schema"],
            source_table=row["source_table"],
            cursor_column=row.get("cursor_column") or None,
            primary_key=key,
            enabled=seed_flag(path, number, "enabled", row.get("enabled", ""), True),
            asof_history=seed_flag(path, number, "asof_history", row.get("asof_history", ""), False),
            record_id=row.get("record_id") or None,
            unique_keys=unique,
            on_schema_change=seed_choice(path, number, "on_schema_change", row.get("on_schema_change", ""), POLICIES),
            reader=seed_choice(path, number, "reader", row.get("reader", ""), READERS),
            max_delete_share=_guard_share(path, number, row),
            max_delete_rows=_guard_rows(path, number, row),
        )
        if (table.source_schema, table.source_table) in seen:
            raise TidemarkError(f"{path} line {number}: {table.key} is listed twice")
        seen.add((table.source_schema, table.source_table))
        tables.append(table)
    if not tables and not (seeds_dir / FILE_SOURCES).exists():
        raise TidemarkError(f"{path} lists no table: add a line source_schema,source_table for each table to sync")
    return tables


def _guard_share(path: Path, number: int, row: dict[str, str]) -> float | None:
    """The table's own max_delete_share, read as its setting is (None when blank)."""
    text = row.get("max_delete_share", "")
    return SHARE(text, f"{path} line {number}: max_delete_share") if text else None


def _guard_rows(path: Path, number: int, row: dict[str, str]) -> int | None:
    """The table's own max_delete_rows, read as its setting is (None when blank)."""
    text = row.get("max_delete_rows", "")
    return ROWS(text, f"{path} line {number}: max_delete_rows") if text else None


def seed_choice(path: Path, number: int, column: str, value: str, choices: tuple[str, ...]) -> str:
    """One of `choices` (the first when blank)."""
    if not value:
        return choices[0]
    if value not in choices:
        raise TidemarkError(f"{path} line {number}: {column} must be one of {', '.join(choices)}, not {value!r}")
    return value


def seed_columns(path: Path, number: int, column: str, text: str, required: bool = False) -> tuple[str, ...]:
    """The column names of one key, joined by '|' (none when the text is blank and may be)."""
    if not text.strip():
        if required:
            raise TidemarkError(f"{path} line {number}: {column} names an empty key (keys are separated by ';')")
        return ()
    names = tuple(text.split("|"))
    if any(not name.strip() for name in names):
        raise TidemarkError(f"{path} line {number}: {column} {text!r} names an empty column")
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise TidemarkError(f"{path} line {number}: {column} {text!r} names the column {repeated[0]!r} twice")
    return names


def read_host_aliases(seeds_dir: Path) -> dict[str, str]:
    path = seeds_dir / "host_aliases.csv"
    aliases: dict[str, str] = {}
    for number, row in read_csv(path, {"host", "alias"}, set()):
        host = row["host"].lower()
        if host in aliases:
            raise TidemarkError(f"{path} line {number}: host {row['host']!r} is listed twice")
        aliases[host] = row["alias"]
    return aliases


def fold_name(name: str) -> str:
    """Fold a name for the replica side: lower case, anything unusual becomes '_'."""
    return re.sub(r"[^a-z0-9_]", "_", name.lower())
