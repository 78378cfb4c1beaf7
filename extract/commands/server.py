"""`python -m extract server start|stop|status`: the embedded PostgreSQL under .tidemark/."""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from pathlib import Path

from extract import server

DEFAULT_PORT = 54329


def home() -> Path:
    return Path(os.environ.get("TIDEMARK_HOME", ".tidemark")).resolve()


def port() -> int:
    text = os.environ.get("TIDEMARK_PG_PORT", str(DEFAULT_PORT))
    if not text.isdigit() or not 0 < int(text) < 65536:
        from extract.errors import TidemarkError

        raise TidemarkError(f"TIDEMARK_PG_PORT must be a port number (1 to 65535), not {text!r}")
    return int(text)


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
