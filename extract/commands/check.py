"""`python -m extract check`: run the great-expectations checkpoint `tidemark` of the project's
`gx/` folder over the replicas (row count and content equal to the source's, key unique and not
null, committed watermark recent, and any expectation you add to a suite), store the results and
build Data Docs; exit 1 when an expectation fails."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from dataclasses import asdict

from extract.commands.table_selection import parser_for, selected_plans
from extract.config.spec import CHECK_MAX_LAG


def main(argv: Sequence[str]) -> int:
    parser = parser_for("check", __doc__)
    parser.add_argument(
        "--max-lag",
        help=f"how old the committed watermark may be (default {CHECK_MAX_LAG.name}, else {CHECK_MAX_LAG.default})",
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = parser.parse_args(argv)
    max_lag = CHECK_MAX_LAG.value_or(args.max_lag, "--max-lag")
    # Imported here: great_expectations takes seconds to load, and only this command needs it.
    from extract.quality.checkpoint_run import run_checkpoint
    from extract.quality.gx_project import docs_index

    with selected_plans(args) as (planner, plans):
        checks = run_checkpoint(planner, plans, max_lag.total_seconds())
        docs = docs_index(planner.settings)
    failed = [c for c in checks if not c.success]
    if args.json:
        print(
            json.dumps(
                {"success": not failed, "data_docs": str(docs), "tables": [asdict(c) for c in checks]},
                indent=2,
                default=str,
            )
        )
    else:
        width = max([len(c.table) for c in checks] + [5])
        print(f"{'table':<{width}}  {'expectations':>12}  {'failed':>6}  result")
        for c in checks:
            bad = [e for e in c.expectations if not e.success]
            print(f"{c.table:<{width}}  {len(c.expectations):>12}  {len(bad):>6}  {'ok' if c.success else 'FAILED'}")
            for e in bad:
                on = f" on {e.column}" if e.column else ""
                print(f"{'':<{width}}    {e.expectation}{on}: observed {e.observed}")
        print(f"Data Docs: {docs}")
    if failed:
        print(f"expectations failed for {', '.join(c.table for c in failed)}", file=sys.stderr)
        return 1
    return 0
