"""The process that runs a pass's dbt: it imports dbt and parses the project on its own core while the
pass lands (from the first table found to have rows to read), then runs what the pass sends it.

dbt's import, its parse and its run are seconds of Python. In the pass's own process they held its
interpreter lock while the pass decided and landed (many short calls to the JVM and the databases);
here the two work side by side. The process is forked from the pass before it opens any connection,
so it starts with what the pass has imported and holds nothing of the pass's.

Messages, pickled over a pipe private to the two: the pass sends `("check",)`, `("parse",)` and
`("run", models, quiet, stdout_is_data)`; the process answers a check once, with `Checked`, and each
run with `Ran`.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Collection
from contextlib import nullcontext, redirect_stdout
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from extract.core.errors import TidemarkError, first_line, one_line
from extract.runtime import dbt_check_record
from extract.runtime.dbt_artifacts import ManifestWrites, parse_key
from extract.runtime.dbt_parse_options import parse_options
from extract.runtime.dbt_project_files import project_fingerprint
from extract.runtime.dbt_selection import arguments_for, replica_models
from extract.runtime.heap import long_lived_objects, release_frozen


@dataclass(frozen=True)
class WorkerSetup:
    #: dbt's arguments, with the project (and profiles) folder.
    args: list[str]
    project: Path
    #: Checks of the project's dbt setup that import dbt too; their TidemarkError is the check's answer.
    preflight: Callable[[], None] | None
    #: The fingerprint of what the check reads (dbt_check_record), remembered once a check passes.
    check_record: str | None


@dataclass(frozen=True)
class Checked:
    #: Why dbt's own command line refuses the arguments (None: it takes them).
    refusal: str | None
    preflight_error: TidemarkError | None


@dataclass(frozen=True)
class Ran:
    success: bool
    #: Why the run failed, in a line (None: it did not).
    failure: str | None
    #: The arguments it ran with.
    args: list[str]


def ignore_absent_seed_columns() -> None:
    """Keep agate's warning of a typed seed column the file leaves out (dbt_project.yml types every
    column sync_tables.csv may have, and most files have a few) out of dbt's output."""
    import warnings

    warnings.filterwarnings(
        "ignore", message=r'".*" does not match the name of any column in this table', category=RuntimeWarning
    )


class DbtWorker:
    """dbt's side of the pipe: one check, a parse kept from run to run unless a file of the project
    changed, and the runs."""

    def __init__(self, setup: WorkerSetup) -> None:
        self.setup = setup
        self._checked: Checked | None = None
        self._manifest: Any = None
        self._parsed: tuple[int, int] | None = None

    def serve(self, connection: Connection) -> None:
        """Answer the pass's messages until it closes the pipe. dbt is imported at the first: a pass that
        has nothing to land and a check to skip sends none, and pays nothing for dbt."""
        while True:
            try:
                message = connection.recv()
            except (EOFError, OSError):
                return
            if "dbt.cli.main" not in sys.modules:
                with long_lived_objects():
                    import dbt.cli.main  # noqa: F401
            if message[0] in {"check", "parse"} and self._checked is None:
                connection.send(self._check())
            if message[0] == "parse" and self._parsed is None and self._passed():
                self._parse()
            elif message[0] == "run":
                connection.send(self._run(*message[1:]))

    def _passed(self) -> bool:
        return self._checked is not None and self._checked.refusal is None and self._checked.preflight_error is None

    def _check(self) -> Checked:
        error = None
        try:
            if self.setup.preflight is not None:
                self.setup.preflight()
        except TidemarkError as exc:
            error = exc
        self._checked = Checked(None if error else refusal(self.setup.args), error)
        if self._passed() and self.setup.check_record is not None:
            dbt_check_record.remember(self.setup.project, self.setup.check_record)
        return self._checked

    def _parse(self) -> None:
        """Parse the project for the runs to take as it is; nothing printed: were the project broken, the
        run parses it again and reports why."""
        self._parsed = project_fingerprint(self.setup.project)
        self._manifest = None
        with long_lived_objects():
            try:
                from dbt.cli.main import dbtRunner

                command = ["parse", "--log-level", "none", "--no-write-json"]
                command += ["--project-dir", str(self.setup.project), *parse_options(self.setup.args)]
                result = dbtRunner().invoke(command)
                if result.success:
                    self._manifest = result.result
            except Exception:  # only a head start, as above
                return

    def _run(self, models: Collection[str] | None, quiet: bool, stdout_is_data: bool) -> Ran:
        args = self.setup.args if models is None else arguments_for(self.setup.args, models) or self.setup.args
        try:
            if self._parsed != project_fingerprint(self.setup.project):
                if self._parsed is not None:
                    release_frozen()  # the old parse's objects: it is replaced
                self._parse()
            if models is not None:
                args = arguments_for(self.setup.args, models, replica_models(self._manifest)) or args
            return self._invoke(args, quiet, stdout_is_data)
        except Exception as exc:  # said as dbt's failure, as dbt's own exceptions are
            return Ran(False, first_line(exc), args)
        finally:
            sys.stdout.flush()
            sys.stderr.flush()

    def _invoke(self, args: list[str], quiet: bool, stdout_is_data: bool) -> Ran:
        from dbt.cli.main import dbtRunner

        run_args = [*args, "--quiet"] if quiet and "--quiet" not in args else args
        writes = ManifestWrites(self.setup.project, run_args, self._parse_key(run_args))
        ignore_absent_seed_columns()
        with redirect_stdout(sys.stderr) if stdout_is_data else nullcontext():
            result = dbtRunner(manifest=self._manifest, callbacks=[writes.observer()]).invoke(
                writes.arguments(run_args)
            )
        writes.finish(result.result)
        return Ran(bool(result.success), None if result.success else failure_reason(result), args)

    def _parse_key(self, args: list[str]) -> str | None:
        """What the manifest of this run depends on (None: unknown, dbt writes it as it would)."""
        if self.setup.check_record is None or self._manifest is None or self._parsed is None:
            return None
        env_vars = dict(getattr(self._manifest, "env_vars", {}) or {})
        return parse_key(args, self.setup.check_record, self._parsed, env_vars)


def refusal(args: list[str]) -> str | None:
    """Why dbt's command line (its click parser, callbacks included) refuses `args`, or None."""
    import click
    from dbt.cli.main import cli

    try:
        with cli.make_context("dbt", list(args)) as context:
            name, command, rest = cli.resolve_command(context, [*context._protected_args, *context.args])
            if command is None:
                return f"dbt has no command {name!r}"
            with command.make_context(name, rest, parent=context):
                return None
    except click.exceptions.Exit:
        return "asks dbt to print something and exit (such as --help): run dbt on its own for that"
    except click.ClickException as exc:
        return exc.format_message()


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
