"""`--dbt ARGS`: dbt run by a helper process of the pass's once every table has landed.

The helper (runtime/dbt_worker.py) imports dbt, checks the arguments and parses the project on its own
core while the tables land; what is left after landing is dbt's run. The outcome is the same as running
`dbt ARGS` afterwards, but for target/manifest.json, written again only when the project changed
(runtime/dbt_artifacts.py).
"""

from __future__ import annotations

import atexit
import os
import shlex
import sys
import threading
from collections.abc import Callable, Collection
from pathlib import Path
from typing import Any

from extract.config.environment import dbt_profiles_dir
from extract.core.errors import EXIT_DBT_FAILED, TidemarkError
from extract.runtime import dbt_check_record
from extract.runtime.dbt_gate import FLOWING_COMMANDS, HELD_COMMANDS
from extract.runtime.dbt_selection import arguments_for
from extract.runtime.dbt_worker import Checked, DbtWorker, Ran, WorkerSetup
from extract.runtime.helper_process import end_helper, fork_helper


def parse_dbt_args(text: str) -> list[str]:
    """`--dbt`'s value as dbt's arguments: a dbt command and its options, as on dbt's command line."""
    try:
        args = shlex.split(text)
    except ValueError as exc:
        raise TidemarkError(f"--dbt {text!r}: {exc}") from None
    if not args or args[0].startswith("-"):
        raise TidemarkError(f"--dbt {text!r} does not start with a dbt command (such as build, or run)")
    if args[0] in {"init", "debug", "deps", "clean", "docs", "parse"}:
        raise TidemarkError(f"--dbt {text!r}: dbt {args[0]} does not merge anything; run it on its own")
    return args


CLOSED = "it was closed"
#: How long the pass's exit waits for dbt's process to finish a parse under way and end on its own.
CLOSE_GRACE_SECONDS = 5.0
#: The fewest tables of a pass that has dbt imported ahead (DbtProcess.import_ahead_for).
IMPORT_AHEAD_TABLES = 50


class DbtProcessEnded(TidemarkError):
    """dbt's helper process ended without answering (killed, or out of memory): dbt failed."""

    exit_code = EXIT_DBT_FAILED


class DbtProcess:
    """dbt in a helper process forked at construction, which imports dbt and checks the arguments when
    asked (at once when no record vouches for them) and parses the project once `prepare` says dbt will
    run (with `parse_now`, at once); `run` waits for it, then runs dbt there. Run again
    (`--every`), it reuses the parsed project unless a file of it changed. Made before the pass starts a
    thread or opens a connection (runtime/helper_process.py)."""

    def __init__(
        self,
        args: list[str],
        project_dir: Path,
        parse_now: bool = True,
        import_ahead: bool = False,
        preflight: Callable[[], None] | None = None,
        fingerprint: Callable[[list[str]], str] | None = None,
        failure_hint: Callable[[], str] | None = None,
    ) -> None:
        #: As given to --dbt, for messages.
        self.requested = args
        self.args = args if "--project-dir" in args else [*args, "--project-dir", str(project_dir)]
        profiles = dbt_profiles_dir(project_dir)
        if "--profiles-dir" not in args and profiles is not None:
            self.args += ["--profiles-dir", str(profiles)]
        project = Path(self.args[self.args.index("--project-dir") + 1])
        #: Why the last run failed, in a line: dbt's exception, or the nodes that failed and dbt's message.
        self.failure: str | None = None
        #: The arguments of the last run; None: it had nothing to merge, and dbt did not run.
        self.ran_with: list[str] | None = None
        #: What the line of a failed run adds (empty: nothing), asked only once a run has failed.
        self._failure_hint = failure_hint
        #: What the check reads, hashed (runtime/dbt_check_record.py): when the last check that passed was
        #: of the same, a pass need not wait for dbt's import before it starts (see `vouched`).
        check_record = None if fingerprint is None else fingerprint(self.args)
        self.vouched = check_record is not None and dbt_check_record.vouched(project, check_record)
        self._checked: Checked | None = None
        self._asked: set[str] = set()
        self._asking = threading.Lock()
        self._ended: str | None = None
        #: A run started while the tables land waits for its word (`start`), or merges them as they land.
        self._held = False
        self._flowing = False
        self._telling = threading.Lock()  # the table threads tell a flow what landed
        #: Whether a pass of many tables has dbt imported before any of them is found to land.
        self._import_ahead = import_ahead
        worker = DbtWorker(WorkerSetup(self.args, project, preflight, check_record))
        self._pid, self._pipe = fork_helper(worker.serve)
        atexit.register(self.close)
        # A check that a record vouches for is made once it is asked for or dbt is to run, if ever.
        if parse_now:
            self.prepare()
        elif not self.vouched:
            self._ask("check")

    def _ask(self, what: str) -> None:
        with self._asking:  # the pass's table threads prepare it as they find rows to read
            if what not in self._asked:
                self._asked.add(what)
                self._send((what,))

    def _send(self, message: tuple[Any, ...]) -> None:
        if self._ended is None:
            try:
                self._pipe.send(message)
            except OSError:
                self._helper_ended()

    def _answer(self) -> Any:
        """The helper's next answer; DbtProcessEnded when it ended without one."""
        if self._ended is None:
            try:
                return self._pipe.recv()
            except (EOFError, OSError):
                self._helper_ended()
        raise DbtProcessEnded(f"--dbt {shlex.join(self.requested)!r}: {self._ended}")

    def _helper_ended(self) -> None:
        _, status = os.waitpid(self._pid, 0)
        self._ended = f"dbt's process ended before it answered ({_how_it_ended(status)})"

    def import_ahead_for(self, tables: int) -> None:
        """dbt imported aside from now on, if this process imports ahead and a pass checks at least
        IMPORT_AHEAD_TABLES `tables` (their checks last long enough to hide it). Fewer wait for a check
        that finds rows (`prepare`): on one table with nothing to land, the import cost 0.15 s of 0.8."""
        if self._import_ahead and tables >= IMPORT_AHEAD_TABLES:
            self._ask("import")

    def prepare(self) -> None:
        """dbt will run: import it and parse the project now, while the tables land (from any thread)."""
        self._ask("parse")

    def check_arguments(self) -> None:
        """Refuse a dbt setup the preflight refuses, and arguments dbt's own command line would refuse
        (waits for dbt's import, not its parse)."""
        self._ask("check")
        if self._checked is None:
            self._checked = self._answer()
        if self._checked.preflight_error is not None:
            raise self._checked.preflight_error
        if self._checked.refusal is not None:
            raise TidemarkError(f"--dbt {shlex.join(self.requested)!r}: {self._checked.refusal}")

    def start(self, quiet: bool, stdout_is_data: bool, models: Collection[str], flow: bool = False) -> None:
        """Start the run of `models` now, while the tables land: dbt builds its graph and selects, then
        waits before its first query for `run`, which lets it go on when it asks for the same, or runs
        what it asks for instead (runtime/dbt_gate.py). With `flow` (for a command that merges), it goes
        on at once and merges each table once the pass says it `landed` (runtime/dbt_flow.py)."""
        self._drop()
        flow = flow and self.args[0] in FLOWING_COMMANDS
        if self.args[0] in HELD_COMMANDS and arguments_for(self.args, models) is not None:
            self._ask("parse")
            self._send(("start", sorted(models), quiet, stdout_is_data))
            if flow:
                self._send(("flow",))
            self._held = self._ended is None and not flow
            self._flowing = self._ended is None and flow

    def landed(self, model: str, mergeable: bool) -> None:
        """Tell a flowing run that the table of replica `model` has landed (`mergeable`: its merge can
        go on as parsed), or not (from any thread)."""
        if self._flowing:
            with self._telling:
                self._send(("landed", model, mergeable))

    def _drop(self) -> None:
        """A run started and never asked for (the pass that started it failed): it runs nothing more."""
        if self._held or self._flowing:
            self._held = self._flowing = False
            self._send(("drop",))
            try:
                self._answer()
            except DbtProcessEnded:
                return  # nothing is held by a process that has ended

    def run(self, quiet: bool, stdout_is_data: bool, models: Collection[str] | None = None) -> bool:
        """Run dbt (for `models` only, see `dbt_selection.arguments_for`); its output goes to stderr when stdout carries
        --json. True when dbt succeeded, or had nothing to merge."""
        self.failure = None
        self.ran_with = self.args if models is None else arguments_for(self.args, models)
        if self.ran_with is None:
            self._drop()
            if not quiet:
                print(f"dbt {' '.join(self.requested)}: no table has a run waiting for a merge", file=sys.stderr)
            return True
        sys.stdout.flush()  # what the pass printed comes before what dbt prints
        sys.stderr.flush()
        try:
            self.prepare()
            self.check_arguments()
            ran = (
                self._flowed(models, quiet, stdout_is_data)
                if self._flowing
                else self._go(models, quiet, stdout_is_data)
            )
        except DbtProcessEnded:
            ran = Ran(False, self._ended, self.ran_with)
        self.ran_with = ran.args
        if not ran.success:
            hint = self._failure_hint() if self._failure_hint else ""
            self.failure = (ran.failure or "dbt reported failure") + hint
        return ran.success

    def _go(self, models: Collection[str] | None, quiet: bool, stdout_is_data: bool) -> Ran:
        word = "go" if self._held else "run"
        self._held = False
        self._send((word, None if models is None else sorted(models), quiet, stdout_is_data))
        ran: Ran = self._answer()
        return ran

    def _flowed(self, models: Collection[str] | None, quiet: bool, stdout_is_data: bool) -> Ran:
        """The end of a flowing run: what it left unmerged and still waits (a table that failed with
        older runs waiting, one whose files are written again) is run now."""
        self._flowing = False
        with self._telling:
            self._send(("flowed",))
        ran: Ran = self._answer()
        left = sorted(set(models or ()) & set(ran.unmerged))
        return self._go(left, quiet, stdout_is_data) if ran.success and left else ran

    @property
    def ended(self) -> str | None:
        """Why dbt's process ended while the pass still needed it (None: it has not): no later run of
        this pass can merge."""
        return None if self._ended == CLOSED else self._ended

    def close(self) -> None:
        """End the helper (at the pass's exit). One that only imported dbt or checked is of no use to
        anyone and is killed; one that parsed or ran ends on its own (a parse under way is finished, up
        to a bound), so that dbt's clean-up runs."""
        if self._ended is None:
            self._ended = CLOSED
            end_helper(self._pid, self._pipe, grace=CLOSE_GRACE_SECONDS if "parse" in self._asked else 0)


def _how_it_ended(status: int) -> str:
    code = os.waitstatus_to_exitcode(status)
    return f"killed by signal {-code}" if code < 0 else f"exit code {code}"
