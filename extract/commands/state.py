"""`python -m extract state`: the state registry, per stream (replica), to read and to repair.

    state list                         every stream: reader, cursor, version
    state show TABLE [--json] [--verbose]
                                       one stream's state, its latest run's input and output state, and
                                       (--verbose) the key values its logs keep
    state history TABLE [--json]       every change of its state: version, old and new value, why, by whom
    state set TABLE --cursor VALUE     the next run reads changes since VALUE (checked against the source)
    state reset TABLE                  the next run reads every row
    state rewind TABLE --since VALUE | --to-version N
                                       the next run reads again what changed since then
    state export [--output FILE]       every stream's state as JSON, to move a deployment to another target
    state import FILE                  streams from an export, into a target without state for them

TABLE is the source table (SCHEMA.TABLE) or the replica (schema.table). set, reset, rewind and import
take --expect-version N (refused unless the state is still at version N) and are refused while the
table syncs or reconciles, or while landed runs wait for a merge. Every change is audited.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path

import psycopg

from extract.commands.state_values import check_cursor_value, rewind_target, source_position_check
from extract.commands.status import print_table
from extract.config.naming import target_names
from extract.config.seeds import read_host_aliases
from extract.config.settings import load_settings, state_key_from_env, state_schema_from_env, target_from_env
from extract.core.errors import TidemarkError
from extract.core.state_schema import StateSchema
from extract.files.checkpoint import FILE_FIELDS, SUMMARY_FIELDS, checkpoint_files, checkpoint_summary
from extract.lifecycle.reader import ReaderKind
from extract.state.key_values import key_values
from extract.state.manual import Change, apply_change, import_entries
from extract.state.registry import RegistryEntry, entries, entry
from extract.state.registry_io import audit_rows, latest_states, read_export, resolve_stream, write_export
from extract.state.run_log import ensure_state_schema


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m extract state", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    verbs = parser.add_subparsers(dest="verb", required=True, metavar="VERB")
    verbs.add_parser("list", help="every stream's state").add_argument("--json", action="store_true")
    for name, text in (("show", "one stream's state"), ("history", "every change of one stream's state")):
        verb = verbs.add_parser(name, help=text)
        verb.add_argument("table", metavar="TABLE")
        verb.add_argument("--json", action="store_true")
    verbs.choices["show"].add_argument(
        "--verbose", action="store_true", help="with the key values the logs keep (decrypted with TIDEMARK_STATE_KEY)"
    )
    change = argparse.ArgumentParser(add_help=False)
    change.add_argument("table", metavar="TABLE")
    change.add_argument("--expect-version", type=int, metavar="N", help="refused unless the state is at version N")
    verbs.add_parser("set", parents=[change], help="read changes since VALUE next").add_argument(
        "--cursor", required=True, metavar="VALUE"
    )
    verbs.add_parser("reset", parents=[change], help="read every row next")
    rewind = verbs.add_parser("rewind", parents=[change], help="read again what changed since then")
    since = rewind.add_mutually_exclusive_group(required=True)
    since.add_argument("--since", metavar="VALUE", help="a clock reading (or a modify id) before the cursor")
    since.add_argument("--to-version", type=int, metavar="N", help="the cursor value of version N")
    verbs.add_parser("export", help="every stream's state as JSON").add_argument("--output", type=Path)
    verbs.add_parser("import", help="streams from an export").add_argument("file", type=Path)
    return parser


def main(argv: Sequence[str]) -> int:
    args = _parser().parse_args(argv)
    target, state = target_from_env(), state_schema_from_env()
    with psycopg.connect(target.libpq_url, autocommit=True) as conn:
        ensure_state_schema(conn, state)
        if args.verb == "list":
            return _print([e.as_json() for e in entries(conn, state)], args.json)
        if args.verb == "export":
            return write_export(entries(conn, state), args.output)
        if args.verb == "import":
            return _import(conn, state, args.file)
        table_key = resolve_stream(conn, state, args.table, _named_key(args.table))
        if args.verb == "show":
            return _show(conn, state, args, table_key)
        if args.verb == "history":
            return _print(audit_rows(conn, state, table_key), args.json)
        return _change(conn, state, args, table_key)


def _named_key(name: str) -> str | None:
    """The replica the project's settings name for source table `name` (SCHEMA.TABLE), if it is one."""
    schema, dot, table = name.partition(".")
    if not dot:
        return None
    settings = load_settings()
    return target_names(settings.source, read_host_aliases(settings.seeds_dir), schema, table).table_key


def _current(conn: psycopg.Connection, state: StateSchema, name: str, table_key: str) -> RegistryEntry:
    found = entry(conn, state, table_key)
    if found is None:
        raise TidemarkError(f"{name} has no committed state yet: sync it (and dbt build) first")
    return found


def _change(conn: psycopg.Connection, state: StateSchema, args: argparse.Namespace, table_key: str) -> int:
    current = _current(conn, state, args.table, table_key)
    if current.reader == ReaderKind.FILES and args.verb != "reset":
        raise TidemarkError(
            f"{args.table} is a file source: its state is the checkpoint of every file it landed, not a cursor; "
            "`state reset` clears it, and the next run reads every file again"
        )
    if args.verb == "reset":
        what = "every file" if current.reader == ReaderKind.FILES else "every row"
        change = Change(table_key, None, f"reset: the next run reads {what}", args.expect_version)
    elif args.verb == "set":
        value = check_cursor_value(current, args.cursor, "--cursor")
        source_position_check(current, value, args.table)
        change = Change(table_key, value, f"set to {value}", args.expect_version)
    else:
        value, reason = rewind_target(conn, state, current, args.since, args.to_version)
        change = Change(table_key, value, reason, args.expect_version)
    before, after = apply_change(conn, state, change, args.table)
    print(
        f"{args.table}: cursor {before.cursor_value or '(none)'} -> {after.cursor_value or '(none: every row)'}"
        f", version {before.version} -> {after.version}"
    )
    return 0


def _checkpoint(conn: psycopg.Connection, state: StateSchema, table_key: str, verbose: bool) -> dict[str, object]:
    """A file source's checkpoint: its files, rows and newest file; `verbose`: every file."""
    summary = checkpoint_summary(conn, state, table_key)
    if not summary:
        return {"files": 0}
    shown: dict[str, object] = {
        k: str(v) if k == "committed_at" else v for k, v in zip(SUMMARY_FIELDS, summary[0], strict=True)
    }
    if verbose:
        kept = checkpoint_files(conn, state, table_key)
        shown["every_file"] = [dict(zip(FILE_FIELDS, row, strict=True)) for row in kept]
    return shown


def _show(conn: psycopg.Connection, state: StateSchema, args: argparse.Namespace, table_key: str) -> int:
    found = _current(conn, state, args.table, table_key)
    shown = {"state": found.as_json(), **latest_states(conn, state, table_key)}
    if found.reader == ReaderKind.FILES:
        shown["checkpoint"] = _checkpoint(conn, state, table_key, args.verbose)
    values = key_values(conn, state, table_key, state_key_from_env())
    if args.verbose:
        shown["key_values"] = values
    else:
        counts = ", ".join(f"{len(rows)} {name.replace('_', ' ')}" for name, rows in values.items())
        shown["key_values"] = f"{counts}: --verbose shows their key values"
    if args.json:
        print(json.dumps(shown, indent=2))
        return 0
    for key, value in shown.items():
        print(f"{key}: {json.dumps(value)}")
    return 0


def _import(conn: psycopg.Connection, state: StateSchema, file: Path) -> int:
    streams = read_export(file)
    for stream in streams:  # every value checked before anything is written
        if stream.reader not in set(ReaderKind):
            raise TidemarkError(f"{file}: stream {stream.table_key!r} has reader {stream.reader!r}, not a known one")
        if stream.cursor_value is not None:
            check_cursor_value(stream, stream.cursor_value, f"{file}: stream {stream.table_key!r}'s cursor_value")
    for after in import_entries(conn, state, streams):
        print(f"{after.table_key}: imported, cursor {after.cursor_value or '(none)'}, version {after.version}")
    return 0


def _print(rows: list[dict[str, object]], as_json: bool) -> int:
    if as_json:
        print(json.dumps(rows, indent=2, default=str))
        return 0
    print_table(rows)
    return 0
