"""How a setting's text becomes its value. Each parser says what it takes, as the settings page shows it,
and refuses anything else with an error that names the setting and the text (exit code 2)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Generic, NoReturn, TypeVar

from extract.config.durations import MAX_SAFETY_WINDOW, parse_duration, spoken_duration
from extract.config.urls import DatabaseUrl, parse_url
from extract.core.errors import TidemarkError
from extract.core.sql_contract import MAX_NAME_BYTES

T = TypeVar("T")
_DIGITS = re.compile(r"[0-9]+")
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}
#: Spark master URLs, as spark-submit documents them.
_MASTER = re.compile(
    r"^(local(\[(\*|[1-9]\d{0,4})(,[1-9]\d{0,3})?\])?|local-cluster\[[1-9]\d{0,3},[1-9]\d{0,3},[1-9]\d{0,6}\]"
    r"|spark://[A-Za-z0-9_.\-\[\]:]+(,[A-Za-z0-9_.\-\[\]:]+)*|yarn|k8s://\S+)$"
)
#: Written unquoted, such a name means the same in tidemark's SQL, dbt's and a user's psql; Postgres keeps
#: the pg_ prefix for its own schemas.
_SCHEMA_NAME = re.compile(r"(?!pg_)[a-z_][a-z0-9_]*")
_MEMORY = re.compile(r"[1-9][0-9]{0,8}[kmgt]?", re.IGNORECASE)
_SHARE = re.compile(r"^(?P<number>\d{1,3}(?:\.\d{1,6})?)(?P<percent>%?)$")


@dataclass(frozen=True)
class Parser(Generic[T]):
    #: What the text must be, completing "NAME must be ...".
    kind: str
    convert: Callable[[str, str], T]

    def __call__(self, text: str, name: str) -> T:
        return self.convert(text, name)


def _refuse(name: str, kind: str, text: str) -> NoReturn:
    raise TidemarkError(f"{name} must be {kind}, not {text!r}")


def _whole(text: str) -> int | None:
    cleaned = text.strip().replace("_", "")
    return int(cleaned) if _DIGITS.fullmatch(cleaned) else None


def whole_number(low: int, high: int, kind: str | None = None) -> Parser[int]:
    """A whole number from `low` to `high` (underscores may group its digits)."""
    said = kind or f"a whole number from {low:,} to {high:,}"

    def convert(text: str, name: str) -> int:
        value = _whole(text)
        if value is None or not low <= value <= high:
            _refuse(name, said, text)
        return value

    return Parser(said, convert)


def duration(minimum: timedelta = timedelta(0), maximum: timedelta = MAX_SAFETY_WINDOW) -> Parser[timedelta]:
    return Parser(
        f"a duration from {spoken_duration(minimum)} to {spoken_duration(maximum)} (90s, 5m, 1.5h, 7d)",
        lambda text, name: parse_duration(text, name, minimum, maximum),
    )


def one_of(*choices: str) -> Parser[str]:
    """One of `choices`, as written."""
    said = "one of " + ", ".join(choices)

    def convert(text: str, name: str) -> str:
        if text.strip() not in choices:
            _refuse(name, said, text)
        return text.strip()

    return Parser(said, convert)


def _flag(text: str, name: str) -> bool:
    value = text.strip().lower()
    if value not in _TRUE | _FALSE:
        _refuse(name, FLAG.kind, text)
    return value in _TRUE


def _spark_master(text: str, name: str) -> str:
    if not _MASTER.match(text.strip()):
        raise TidemarkError(
            f"{name} {text!r} is not a Spark master URL: use local, local[N], local[*], spark://HOST:PORT, "
            "yarn or k8s://HOST:PORT"
        )
    return text.strip()


def _schema_name(text: str, name: str) -> str:
    if not _SCHEMA_NAME.fullmatch(text) or len(text.encode()) > MAX_NAME_BYTES:
        _refuse(name, SCHEMA_NAME.kind, text)
    return text


def _power_of_two(text: str, name: str) -> int:
    value = _whole(text) or 0
    if value < 2 or value > 1024 or value & (value - 1):
        _refuse(name, POWER_OF_TWO.kind, text)
    return value


def _share(text: str, name: str) -> float:
    match = _SHARE.match(text.strip())
    value = -1.0 if match is None else float(match["number"]) / (100 if match["percent"] else 1)
    if not 0 <= value <= 1:
        _refuse(name, SHARE.kind, text)
    return value


def column_names(default: str) -> Parser[tuple[str, ...]]:
    """Column names separated by commas; at least one."""

    def convert(text: str, name: str) -> tuple[str, ...]:
        names = tuple(part.strip() for part in text.split(",") if part.strip())
        if not names:
            # Empty, it would make every table without a seed's cursor_column a full read, silently.
            raise TidemarkError(
                f"{name} is set to {text!r}, which names no column: name the cursor columns to look for "
                f"(comma-separated), or unset it for the default {default!r}"
            )
        return names

    return Parser("column names separated by commas", convert)


def _memory(text: str, name: str) -> str:
    if not _MEMORY.fullmatch(text.strip()):
        _refuse(name, MEMORY_KIND, text)
    return text.strip()


MEMORY_KIND = "a size as Java takes it, such as 2g or 512m"
TEXT = Parser("text", lambda text, name: text)
MEMORY = Parser(MEMORY_KIND, _memory)
PORT = whole_number(1, 65535, "a port number from 1 to 65535")
FLAG = Parser("1/true/yes/on or 0/false/no/off", _flag)
SPARK_MASTER = Parser(
    "a Spark master URL: local, local[N], local[*], spark://HOST:PORT, yarn or k8s://...", _spark_master
)
SCHEMA_NAME = Parser(
    f"a PostgreSQL schema name of 1 to {MAX_NAME_BYTES} bytes: lower-case letters, digits and _, "
    "not starting with a digit or pg_",
    _schema_name,
)
POWER_OF_TWO = Parser("a power of two from 2 to 1024", _power_of_two)
ROWS = whole_number(0, 2**63 - 1, "a whole number of rows")
MILLISECONDS = whole_number(0, 2**31 - 1, "a whole number of milliseconds")
SHARE = Parser("a share of the replica such as 10% or 0.1", _share)
FOLDER = Parser("a folder (relative to the current one)", lambda text, name: Path(text).resolve())
PATH = Parser("a path", lambda text, name: Path(text))
PATHS = Parser("paths separated by ':'", lambda text, name: tuple(part for part in text.split(":") if part))
DATABASE_URL: Parser[DatabaseUrl] = Parser("a database URL", lambda text, name: parse_url(text.strip()))
