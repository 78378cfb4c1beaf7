"""Why a dbt run failed, in one line, for the pass's report and its message."""

from __future__ import annotations

from typing import Any

from extract.core.errors import first_line, one_line


def failure_reason(result: Any) -> str:
    """One line on why a dbt run failed: its exception, else the first failed nodes and their messages."""
    if result.exception is not None:
        return first_line(result.exception)
    # A database error's message runs over lines (what failed, then the database's words): joined into one.
    failed = [
        f"{entry.node.name}: {' '.join(str(entry.message).split())}"
        for entry in getattr(result.result, "results", []) or []
        if str(getattr(entry, "status", "")) in {"error", "fail", "runtime error"}
    ]
    if not failed:
        return "dbt reported failure"
    more = f" (and {len(failed) - 3} more)" if len(failed) > 3 else ""
    return one_line("; ".join(failed[:3]) + more)
