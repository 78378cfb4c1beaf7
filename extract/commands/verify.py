"""`python -m extract verify`: row counts and content checksums, source vs replica; exit 1 on a difference."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from extract.commands.table_selection import parser_for, selected_plans
from extract.project.verify import verify_tables


def main(argv: Sequence[str]) -> int:
    args = parser_for("verify", __doc__).parse_args(argv)
    with selected_plans(args) as (planner, plans):
        results = verify_tables(planner, list(plans))
    width = max([len(r.table) for r in results] + [5])
    print(f"{'table':<{width}}  {'source rows':>12}  {'replica rows':>12}  content    result")
    for r in results:
        replica = "missing" if r.replica_rows is None else str(r.replica_rows)
        content = "same" if r.source_checksum == r.replica_checksum else "different"
        print(f"{r.table:<{width}}  {r.source_rows:>12}  {replica:>12}  {content:<9}  {'ok' if r.ok else 'DIFFERENT'}")
    different = [r.table for r in results if not r.ok]
    if different:
        print(f"{len(different)} of {len(results)} table(s) differ: {', '.join(different)}", file=sys.stderr)
        return 1
    print(f"all {len(results)} table(s) match")
    return 0
