"""`python -m extract check`: great-expectations row counts, source vs replica; exit 1 on a mismatch."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from extract.commands.table_selection import parser_for, selected_plans
from extract.project.expectations import run_count_checks


def main(argv: Sequence[str]) -> int:
    args = parser_for("check", __doc__).parse_args(argv)
    with selected_plans(args) as (planner, plans):
        checks = run_count_checks(planner, list(plans), planner.settings.target)
    width = max([len(c.table) for c in checks] + [5])
    print(f"{'table':<{width}}  {'source rows':>12}  {'replica rows':>12}  result")
    for c in checks:
        replica = "missing" if c.replica_rows is None else str(c.replica_rows)
        print(f"{c.table:<{width}}  {c.source_rows:>12}  {replica:>12}  {'ok' if c.success else 'MISMATCH'}")
    failed = [c.table for c in checks if not c.success]
    if failed:
        print(f"row counts differ for {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0
