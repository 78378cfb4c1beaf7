"""Whether a replica column's type can become another in place, and whether its values then stay
exact: types as Postgres spells them (`format_type`), such as `character varying(50)`."""

from __future__ import annotations

import re
from dataclasses import dataclass

_INTEGERS = ("smallint", "integer", "bigint")
_SHAPE = re.compile(r"^(?P<base>[a-z ]+?)(?:\((?P<args>[0-9, ]+)\))?(?P<zone> with(?:out)? time zone)?$")
#: Postgres' precision of a timestamp or time without one written.
_DEFAULT_SECONDS_PRECISION = 6


@dataclass(frozen=True)
class Retyping:
    #: The replica column can be altered to the new type with every value kept.
    in_place: bool
    #: Its values are then what the source holds; otherwise they are read again (the source may have
    #: converted them otherwise: SQL Server's datetime to datetime2 changes the stored fraction).
    exact: bool


def _parts(type_text: str) -> tuple[str, list[int], str] | None:
    match = _SHAPE.match(type_text.strip().lower())
    if match is None:
        return None
    args = [int(a) for a in match["args"].split(",")] if match["args"] else []
    return match["base"].strip(), args, match["zone"] or ""


def retyping(old: str, new: str) -> Retyping:
    """How a column of type `old` becomes `new` (both canonical): in place and exact for a longer
    varchar, a wider decimal or integer; in place but read again for a finer timestamp or time, and
    real to double precision; otherwise neither (the column is replaced and read again)."""
    before, after = _parts(old), _parts(new)
    if before is None or after is None:
        return Retyping(False, False)
    (base, args, zone), (new_base, new_args, new_zone) = before, after
    if base == "character varying" and new_base in ("character varying", "text"):
        return Retyping(not new_args or (bool(args) and new_args[0] >= args[0]), True)
    if base == "text" and new_base == "text":
        return Retyping(True, True)
    if base == "numeric" and new_base == "numeric":
        return Retyping(_numeric_widens(args, new_args), True)
    if base in _INTEGERS and new_base in _INTEGERS:
        return Retyping(_INTEGERS.index(new_base) >= _INTEGERS.index(base), True)
    if base in _INTEGERS and new_base == "numeric":
        return Retyping(not new_args or _numeric_widens([19, 0], new_args), True)
    if base in ("timestamp", "time") and new_base == base and zone == new_zone:
        precision = args[0] if args else _DEFAULT_SECONDS_PRECISION
        new_precision = new_args[0] if new_args else _DEFAULT_SECONDS_PRECISION
        return Retyping(new_precision >= precision, False)
    if base == "real" and new_base == "double precision":
        return Retyping(True, False)
    return Retyping(False, False)


def _numeric_widens(args: list[int], new_args: list[int]) -> bool:
    """numeric(p, s) into numeric(p2, s2): no fewer digits before the point and none fewer after."""
    if not new_args:
        return True
    if not args:
        return False
    scale, new_scale = (args[1] if len(args) > 1 else 0), (new_args[1] if len(new_args) > 1 else 0)
    return new_scale >= scale and new_args[0] - new_scale >= args[0] - scale
