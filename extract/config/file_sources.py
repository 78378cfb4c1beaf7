"""seeds/file_sources.csv: file drops to replicate, one stream a row (optional: without the file, none).

A row names the replica (`schema.table` in the target), where the files are (a local or mounted path,
or any filesystem URL Spark reads when its jars are given: s3a://, abfss://, hdfs://), a glob under
it, their format, and optionally the key columns and the CSV options.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from extract.config.seeds import FILE_SOURCES, fold_name, read_csv, seed_choice, seed_columns, seed_flag
from extract.core.errors import TidemarkError

#: The formats a file source reads; compression (gzip, bzip2, ...) follows from the file's extension.
FORMATS = ("csv", "parquet", "json")
#: What a file that disappeared from the location does to its rows, the default first.
ON_FILE_REMOVED = ("keep", "delete")
#: A Spark type's name, with its precision and scale for a decimal: the type map says whether it knows it.
_TYPE_SHAPE = re.compile(r"[a-z_]+(\(\d+(,\d+)?\))?")
#: Columns that hold names or text taken exactly as written.
_EXACT = frozenset({"replica", "location", "glob", "primary_key", "delimiter", "quote"})


@dataclass(frozen=True)
class CsvOptions:
    header: bool = True
    delimiter: str = ","
    quote: str = '"'
    encoding: str = "UTF-8"


@dataclass(frozen=True)
class FileSource:
    #: The replica as the seed names it: schema.table (folded to the target's names).
    replica: str
    location: str
    glob: str
    format: str
    primary_key: tuple[str, ...] = ()
    enabled: bool = True
    on_file_removed: str = "keep"
    csv: CsvOptions = field(default_factory=CsvOptions)
    #: The location as the seed writes it (a local path there may be relative to the project).
    written_location: str = ""
    #: Declared (name, Spark type) columns of CSV or JSON files, instead of types guessed from them.
    columns: tuple[tuple[str, str], ...] = ()

    @property
    def key(self) -> str:
        """The stream's name in messages and on the command line (`--table`): its replica's, folded."""
        return ".".join(self.schema_and_table)

    @property
    def schema_and_table(self) -> tuple[str, str]:
        schema, table = self.replica.split(".", 1)
        return fold_name(schema), fold_name(table)


def read_file_sources(seeds_dir: Path) -> list[FileSource]:
    path = seeds_dir / FILE_SOURCES
    if not path.exists():
        return []
    optional = {
        "glob",
        "primary_key",
        "columns",
        "enabled",
        "on_file_removed",
        "header",
        "delimiter",
        "quote",
        "encoding",
    }
    rows = read_csv(path, {"replica", "location", "format"}, optional, exact=_EXACT)
    sources: list[FileSource] = []
    for number, row in rows:
        where = f"{path} line {number}"
        source = FileSource(
            replica=_replica(where, row["replica"]),
            location=_location(seeds_dir, row["location"]),
            glob=row.get("glob") or "*",
            format=seed_choice(path, number, "format", row["format"].lower(), FORMATS),
            primary_key=seed_columns(path, number, "primary_key", row.get("primary_key", "")),
            enabled=seed_flag(path, number, "enabled", row.get("enabled", ""), True),
            on_file_removed=seed_choice(
                path, number, "on_file_removed", row.get("on_file_removed", ""), ON_FILE_REMOVED
            ),
            csv=_csv_options(path, number, row),
            written_location=row["location"],
            columns=_declared_columns(where, row.get("columns", "")),
        )
        if any(other.schema_and_table == source.schema_and_table for other in sources):
            raise TidemarkError(f"{where}: the replica {source.replica} is listed twice")
        sources.append(source)
    return sources


def _replica(where: str, text: str) -> str:
    schema, dot, table = text.partition(".")
    if not dot or not schema.strip() or not table.strip():
        raise TidemarkError(f"{where}: replica {text!r} must name a schema and a table, as schema.table")
    return text


def _declared_columns(where: str, text: str) -> tuple[tuple[str, str], ...]:
    """`name type|name type|...` (Spark's type names: bigint, string, decimal(10,2), date, timestamp, ...);
    the type map says whether it knows each type, when a run plans the replica."""
    if not text.strip():
        return ()
    declared = []
    for part in text.split("|"):
        name, _, kind = part.strip().partition(" ")
        if not name or not kind.strip():
            raise TidemarkError(f"{where}: columns {text!r}: each column is a name, a space and a type, not {part!r}")
        kind = kind.strip().lower().replace(" ", "")
        if not _TYPE_SHAPE.fullmatch(kind):
            raise TidemarkError(
                f"{where}: columns: {kind!r} of column {name!r} is not a type name, such as bigint, string, "
                "decimal(10,2), date or timestamp"
            )
        declared.append((name, kind))
    names = [name.lower() for name, _ in declared]
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise TidemarkError(f"{where}: columns {text!r} names the column {repeated[0]!r} twice")
    return tuple(declared)


def _location(seeds_dir: Path, text: str) -> str:
    """A URL as written; a local path made absolute, relative to the project (the seeds' folder's parent)."""
    if urlsplit(text).scheme and len(urlsplit(text).scheme) > 1:  # not a Windows drive letter
        return text
    return str((seeds_dir.parent / text).resolve())


def _csv_options(path: Path, number: int, row: dict[str, str]) -> CsvOptions:
    where = f"{path} line {number}"
    delimiter = row.get("delimiter") or ","
    delimiter = "\t" if delimiter in ("\\t", "tab") else delimiter
    quote = row.get("quote") or '"'
    for name, value in (("delimiter", delimiter), ("quote", quote)):
        if len(value) != 1:
            raise TidemarkError(f"{where}: {name} must be one character, not {value!r}")
    if delimiter == quote:
        raise TidemarkError(f"{where}: delimiter and quote are both {quote!r}")
    encoding = row.get("encoding") or "UTF-8"
    try:
        codecs.lookup(encoding)
    except LookupError:
        raise TidemarkError(f"{where}: unknown encoding {encoding!r}") from None
    return CsvOptions(seed_flag(path, number, "header", row.get("header", ""), True), delimiter, quote, encoding)
