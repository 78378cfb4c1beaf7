"""`python -m extract report`: one static HTML page of the run history (sync duration, rows landed and
lag per table over time, and the failures), to open in a browser or publish."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

import psycopg

from extract.config.environment import browser_assets
from extract.config.settings import state_schema_from_env, target_from_env
from extract.core.errors import TidemarkError
from extract.report_page.history import run_history
from extract.report_page.page import render


def _days(text: str) -> int:
    if not text.isdigit() or not 1 <= int(text) <= 3660:
        raise argparse.ArgumentTypeError(f"must be a whole number of days from 1 to 3660, not {text!r}")
    return int(text)


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m extract report", description=__doc__)
    parser.add_argument("--out", type=Path, default=Path("target/tidemark_report.html"), help="where to write it")
    parser.add_argument("--days", type=_days, default=30, help="the period it covers (default 30)")
    args = parser.parse_args(argv)
    target = target_from_env()
    with psycopg.connect(target.libpq_url) as conn:
        runs = run_history(conn, state_schema_from_env(), args.days)
    assets = browser_assets()
    page = render(runs, f"tidemark runs on {target.display}", args.days, assets)
    try:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(page)
    except OSError as exc:
        raise TidemarkError(f"--out {str(args.out)!r}: {exc.strerror or exc}") from None
    print(f"wrote {args.out} ({len(runs)} runs)")
    return 0
