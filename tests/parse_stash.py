"""dbt's parses of the projects a test worker's slots held, kept by the snapshots file each parsed.

tidemark's generate drops dbt's partial-parse cache when it parsed another version of the snapshots file
(extract/project/parse_cache.py), and dbt then parses every macro afresh: seconds a test. Tests of
different shapes take a slot in turn, so a slot's cache was mostly parsed for another shape than the
next test's. A parse kept here is put back only where generate's own rule keeps a cache: when it
parsed the snapshots file exactly as generate wrote it; dbt parses what else differs.
"""

from __future__ import annotations

from pathlib import Path

from extract.project.parse_cache import CACHE, checksum, parsed_checksums

SNAPSHOTS = Path("snapshots") / "_replica__snapshots.yml"
#: Parses kept per worker, the oldest forgotten first.
KEPT = 16

_parses: dict[tuple[Path, str], bytes] = {}


def keep_parse(root: Path) -> None:
    """Keep the project's parse, if dbt left one that parsed a snapshots file."""
    cache = root / CACHE
    checksums = parsed_checksums(cache, SNAPSHOTS.as_posix()) if cache.is_file() else None
    if checksums is None or len(checksums) != 1:
        return
    key = (root, checksums.pop())
    _parses.pop(key, None)
    _parses[key] = cache.read_bytes()
    while len(_parses) > KEPT:
        del _parses[next(iter(_parses))]


def put_back_parse(root: Path) -> None:
    """After generate: when it dropped the cache, the parse kept of this very snapshots file, if any."""
    cache, snapshots = root / CACHE, root / SNAPSHOTS
    if cache.exists() or not snapshots.is_file():
        return
    parsed = _parses.get((root, checksum(snapshots.read_text())))
    if parsed is not None:
        cache.parent.mkdir(parents=True, exist_ok=True)
        cache.write_bytes(parsed)
