"""A stream's state in seed 001's shape: what a run is given (input) and what its success commits (output).

The stream is a replica (its table key, `schema.table` in the target); the cursor field is the source's
cursor column (None for a table read whole); the cursor value is the clock reading or the modify id the
next run reads changes since, or for an as-of snapshot its date.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True)
class StreamState:
    stream_id: str
    cursor_field: str | None
    cursor_value: str | None
    #: Output state only: rows the run landed.
    records_emitted: int | None = None
    #: Output state only: the greatest cursor value among the rows landed, beside the clock reading
    #: the cursor value is (rows stamped ahead of the source's clock show here).
    max_cursor_seen: str | None = None
    #: Which reader read, or reads next (extract/lifecycle/reader.py ReaderKind).
    reader: str | None = None

    def as_json(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v is not None or k in ("cursor_field", "cursor_value")}
