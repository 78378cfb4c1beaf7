"""dbt's partial-parse cache (target/partial_parse.msgpack): whether it must go before dbt next parses.

dbt's partial parsing can keep the old version of a YAML snapshot, or keep it twice ("two snapshots
with the name ..."), when the file defining it changed together with the model it snapshots (dbt-core
#15785, #11444). A cache that parsed another version of the snapshots file, or none (a project parsed
before its first tables were generated), is dropped, and the next dbt command parses the project
afresh: the state model's references to the replicas are only read again then. Any other cache stands:
a full parse of a project of hundreds of tables takes dbt many seconds.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import msgpack  # type: ignore[import-untyped]

CACHE = Path("target") / "partial_parse.msgpack"


def drop_if_it_parsed_another(project_dir: Path, written: Path, text: str) -> None:
    """Drop the cache when it parsed `written` (a file of the project) with other contents than `text`,
    or did not parse it."""
    cache = project_dir / CACHE
    if cache.is_file() and _parsed_another(cache, written.relative_to(project_dir).as_posix(), text):
        cache.unlink(missing_ok=True)


def _parsed_another(cache: Path, relative: str, text: str) -> bool:
    return parsed_checksums(cache, relative) != {checksum(text)}


def checksum(text: str) -> str:
    """A file's checksum as dbt keeps it: the sha256 of its contents, stripped."""
    return hashlib.sha256(text.strip().encode()).hexdigest()


def parsed_checksums(cache: Path, relative: str) -> set[str] | None:
    """The checksums of the versions of file `relative` the cache parsed: dbt names a file
    `project://path` and keeps the sha256 of its contents, stripped, as it read them. None for a cache
    this cannot read, which dbt may misread too."""
    try:
        files: dict[str, Any] = msgpack.unpackb(cache.read_bytes(), strict_map_key=False)["files"]
        known = [entry for file_id, entry in files.items() if file_id.partition("://")[2] == relative]
        return {str(entry["checksum"]["checksum"]) for entry in known}
    except Exception:
        return None
