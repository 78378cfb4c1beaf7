"""The last `--dbt` setup a pass found right, remembered in the project's target/ folder.

Checking `--dbt`'s arguments and the dbt profile waits for dbt's import (about 3 s of CPU). Input
found right before, with the same files and the same dbt, is right again: a pass that the record
vouches for goes ahead while dbt is imported, and one with nothing to land ends without waiting for
it. The check itself is still made, on dbt's import thread, and always before dbt runs.

The record is a hash of what the check reads: the arguments, dbt's version, dbt_project.yml,
profiles.yml, the target's server and database, DBT_TARGET, DBT_WRITE_JSON, and the values of the environment
variables the two files read, but for those whose names say they are secret (a password names no
server or database, so the check does not depend on it). A change in any of them makes a new check
before anything is written.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from extract.config import spec
from extract.config.dbt_profile import profiles_file
from extract.config.urls import DatabaseUrl

FILE_NAME = "tidemark_dbt_check"

#: `env_var('NAME'` in a dbt file: the variables it reads.
_ENV_VAR = re.compile(r"""env_var\(\s*['"]([^'"]+)['"]""")
#: Names of variables whose values stay out of the hash.
_SECRET = re.compile(r"PASS|SECRET|TOKEN|KEY|CREDENTIAL|AUTH", re.IGNORECASE)


def fingerprint(args: list[str], project: Path, target: DatabaseUrl, env: Mapping[str, str]) -> str:
    """What the check of `args` for `project` depends on, as one hash."""
    hashed = hashlib.sha256()
    try:
        dbt_version = version("dbt-core")
    except PackageNotFoundError:
        dbt_version = "none"
    for part in (
        dbt_version,
        *args,
        target.host,
        str(target.port),
        target.database,
        spec.DBT_TARGET.read(env) or "",
        spec.DBT_WRITE_JSON.read(env) or "",
    ):
        hashed.update(part.encode() + b"\0")
    for path in (project / "dbt_project.yml", profiles_file(project, env)):
        text = path.read_bytes() if path.is_file() else b"(none)"
        hashed.update(str(path).encode() + b"\0" + text + b"\0")
        for name in sorted(set(_ENV_VAR.findall(text.decode(errors="replace")))):
            if not _SECRET.search(name):
                hashed.update(f"{name}={env.get(name, '(unset)')}".encode() + b"\0")
    return hashed.hexdigest()


def _path(project: Path) -> Path:
    return project / "target" / FILE_NAME


def vouched(project: Path, digest: str) -> bool:
    """Whether the last check that passed in `project` was of this fingerprint."""
    try:
        return _path(project).read_text().strip() == digest
    except OSError:
        return False


def remember(project: Path, digest: str) -> None:
    """Record a check that passed; a project folder that cannot be written only loses the shortcut."""
    path = _path(project)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(digest + "\n")
    except OSError:
        return
