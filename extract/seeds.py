"""Read the configuration seeds that dbt also loads: tables to sync, host aliases, type map."""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from pathlib import Path

from extract.errors import TidemarkError

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

    @property
    def key(self) -> str:
        return f"{self.source_schema}.{self.source_table}"


def read_csv(path: Path, required: set[str], optional: set[str]) -> list[dict[str, str]]:
    """Rows of a seed, refusing unknown or missing columns so a typo cannot pass silently."""
    if not path.exists():
        raise TidemarkError(f"seed file {path} does not exist")
    with path.open(newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        header = set(reader.fieldnames or [])
        missing = required - header
        if missing:
            raise TidemarkError(f"{path}: missing column(s) {', '.join(sorted(missing))}")
        unknown = header - required - optional
        if unknown:
            known = ", ".join(sorted(required | optional))
            raise TidemarkError(f"{path}: unknown column(s) {', '.join(sorted(unknown))}; known columns: {known}")
        rows = []
        for number, row in enumerate(reader, start=2):
            for column in required:
                if not (row.get(column) or "").strip():
                    raise TidemarkError(f"{path} line {number}: {column} is empty")
            rows.append({k: (v or "").strip() for k, v in row.items()})
        return rows


def _flag(path: Path, number: int, column: str, value: str, default: bool) -> bool:
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
        path, {"source_schema", "source_table"}, {"cursor_column", "primary_key", "enabled", "asof_history"}
    )
    tables = []
    seen: set[str] = set()
    for number, row in enumerate(rows, start=2):
        key_text = row.get("primary_key", "")
        table = SyncTable(
            source_schema=row["source_schema"],
            source_table=row["source_table"],
            cursor_column=row.get("cursor_column") or None,
            primary_key=tuple(part.strip() for part in key_text.split("|") if part.strip()),
            enabled=_flag(path, number, "enabled", row.get("enabled", ""), True),
            asof_history=_flag(path, number, "asof_history", row.get("asof_history", ""), False),
        )
        if table.key in seen:
            raise TidemarkError(f"{path} line {number}: {table.key} is listed twice")
        seen.add(table.key)
        tables.append(table)
    return tables


def read_host_aliases(seeds_dir: Path) -> dict[str, str]:
    rows = read_csv(seeds_dir / "host_aliases.csv", {"host", "alias"}, set())
    return {row["host"].lower(): row["alias"] for row in rows}


def fold_name(name: str) -> str:
    """Fold a name for the replica side: lower case, anything unusual becomes '_'."""
    return re.sub(r"[^a-z0-9_]", "_", name.lower())
