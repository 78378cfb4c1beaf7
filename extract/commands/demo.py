"""`python -m extract demo setup|change`: generated demo databases in the embedded PostgreSQL."""

from __future__ import annotations

import argparse
import shutil
from collections.abc import Sequence
from pathlib import Path

import psycopg
from psycopg import sql

from extract.commands.server import data_dir, home, port
from extract.devtools import server
from extract.devtools.ddl_times import install_ddl_times
from extract.devtools.demo.changes import apply_changes
from extract.devtools.demo.drops import drop_first_days, drop_next_day
from extract.devtools.demo.generator import create_and_fill

SOURCE_DB = "salesdb"
TARGET_DB = "tidemark"


def _url(database: str) -> str:
    return f"postgresql://{server.SUPERUSER}@127.0.0.1:{port()}/{database}"


def drops_folder() -> Path:
    """Where the demo's file source finds its files (seeds/file_sources.csv: .tidemark/drops/returns)."""
    return home() / "drops" / "returns"


def write_env() -> None:
    lines = {
        "TIDEMARK_SOURCE_URL": _url(SOURCE_DB),
        "TIDEMARK_TARGET_URL": _url(TARGET_DB),
        "TIDEMARK_TARGET_HOST": "127.0.0.1",
        "TIDEMARK_TARGET_PORT": str(port()),
        "TIDEMARK_TARGET_USER": server.SUPERUSER,
        "TIDEMARK_TARGET_PASSWORD": "",
        "TIDEMARK_TARGET_DBNAME": TARGET_DB,
        "DBT_PROFILES_DIR": str(home()),
        # The demo's great-expectations project (suites, results, Data Docs) stays out of the checkout.
        "TIDEMARK_GX_ROOT": str(home()),
    }
    (home() / "demo.env").write_text("".join(f"export {k}='{v}'\n" for k, v in lines.items()))


def setup(size: int) -> None:
    admin_url = server.start(data_dir(), port())
    with psycopg.connect(admin_url, autocommit=True) as admin:
        for database in (SOURCE_DB, TARGET_DB):
            admin.execute(sql.SQL("drop database if exists {} with (force)").format(sql.Identifier(database)))
            admin.execute(sql.SQL("create database {}").format(sql.Identifier(database)))
    with psycopg.connect(_url(SOURCE_DB)) as conn:
        install_ddl_times(conn)  # the stand-in stamps definitions as SQL Server does
        counts = create_and_fill(conn, size)
    shutil.copyfile("profiles.yml.example", home() / "profiles.yml")
    shutil.rmtree(home() / "gx", ignore_errors=True)
    (home() / "gx").mkdir()
    for starter in ("great_expectations.yml", ".gitignore"):
        shutil.copyfile(Path("gx") / starter, home() / "gx" / starter)
    write_env()
    summary = ", ".join(f"{table} {rows}" for table, rows in counts.items())
    print(f"demo source {SOURCE_DB} filled: {summary}")
    dropped = drop_first_days(drops_folder())
    print(f"demo file drops: {len(dropped)} files in {drops_folder()}")
    print(f"connection settings written to {home() / 'demo.env'}")


def change(seed: int) -> None:
    with psycopg.connect(_url(SOURCE_DB)) as conn:
        done = apply_changes(conn, seed)
    print("source changes: " + ", ".join(f"{n} {what}" for what, n in done.items()))
    if drops_folder().is_dir():
        new, corrected = drop_next_day(drops_folder(), seed)
        print(f"file drops: {new.name} new, {corrected.name} corrected")


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m extract demo", description="demo databases")
    sub = parser.add_subparsers(dest="action", required=True)
    setup_parser = sub.add_parser("setup", help="(re)create the demo source and target databases")
    setup_parser.add_argument("--size", type=int, default=2000, help="number of customers (default 2000)")
    change_parser = sub.add_parser("change", help="apply a batch of changes to the demo source")
    change_parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    if args.action == "setup":
        if args.size < 1:
            parser.error(f"--size must be at least 1, not {args.size}")
        setup(args.size)
    else:
        change(args.seed)
    return 0
