"""The process that runs a pass's dbt: it imports dbt (aside from an "import", for a pass of many tables) and
parses the project or reads the parse an earlier pass kept, on its own core while the pass lands (from
the first table found to have rows to read), then runs what the pass sends it.

dbt's import, its parse and its run are seconds of Python. In the pass's own process they held its
interpreter lock while the pass decided and landed (many short calls to the JVM and the databases);
here the two work side by side. The process is forked from the pass before it opens any connection,
so it starts with what the pass has imported and holds nothing of the pass's.

Messages, pickled over a pipe private to the two: the pass sends `("import",)` (unanswered), `("check",)`, `("parse",)`,
`("run", models, quiet, stdout_is_data)`, and for a run started while the tables land
(runtime/dbt_gate.py) `("start", ...)` alike, then `("go", ...)` alike, `("drop",)` to run nothing, or
`("flow",)`, words on each table and `("flowed",)` (runtime/dbt_flow.py). The process answers a check
once, with `Checked`, and each run, go, drop or flow with `Ran`.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Collection
from contextlib import redirect_stdout
from dataclasses import dataclass, replace
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from extract.core.errors import TidemarkError, first_line
from extract.runtime import dbt_check_record
from extract.runtime.dbt_artifacts import ManifestWrites, parse_key
from extract.runtime.dbt_failure import failure_reason
from extract.runtime.dbt_gate import Gate, Word
from extract.runtime.dbt_import import dbt_imported, import_aside, import_dbt
from extract.runtime.dbt_parse_cache import ParseCache, Stamp
from extract.runtime.dbt_parse_options import parse_options
from extract.runtime.dbt_project_files import fingerprint_of, project_files, project_fingerprint
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
    #: Of a run that flowed (runtime/dbt_flow.py), the replicas it left for the pass to merge after.
    unmerged: tuple[str, ...] = ()


#: The answer to a drop: the pass found nothing to merge after all.
NOTHING_RUN = Ran(True, None, [])


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
        self._kept = ParseCache(setup.project, setup.args, setup.check_record)
        #: A parse of dbt's own, kept for the next pass once the run that waits for it is answered.
        self._to_keep: Stamp | None = None

    def serve(self, connection: Connection) -> None:
        """Answer the pass's messages until it closes the pipe. dbt is imported at the first (a loop's sync
        with nothing to land sends none), or aside from an "import" on, which asks nothing else."""
        importing = None
        while True:
            try:
                message = connection.recv()
            except (EOFError, OSError):
                return
            if message[0] == "import":
                if importing is None and not dbt_imported():
                    importing = import_aside()
                continue
            if importing is not None:
                importing.join()
                importing = None
            import_dbt()  # at once when done aside; else now, or again as it failed aside
            if message[0] in {"check", "parse", "start"} and self._checked is None:
                connection.send(self._check())
            if message[0] == "parse" and self._parsed is None and self._passed():
                self._parse()
            elif message[0] == "start" and self._passed():
                try:
                    connection.send(self._held_run(connection, message))
                except (EOFError, OSError):
                    return  # the pass ended before its word
            elif message[0] in {"run", "go"}:
                connection.send(self._run(*message[1:]))
            elif message[0] == "drop":
                connection.send(NOTHING_RUN)
            if self._to_keep is not None and message[0] in {"start", "run", "go"}:
                stamp, self._to_keep = self._to_keep, None
                self._kept.save(self._manifest, stamp)  # after the answer: the pass goes on meanwhile

    def _held_run(self, connection: Connection, started: Word) -> Ran:
        """A run started now and held before it touches the database until the pass's word: the run
        goes on when the word asks for it, else the word is run afresh (nothing for a drop)."""
        gate = Gate(connection, started, self._same_run)
        models, quiet, stdout_is_data = started[1:]
        ran = self._run(models, quiet, stdout_is_data, gate)
        word = gate.wait()
        if gate.flow is not None or gate.opened:  # a flow's answer says what it left unmerged
            return replace(NOTHING_RUN if gate.stopped else ran, unmerged=gate.unmerged())
        if not gate.stopped and self._same_run(started, word):
            gate.release()  # it ended before any node (none selected, or it failed): as the word's run would
            return ran
        return NOTHING_RUN if word[0] == "drop" else self._run(*word[1:])

    def _same_run(self, started: Word, word: Word) -> bool:
        """Whether the pass's word asks for the run `started`, on the project as it was parsed."""
        return word[1:] == started[1:] and self._parsed == project_fingerprint(self.setup.project)

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
        files = project_files(self.setup.project)
        self._parsed = fingerprint_of(files)
        self._manifest = None
        self._to_keep = None
        with long_lived_objects():
            self._manifest = self._kept.load(files)
            if self._manifest is not None:
                return
            try:
                from dbt.cli.main import dbtRunner

                command = ["parse", "--log-level", "none", "--no-write-json"]
                command += ["--project-dir", str(self.setup.project), *parse_options(self.setup.args)]
                result = dbtRunner().invoke(command)
                if result.success:
                    self._manifest = result.result
                    self._to_keep = self._kept.stamp(self._manifest, files)
            except Exception:  # only a head start, as above
                return

    def _run(self, models: Collection[str] | None, quiet: bool, stdout_is_data: bool, gate: Gate | None = None) -> Ran:
        args = self.setup.args if models is None else arguments_for(self.setup.args, models) or self.setup.args
        try:
            if self._parsed != project_fingerprint(self.setup.project):
                if self._parsed is not None:
                    release_frozen()  # the old parse's objects: it is replaced
                self._parse()
            if models is not None:
                args = arguments_for(self.setup.args, models, replica_models(self._manifest)) or args
            return self._invoke(args, quiet, stdout_is_data, gate)
        except Exception as exc:  # said as dbt's failure, as dbt's own exceptions are
            return Ran(False, first_line(exc), args)
        finally:
            sys.stdout.flush()
            sys.stderr.flush()

    def _invoke(self, args: list[str], quiet: bool, stdout_is_data: bool, gate: Gate | None) -> Ran:
        from dbt.cli.main import dbtRunner

        run_args = [*args, "--quiet"] if quiet and "--quiet" not in args else args
        writes = ManifestWrites(self.setup.project, run_args, self._parse_key(run_args))
        ignore_absent_seed_columns()
        output = sys.stderr if stdout_is_data else sys.stdout
        callbacks = [writes.observer()] if gate is None else [writes.observer(), gate.callback]
        with redirect_stdout(output if gate is None else gate.hold(output)):
            result = dbtRunner(manifest=self._manifest, callbacks=callbacks).invoke(writes.arguments(run_args))
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
