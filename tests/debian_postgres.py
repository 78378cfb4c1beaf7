"""Debian's PostgreSQL 15, which ships pgcrypto (the embedded server has none): a server of its own for the
state key's tests, in a temporary folder owned by the `postgres` OS user (initdb refuses root), on 127.0.0.1.
`make install` installs the package (postgresql-15)."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from extract.devtools.server import free_port

BIN = Path("/usr/lib/postgresql/15/bin")
OS_USER = "postgres"


def _as_owner(command: list[str]) -> list[str]:
    """`command` as the server's OS user when this runs as root, else as this user."""
    return ["runuser", "-u", OS_USER, "--", *command] if os.geteuid() == 0 else command


@contextmanager
def debian_postgres() -> Iterator[str]:
    """A running PostgreSQL 15; yields its superuser's URL. Stopped and removed afterwards."""
    if not (BIN / "pg_ctl").is_file():
        raise AssertionError(f"{BIN}/pg_ctl is missing: `make install` installs Debian's postgresql-15")
    base = Path(tempfile.mkdtemp(prefix="tidemark-pg15-"))
    if os.geteuid() == 0:
        shutil.chown(base, OS_USER, OS_USER)
    data, port = base / "data", free_port()
    run = {"check": True, "capture_output": True, "timeout": 120, "cwd": base}
    try:
        subprocess.run(
            _as_owner([str(BIN / "initdb"), "-D", str(data), "--auth=trust", "-U", "postgres", "--no-sync"]), **run
        )
        # No WAL kept past 256 MB (the default keeps up to a GB): the suite's files share the disk with it.
        options = (
            f"-p {port} -k {base} -c listen_addresses=127.0.0.1"
            " -c fsync=off -c full_page_writes=off -c max_wal_size=256MB"
        )
        subprocess.run(
            _as_owner([str(BIN / "pg_ctl"), "-D", str(data), "-l", str(base / "log"), "-w", "-o", options, "start"]),
            **run,
        )
        yield f"postgresql://postgres@127.0.0.1:{port}/postgres"
    finally:
        if (data / "postmaster.pid").exists():
            subprocess.run(_as_owner([str(BIN / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"]), **run)
        shutil.rmtree(base, ignore_errors=True)
