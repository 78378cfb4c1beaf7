"""dbt's manifest.json written again only when the project changed since dbt last wrote it.

At the end of every command that runs nodes, dbt writes the whole manifest (manifest.json and
graph.gpickle) besides run_results.json: on a project of 1,000 tables that is about 5 s of CPU, more
than the merges of a pass that changed ten. A pass whose project, dbt and arguments are those of the
last run that wrote the manifest runs dbt with `--no-write-json` and writes run_results.json itself,
where dbt wrote it last (dbt says where: its ArtifactWritten event), as long as nothing else wrote the
manifest since (its time and size are recorded). The manifest on disk is then the one of the same
project, but for the compiled code of the nodes the pass ran, which target/compiled and target/run keep.

Arguments that say what dbt writes (`--write-json`, `--no-write-json`) are left to dbt.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from extract.runtime.dbt_selection import SELECTION_OPTIONS

FILE_NAME = "tidemark_manifest_written"
RUN_RESULTS = "RunExecutionResult"
#: Arguments that change what a run does, not what dbt parses.
_NOT_PARSED = frozenset({"--quiet", "-q"})
_CHOOSES_WRITES = frozenset({"--write-json", "--no-write-json"})


def parse_key(args: list[str], setup: str, files: object, env_vars: Mapping[str, str]) -> str:
    """What the manifest dbt would write depends on: dbt's version, the arguments but for the nodes
    they select, the dbt setup (`setup`: dbt_check_record's fingerprint of dbt_project.yml, profiles.yml
    and what they read), the project's files, and the environment variables its parse read."""
    try:
        dbt_version = version("dbt-core")
    except PackageNotFoundError:
        dbt_version = "none"
    kept: list[str] = []
    skipping = False
    for arg in args:
        option = arg.split("=", 1)[0]
        if option in SELECTION_OPTIONS:
            skipping = "=" not in arg
        elif arg.startswith("-"):
            skipping = False
            if arg not in _NOT_PARSED:
                kept.append(arg)
        elif not skipping:
            kept.append(arg)
    text = json.dumps([dbt_version, kept, setup, repr(files), sorted(env_vars.items())])
    return hashlib.sha256(text.encode()).hexdigest()


class ManifestWrites:
    """Whether a run of dbt in `project` with `key` (see `parse_key`) need write the manifest, and the
    record of the last run that did."""

    def __init__(self, project: Path, args: list[str], key: str | None) -> None:
        self._record = project / "target" / FILE_NAME
        self._key = key
        self._written: str | None = None
        chosen = key is None or any(a.split("=", 1)[0] in _CHOOSES_WRITES for a in args)
        #: Where this run writes run_results.json itself (None: dbt writes its artifacts as it would).
        self.run_results = None if chosen else self._unchanged()

    def _unchanged(self) -> Path | None:
        """run_results.json's path, when manifest.json beside it is the project's as it is now."""
        try:
            record = json.loads(self._record.read_text())
            path = Path(record["run_results"])
        except (OSError, ValueError, KeyError, TypeError):
            return None
        if record.get("key") != self._key or record.get("manifest") != _stamp(path.parent / "manifest.json"):
            return None
        return path

    def arguments(self, args: list[str]) -> list[str]:
        return args if self.run_results is None else [*args, "--no-write-json"]

    def observer(self) -> Callable[[Any], None]:
        """A dbt callback that notes where dbt wrote run_results.json."""

        def observe(event: Any) -> None:
            if event.info.name == "ArtifactWritten" and event.data.artifact_type == RUN_RESULTS:
                self._written = event.data.artifact_path

        return observe

    def finish(self, result: Any) -> None:
        """After dbt ran: write run_results.json dbt was told not to, or remember where dbt wrote it with
        the manifest. A project folder that cannot be written only loses the shortcut."""
        if self.run_results is not None:
            if hasattr(result, "write"):
                result.write(str(self.run_results))
            return
        if self._written is None or self._key is None:
            return
        try:
            self._record.parent.mkdir(parents=True, exist_ok=True)
            written = Path(self._written).resolve()
            record = {
                "key": self._key,
                "run_results": str(written),
                "manifest": _stamp(written.parent / "manifest.json"),
            }
            self._record.write_text(json.dumps(record) + "\n")
        except OSError:
            return


def _stamp(path: Path) -> list[int] | None:
    """manifest.json's modification time and size: another dbt command that wrote it (another target, say)
    changes them, and the next pass writes it again."""
    try:
        status = path.stat()
    except OSError:
        return None
    return [status.st_mtime_ns, status.st_size]
