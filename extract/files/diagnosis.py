"""Where in a CSV file Spark failed: Spark says which record it could not parse, not its line nor its column.
The file is read again here, on the driver, only when it failed (a local file; elsewhere Spark's words stand)."""

from __future__ import annotations

import csv
import gzip
from collections.abc import Callable, Iterator
from datetime import date, datetime
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import IO
from urllib.parse import urlsplit

from extract.config.file_sources import FileSource
from extract.core.sql_contract import FILE_COLUMN, FILE_ROW_COLUMN
from extract.source.typemap import MappedColumn

_PARSERS: dict[str, Callable[[str], object]] = {
    "tinyint": int,
    "smallint": int,
    "int": int,
    "bigint": int,
    "float": float,
    "double": float,
    "date": date.fromisoformat,
    "timestamp": datetime.fromisoformat,
    "timestamp_ntz": datetime.fromisoformat,
}


def _parses(kind: str, value: str) -> bool:
    if value == "":
        return True  # an empty field is NULL
    try:
        if kind.startswith("decimal"):
            Decimal(value)
        elif kind == "boolean":
            if value.lower() not in ("true", "false"):
                return False
        elif kind in _PARSERS:
            _PARSERS[kind](value)
    except (ValueError, InvalidOperation):
        return False
    return True


def _open(path: Path, encoding: str) -> IO[str]:
    if path.suffix == ".gz":
        return gzip.open(path, "rt", encoding=encoding, newline="")
    return path.open(encoding=encoding, newline="")


def _records(handle: IO[str], source: FileSource) -> Iterator[tuple[int, list[str]]]:
    options = source.csv
    reader = csv.reader(handle, delimiter=options.delimiter, quotechar=options.quote, doublequote=True)
    if options.header:
        next(reader, None)
    for fields in reader:
        yield reader.line_num, fields


def where_in_csv(path: str, source: FileSource, columns: list[MappedColumn], record: int) -> str | None:
    """'line L, column C: value V is not a T' for record `record` (from 1) of a local CSV file, or None
    when it cannot tell (another filesystem, or every field of the record parses)."""
    parts = urlsplit(path)
    if source.format != "csv" or parts.scheme not in ("", "file"):
        return None
    data = [c for c in columns if c.target_name not in (FILE_COLUMN, FILE_ROW_COLUMN)]
    try:
        with _open(Path(parts.path), source.csv.encoding) as handle:
            for number, (line, fields) in enumerate(_records(handle, source), start=1):
                if number < record:
                    continue
                for column, value in zip(data, fields, strict=False):
                    kind = column.source.type_text
                    if not _parses(kind, value):
                        return f"line {line}, column {column.source.name}: {value!r} does not read as {kind}"
                return None
    except Exception:  # a file too broken to read again (truncated gzip, ...): Spark's words stand
        return None
    return None
