"""The wide section of `make bench`: 1,000 tables of 1,000 rows, each with a key and a cursor, synced by
tidemark as the README's one command (`--all --dbt build`), by tidemark as the syncs of one `--every`
process, by dlt and by Sling. Each makes the same three passes in the same run: the first, one with
nothing changed, and one after 10 tables changed (a row in a hundred each). After every pass each copy
is checked against the source (rows and the sum of a column over every table).

A pass of a few seconds varies by a second between runs on a shared machine, so the passes after the
first are made REPEATS times (the 10 tables changed anew before each), and the median counts. A tool
whose pass took longer than LONG_PASS_SECONDS (Sling's take minutes) makes it once: its noise is small
beside it, and two more of each would add half an hour.

`python -m bench.wide [--tables N] [--rows N]` runs this section alone against the bench's server.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench import databases, wide_source
from bench.alone import OnPeerFailure, run_section
from bench.databases import BenchDatabases
from bench.peers import runner
from bench.peers.wide import DltWide, SlingWide
from bench.report import print_table
from bench.wide_tools import TidemarkCommand, TidemarkEvery, Tool

TABLES = 1000
ROWS = 1000
CHANGED_TABLES = 10
PASSES = ("first", "nothing changed", f"{CHANGED_TABLES} tables changed")
#: The goals: seconds for a pass with nothing changed, and how much faster than dlt.
GOAL_QUIET_COMMAND = 5.0
GOAL_QUIET_EVERY = 2.0
GOAL_CHANGED_VS_DLT = 3.0
REPEATS = 3
LONG_PASS_SECONDS = 60.0
#: tidemark's target databases, one per way of running it, as projects sharing a database would each have a
#: state schema of their own: in the bench's, a first pass would find the catalog state of the run's other
#: sections, take their tables for changes to its own files, and hold dbt until every table had landed.
COMMAND_DB = "bench_wide_command"
EVERY_DB = "bench_wide_every"


def _check(tool: Tool, url: str, tables: list[str], expected: tuple[int, str]) -> None:
    copied = wide_source.totals(url, [tool.table(name) for name in tables])
    if copied != expected:
        raise RuntimeError(f"{tool.name}: the copy holds (rows, sum) {copied}, the source {expected}")


def measure(
    bench_db: BenchDatabases,
    work: Path,
    say: Callable[[str], None],
    tables: int = TABLES,
    rows: int = ROWS,
    peers: bool = True,
    section: dict[str, Any] | None = None,
    on_peer_failure: OnPeerFailure | None = None,
) -> dict[str, Any]:
    """The section's figures, filled in `section` (when given) as each pass is timed: a failure later
    keeps them. A peer that fails is reported to `on_peer_failure` and left out of the passes after."""
    section = {} if section is None else section
    section.update({"tables": tables, "rows_per_table": rows, "passes": list(PASSES), "repeats": REPEATS})
    say(f"wide: {tables:,} tables of {rows:,} rows in the source's schema {wide_source.SCHEMA}")
    wide_source.create(bench_db.source_url, tables, rows)
    names = [wide_source.table_name(number) for number in range(tables)]
    qualified = [(wide_source.SCHEMA, name) for name in names]
    expected = wide_source.totals(bench_db.source_url, qualified)
    changed = names[:: max(1, tables // CHANGED_TABLES)][:CHANGED_TABLES]
    say("wide: setting up the tidemark projects (generate, dbt seed)")
    command_env, command_url = bench_db.other_target(COMMAND_DB)
    command = TidemarkCommand(work / "wide-command", command_env, command_url)
    every_env, every_url = bench_db.other_target(EVERY_DB)
    every = TidemarkEvery(work / "wide-every", every_env, every_url)
    tidemark_urls = (command_url, every_url)
    tools: list[tuple[Tool, str]] = [(command, command_url), (every, every_url)]
    if peers:
        for kind in (DltWide, SlingWide):
            tools.append(
                (kind(work, bench_db.source_url, bench_db.target_url, wide_source.SCHEMA), bench_db.target_url)
            )
    section["seconds"] = {tool.name: {} for tool, _ in tools}
    section["rounds_seconds"] = {tool.name: {} for tool, _ in tools}
    section["tidemark_tables_landed"] = {command.name: command.landed, every.name: every.landed}
    try:
        for number, label in enumerate(PASSES):
            for repeat in range(1 if number == 0 else REPEATS):
                if number == 2:
                    section["rows_changed"] = wide_source.change(bench_db.source_url, changed)
                    say(f"wide: changed {section['rows_changed']:,} rows in {len(changed)} tables")
                    expected = wide_source.totals(bench_db.source_url, qualified)
                said = label if number == 0 else f"{label} pass ({repeat + 1} of {REPEATS})"
                for tool, url in list(tools):
                    try:
                        if _time_pass(bench_db, tidemark_urls, section, tool, label, say, said):
                            _check(tool, url, names, expected)
                    except Exception as exc:
                        if tool in (command, every) or on_peer_failure is None:
                            raise
                        on_peer_failure(f"wide: {tool.name}, {label} pass", exc)
                        tools.remove((tool, url))
    finally:
        every.stop()
    return section


def _time_pass(
    bench_db: BenchDatabases,
    tidemark_urls: tuple[str, ...],
    section: dict[str, Any],
    tool: Tool,
    label: str,
    say: Callable[[str], None],
    said: str,
) -> bool:
    """One more of `tool`'s passes `label`, unless its first took long (False: it made none, and its copy
    is behind the source until its next pass); the median of them counts."""
    timed: list[float] = section["rounds_seconds"][tool.name].setdefault(label, [])
    if timed and timed[0] > LONG_PASS_SECONDS:
        return False
    # Vacuumed too: a step that creates a thousand tables leaves autovacuum a thousand to analyse, which
    # would otherwise run during the next tool's pass on the same two cores.
    bench_db.settle(vacuum=True, also=tidemark_urls)
    say(f"wide: {tool.name}: {said}")
    timed.append(tool.sync().seconds)
    section["seconds"][tool.name][label] = statistics.median(timed)
    return True


def _ratio(ours: float, theirs: float | None) -> str:
    # Two decimals: a first pass 4% faster than dlt's would print as 1.0x, as if it were a tie.
    return f"{theirs / ours:.2f}x" if theirs and ours else "-"


def _seconds(median: float, rounds: list[float]) -> str:
    spread = f" ({min(rounds):.1f}-{max(rounds):.1f})" if len(rounds) > 1 else ""
    return f"{median:.1f}{spread}"


def print_wide(results: dict[str, Any]) -> None:
    section = results.get("wide")
    if not section:
        return
    seconds: dict[str, dict[str, float]] = section["seconds"]
    dlt = seconds.get(DltWide.name, {})
    tools = list(seconds)
    rounds: dict[str, dict[str, list[float]]] = section.get("rounds_seconds", {})
    rows = [
        (label, *(_seconds(seconds[tool][label], rounds.get(tool, {}).get(label, [])) for tool in tools))
        for label in section["passes"]
    ]
    title = f"Wide: {section['tables']:,} tables of {section['rows_per_table']:,} rows, seconds per pass"
    if section.get("repeats", 1) > 1:
        title += f" (after the first, the median of {section['repeats']}: shortest to longest in brackets)"
    print_table(title, ("pass", *tools), rows)
    quiet, changed = section["passes"][1], section["passes"][2]
    command, every = seconds[TidemarkCommand.name], seconds[TidemarkEvery.name]
    goals = [
        ("nothing changed, one command", f"{command[quiet]:.1f} s", f"at most {GOAL_QUIET_COMMAND:.0f} s"),
        ("nothing changed, --every", f"{every[quiet]:.1f} s", f"at most {GOAL_QUIET_EVERY:.0f} s"),
    ]
    if dlt:
        goals += [
            (f"{changed}, vs dlt", _ratio(command[changed], dlt[changed]), f"{GOAL_CHANGED_VS_DLT:.0f}x faster"),
            ("first pass, vs dlt", _ratio(command[section["passes"][0]], dlt[section["passes"][0]]), "faster"),
        ]
    print_table("Wide: the goals (one command unless said)", ("figure", "measured", "goal"), goals)


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.wide", description=__doc__)
    parser.add_argument("--tables", type=int, default=TABLES)
    parser.add_argument("--rows", type=int, default=ROWS)
    parser.add_argument("--no-peers", action="store_true", help="leave dlt and Sling out")
    args = parser.parse_args()
    if args.tables < CHANGED_TABLES or args.rows < 100:
        parser.error(f"--tables must be at least {CHANGED_TABLES} (not {args.tables}), --rows 100 (not {args.rows})")
    missing = None if args.no_peers else runner.available()
    if missing:
        parser.error(f"the peers are not installed ({missing}): run `make bench-peers`, or pass --no-peers")
    return run_section(
        "wide",
        f"wide-{args.tables}x{args.rows}",
        lambda bench_db, say, section, on_peer_failure: measure(
            bench_db, databases.WORK_DIR, say, args.tables, args.rows, not args.no_peers, section, on_peer_failure
        ),
        print_wide,
    )


if __name__ == "__main__":
    sys.exit(main())
