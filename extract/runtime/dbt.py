"""`--dbt ARGS`: dbt run in the extract's own process once every table has landed.

dbt's start-up (importing it, reading the project) is done on a background thread while the
tables land, which mostly waits on the JVM and the databases; what is left after landing is
dbt's own work. The outcome is the same as running `dbt ARGS` afterwards, but for target/manifest.json,
written again only when the project changed (runtime/dbt_artifacts.py).
"""

from __future__ import annotations

import shlex
import sys
import threading
import warnings
from collections.abc import Callable, Collection, Iterator
from contextlib import contextmanager, nullcontext, redirect_stdout
from pathlib import Path
from typing import Any

from extract.config.environment import dbt_profiles_dir
from extract.core.errors import TidemarkError, first_line, one_line
from extract.runtime import dbt_check_record
from extract.runtime.dbt_artifacts import ManifestWrites, parse_key
from extract.runtime.dbt_parse_options import parse_options
from extract.runtime.dbt_project_files import project_fingerprint
from extract.runtime.dbt_selection import arguments_for, replica_models
from extract.runtime.heap import long_lived_objects, release_frozen


def ignore_absent_seed_columns() -> None:
    """Keep agate's warning of a typed seed column the file leaves out (dbt_project.yml types every
    column sync_tables.csv may have, and most files have a few) out of dbt's output."""
    warnings.filterwarnings(
        "ignore", message=r'".*" does not match the name of any column in this table', category=RuntimeWarning
    )


@contextmanager
def handing_on() -> Iterator[None]:
    """dbt's import and the read of its parse hold the interpreter lock for seconds: handed on more often
    meanwhile, the pass's own thread (many short calls to the JVM and the databases) does not wait 5 ms
    after each."""
    interval = sys.getswitchinterval()
    sys.setswitchinterval(0.0005)
    try:
        yield
    finally:
        sys.setswitchinterval(interval)


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


class InProcessDbt:
    """Imports dbt in the background from construction, and parses the project there once `prepare` says
    dbt will run (with `parse_now`, at once); `run` waits for it, then runs dbt. Run again (`--every`), it
    reuses the parsed project unless a file of it changed."""

    def __init__(
        self,
        args: list[str],
        project_dir: Path,
        parse_now: bool = True,
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
        self._manifest: Any = None
        self._project = Path(self.args[self.args.index("--project-dir") + 1])
        self._parsed = project_fingerprint(self._project)
        #: Why the last run failed, in a line: dbt's exception, or the nodes that failed and dbt's message.
        self.failure: str | None = None
        #: The arguments of the last run; None: it had nothing to merge, and dbt did not run.
        self.ran_with: list[str] | None = None
        #: Why dbt's own parser refuses the arguments (None: it takes them), set once dbt is imported.
        self._refusal: str | None = None
        #: What the line of a failed run adds (empty: nothing), asked only once a run has failed.
        self._failure_hint = failure_hint
        #: Checks of the project's dbt setup that import dbt too: run with dbt's import, their error kept.
        self._preflight = preflight
        self._preflight_error: TidemarkError | None = None
        self._checked = threading.Event()
        # A pass that finds nothing to merge runs no dbt: its parse of a large project would only take the
        # pass' CPU (and its interpreter lock).
        self._wanted = threading.Event()
        if parse_now:
            self._wanted.set()
        #: What the check reads, hashed (runtime/dbt_check_record.py): when the last check that passed was
        #: of the same, a pass need not wait for dbt's import before it starts (see `vouched`).
        self._check_record = None if fingerprint is None else fingerprint(self.args)
        self.vouched = self._check_record is not None and dbt_check_record.vouched(self._project, self._check_record)
        # A check that a record vouches for is made once it is asked for or dbt is to run, if ever: a pass
        # that finds nothing to merge then does not import dbt at all.
        self._check_wanted = threading.Event()
        if parse_now or not self.vouched:
            self._check_wanted.set()
        self._parsing = threading.Thread(target=self._start, name="tidemark-dbt-parse", daemon=True)
        self._parsing.start()

    def _start(self) -> None:
        self._check_wanted.wait()
        with handing_on(), long_lived_objects():
            self._check()
        self._wanted.wait()
        if self._refusal is None and self._preflight_error is None:
            with handing_on(), long_lived_objects():
                self._parse()

    def _check(self) -> None:
        try:
            if self._preflight is not None:
                self._preflight()
            self._refusal = refusal(self.args)
            if self._refusal is None and self._check_record is not None:
                dbt_check_record.remember(self._project, self._check_record)
        except TidemarkError as exc:
            self._preflight_error = exc
        finally:
            self._checked.set()

    def prepare(self) -> None:
        """dbt will run: parse the project now, while the tables land."""
        self._check_wanted.set()
        self._wanted.set()

    def check_arguments(self) -> None:
        """Refuse a dbt setup the preflight refuses, and arguments dbt's own command line would refuse
        (waits for dbt's import, not its parse)."""
        self._check_wanted.set()
        self._checked.wait()
        if self._preflight_error is not None:
            raise self._preflight_error
        if self._refusal is not None:
            raise TidemarkError(f"--dbt {shlex.join(self.requested)!r}: {self._refusal}")

    def _parse(self) -> None:
        try:
            from dbt.cli.main import dbtRunner

            project = str(self._project)
            # Nothing printed: were the project broken, the run below parses it again and reports why.
            # The run writes the artifacts; the parse only needs to hand over the manifest.
            command = ["parse", "--log-level", "none", "--no-write-json", "--project-dir", project]
            command += parse_options(self.args)
            result = dbtRunner().invoke(command)
            if result.success:
                self._manifest = result.result
        except Exception:  # only a head start, as above
            return

    def run(self, quiet: bool, stdout_is_data: bool, models: Collection[str] | None = None) -> bool:
        """Run dbt (for `models` only, see `dbt_selection.arguments_for`); its output goes to stderr when stdout carries
        --json. True when dbt succeeded, or had nothing to merge."""
        args = self.args if models is None else arguments_for(self.args, models)
        self.failure = None
        self.ran_with = args
        if args is None:
            if not quiet:
                print(f"dbt {' '.join(self.requested)}: no table has a run waiting for a merge", file=sys.stderr)
            return True
        self.prepare()
        self.check_arguments()
        self._parsing.join()
        from dbt.cli.main import dbtRunner

        now = project_fingerprint(self._project)
        if now != self._parsed:
            self._parsed = now
            self._manifest = None
            release_frozen()
            with long_lived_objects():
                self._parse()
        if models is not None:
            args = arguments_for(self.args, models, replica_models(self._manifest)) or args
            self.ran_with = args
        args = [*args, "--quiet"] if quiet and "--quiet" not in args else args
        writes = ManifestWrites(self._project, args, self._parse_key(args, now))
        ignore_absent_seed_columns()
        with redirect_stdout(sys.stderr) if stdout_is_data else nullcontext():
            result = dbtRunner(manifest=self._manifest, callbacks=[writes.observer()]).invoke(writes.arguments(args))
        writes.finish(result.result)
        if not result.success:
            self.failure = failure_reason(result) + (self._failure_hint() if self._failure_hint else "")
        return bool(result.success)

    def _parse_key(self, args: list[str], files: tuple[int, int]) -> str | None:
        """What the manifest of this run depends on (None: unknown, dbt writes it as it would)."""
        if self._check_record is None or self._manifest is None:
            return None
        return parse_key(args, self._check_record, files, dict(getattr(self._manifest, "env_vars", {}) or {}))


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
