"""`python -m extract server start|stop|status`: the embedded PostgreSQL under .tidemark/."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from extract.config.environment import pg_port, tidemark_home
from extract.devtools import server

home = tidemark_home
port = pg_port


def data_dir() -> Path:
    return home() / "pg"


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m extract server", description="the embedded PostgreSQL")
    parser.add_argument("action", choices=["start", "stop", "status"])
    args = parser.parse_args(argv)
    if args.action == "start":
        url = server.start(data_dir(), port())
        print(f"PostgreSQL is running on 127.0.0.1:{port()} (data in {data_dir()}); superuser URL {url}")
    elif args.action == "stop":
        print("stopped" if server.stop(data_dir()) else "not running")
    else:
        running = server.is_running(data_dir())
        print(f"{'running' if running else 'not running'} ({data_dir()})")
        return 0 if running else 1
    return 0
