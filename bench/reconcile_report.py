"""The reconcile section's table on the terminal."""

from __future__ import annotations

from typing import Any

from bench.report import print_table


def _mib(n: int) -> str:
    return f"{n / 2**20:,.0f} MiB"


def print_reconcile(results: dict[str, Any]) -> None:
    section = results.get("reconcile")
    if not section:
        return
    levels = section["levels"]
    zero = next((level["tidemark_seconds"] for level in levels if level["differences"] == 0), None)
    rows = []
    for level in levels:
        found = level["tidemark_found"]
        ours = level["tidemark_seconds"]
        theirs = level["reladiff_seconds"]  # None: the run left the peers out
        rows.append(
            (
                f"{level['differences']:,}",
                f"{level['count_seconds']:.1f}",
                f"{level['key_scan_seconds']:.1f}",
                "-" if theirs is None else f"{theirs:.1f} ({level['reladiff_keys']:,} keys)",
                f"{ours:.1f} ({sum(found.values()):,} keys)",
                "-" if theirs is None else f"{theirs / ours:.2f}x",
                f"{ours / zero:.2f}x" if zero else "-",
            )
        )
    print_table(
        f"Reconcile of {results['rows']:,} rows (nothing planted: {_first(section, zero)}); seconds",
        (
            "differences",
            "count(*) both",
            "key scan",
            "reladiff (finds)",
            "tidemark (finds + repairs)",
            "reladiff / tidemark",
            "tidemark / at 0",
        ),
        rows,
    )
    peaks = [f"{_mib(m['reconcile_peak_rss_driver'])} at {m['rows']:,} rows" for m in results["driver_memory"]]
    print("  tidemark reconcile's driver peak: " + ", ".join(peaks))
    by_level = _by_level(results["driver_memory"])
    if by_level:
        print("  by level, at the larger size against the smaller: " + "; ".join(by_level))


def _by_level(memory: list[dict[str, Any]]) -> list[str]:
    """Each level's driver peak at both sizes (the memory probe's and the section's), where both were measured."""
    measured = [m for m in memory if m.get("reconcile_levels")]
    if len(measured) < 2:
        return []
    small, large = measured[0]["reconcile_levels"], measured[-1]["reconcile_levels"]
    return [
        f"{b['differences']:,} / {a['differences']:,} differences: {_mib(b['peak_rss_driver'])} / "
        f"{_mib(a['peak_rss_driver'])} ({b['peak_rss_driver'] / a['peak_rss_driver']:.2f}x)"
        for a, b in zip(small, large, strict=False)
    ]


def _first(section: dict[str, Any], zero: float | None) -> str:
    """The first reconciles: of the fresh replica, and of the replica the rounds changed, where measured."""
    said = [
        f"{what} {section[key]:.1f} s{_against(section[key], zero)}"
        for key, what in (
            ("first_seconds", "the first of the fresh replica"),
            ("after_changes_seconds", "the first after the rounds"),
        )
        if section.get(key) is not None
    ]
    return "; ".join(said) or "no first reconcile measured"


def _against(first: float, later: float | None) -> str:
    return f", {first / later:.2f}x the later one with nothing planted" if later else ""
