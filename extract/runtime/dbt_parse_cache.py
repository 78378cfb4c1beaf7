"""dbt's parsed project kept from one pass to the next, so that a pass's dbt starts without a parse.

dbt's partial parse still reads every file of the project and rebuilds the manifest's objects from
its msgpack: on 1,000 tables about 1.4 s of the pass's critical path, every pass, when nothing
changed. The manifest object itself, pickled after a parse (target/tidemark_parse.pickle), loads in
about 0.3 s. It is loaded only when everything it was parsed from is as it was:
- dbt's and its Postgres adapter's versions;
- the options that change a parse (runtime/dbt_parse_options.py) and the dbt setup's fingerprint (dbt_project.yml,
  profiles.yml and what they read: runtime/dbt_check_record.py);
- every file of the project (path, size, modification time);
- the environment variables the parse read, and every DBT_ variable (dbt's flags).

The file is written by this user only (mode 0600) and loaded only when this user owns it and nobody
else can write it or its folder: a pickle is code to whoever writes it.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import pickle
import stat
import sys
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any, NamedTuple

from extract.config.setting import environment
from extract.runtime.dbt_parse_options import parse_options

PICKLE = "tidemark_parse.pickle"
RECORD = "tidemark_parse.json"
#: A manifest is deeply nested: its pickle needs more than Python's default recursion depth.
_RECURSION = 20_000


class Stamp(NamedTuple):
    #: The hash of what the parse was made from.
    key: str
    #: The environment variables the parse read.
    env_names: list[str]


class ParseCache:
    """The kept parse of `project` for dbt's arguments `args`, under a dbt setup whose fingerprint is
    `setup` (None: none is known, and nothing is kept)."""

    def __init__(self, project: Path, args: list[str], setup: str | None) -> None:
        self._target = project / "target"
        self._project = project
        self._options = parse_options(args)
        self._setup = setup

    def _key(self, env_names: list[str], files: list[tuple[str, int, int]]) -> str:
        versions: list[str | None] = []
        for package in ("dbt-core", "dbt-postgres"):
            try:
                versions.append(version(package))
            except PackageNotFoundError:
                versions.append(None)
        env = environment()
        names = sorted({*env_names, *(name for name in env if name.startswith("DBT_"))})
        read = hashlib.sha256(json.dumps([[n, env.get(n)] for n in names]).encode()).hexdigest()
        text = json.dumps([versions, self._options, self._setup, files, read])
        return hashlib.sha256(text.encode()).hexdigest()

    def load(self, files: list[tuple[str, int, int]]) -> Any:
        """The kept manifest, when nothing it depends on changed since (the project's `files` as they are
        now: dbt_project_files.project_files); else None."""
        if self._setup is None:
            return None
        try:
            record = json.loads((self._target / RECORD).read_text())
            if record.get("key") != self._key(list(record.get("env_vars", [])), files):
                return None
            path = self._target / PICKLE
            if not (_private(path) and _private(self._target)):
                return None
            limit = sys.getrecursionlimit()
            sys.setrecursionlimit(max(limit, _RECURSION))
            try:
                key, kind, state = pickle.loads(path.read_bytes())
            finally:
                sys.setrecursionlimit(limit)
            # Another pass may have replaced the pickle since the record was read.
            return kind(**state) if key == record["key"] else None
        except Exception:  # a file of another version, cut short or foreign: dbt parses, as without it
            return None

    def stamp(self, manifest: Any, files: list[tuple[str, int, int]]) -> Stamp | None:
        """What `manifest` was parsed from, taken as the parse was made (the project's `files` read before
        it): a file edited after that is a change to the next pass, never part of the kept parse. None:
        nothing is kept."""
        if self._setup is None:
            return None
        env_names = sorted(getattr(manifest, "env_vars", {}) or {})
        return Stamp(self._key(env_names, files), env_names)

    def save(self, manifest: Any, stamp: Stamp) -> None:
        """Keep `manifest`, parsed as `stamp` says. A folder that cannot be written only loses the shortcut."""
        try:
            record = {"key": stamp.key, "env_vars": stamp.env_names}
            limit = sys.getrecursionlimit()
            sys.setrecursionlimit(max(limit, _RECURSION))
            try:
                data = pickle.dumps((record["key"], type(manifest), _state(manifest)), protocol=pickle.HIGHEST_PROTOCOL)
            finally:
                sys.setrecursionlimit(limit)
            self._target.mkdir(parents=True, exist_ok=True)
            _write_private(self._target / PICKLE, data)
            _write_private(self._target / RECORD, json.dumps(record).encode())
        except (OSError, pickle.PicklingError, TypeError, AttributeError, RecursionError):
            return


def _state(manifest: Any) -> dict[str, Any]:
    """The manifest's own fields, without its lookups (rebuilt from them when first asked) and lock. dbt's
    pickling of a manifest (its __reduce_ex__) passes its fields out of order from dbt 1.10 on."""
    return {f.name: getattr(manifest, f.name) for f in dataclasses.fields(manifest) if not f.name.startswith("_")}


def _private(path: Path) -> bool:
    """Owned by this user, and writable by nobody else."""
    status = path.stat()
    return status.st_uid == os.getuid() and not status.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def _write_private(path: Path, data: bytes) -> None:
    """`data` in `path`, replaced whole (a reader sees the old file or the new), readable by this user only."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "wb") as file:
        file.write(data)
    temporary.replace(path)
