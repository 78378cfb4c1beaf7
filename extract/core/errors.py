"""Errors a user can act on: each names the bad value and what to do about it."""

from extract.core.secrets import mask

EXIT_OK = 0
EXIT_TABLE_FAILED = 1
EXIT_BAD_INPUT = 2
EXIT_SOURCE = 3
EXIT_TARGET = 4
EXIT_DBT_FAILED = 5
EXIT_INTERRUPTED = 130

#: Every exit code the extract gives, and what it means; the README's table says the same.
EXIT_CODES = {
    EXIT_OK: "every table landed (and --dbt's dbt succeeded)",
    EXIT_TABLE_FAILED: "some table failed while landing; the others still ran",
    EXIT_BAD_INPUT: "bad input or configuration, found anywhere; nothing was written",
    EXIT_SOURCE: "the source refused or could not be reached",
    EXIT_TARGET: "the target refused or could not be reached (no such database, a wrong password, no privilege)",
    EXIT_DBT_FAILED: "--dbt's dbt failed; what landed waits for the next merge",
    EXIT_INTERRUPTED: "interrupted",
}


class TidemarkError(Exception):
    """An error caused by input or configuration; printed without a traceback."""

    exit_code = EXIT_BAD_INPUT


class SourceError(TidemarkError):
    """The source database refused or lacks what we need."""

    exit_code = EXIT_SOURCE


class TargetError(TidemarkError):
    """The target database refused or could not be reached."""

    exit_code = EXIT_TARGET


class BatchRefused(TidemarkError):
    """A landed batch breaks a rule the merge relies on (a key held twice, a key left empty): the table's
    run fails, and the other tables go on (exit 1)."""

    exit_code = EXIT_TABLE_FAILED


class LogicalError(BatchRefused):
    """A rule a sync or reconcile relies on does not hold (a watermark moving back, repairs that do
    not add up): the table's run fails and nothing of it is committed."""

    def __init__(self, message: str) -> None:
        super().__init__(f"LOGICAL ERROR: {message}")


#: Where a KeyValueRefused's message names its key value.
KEY_PLACE = "{key}"
#: What it says in that place without --verbose.
KEY_WITHHELD = "a key (--verbose shows it)"


class KeyValueRefused(BatchRefused):
    """A refusal about one key value. Key values are sensitive (seed 001, security): the message the run log
    keeps and the console prints names none; `verbose_message` names it, for --verbose."""

    def __init__(self, message: str, key: str, exit_code: int = EXIT_TABLE_FAILED) -> None:
        """`message` says KEY_PLACE where the key goes; `key` is it as shown (`Id=1`)."""
        super().__init__(message.replace(KEY_PLACE, KEY_WITHHELD))
        self.verbose_message = message.replace(KEY_PLACE, f"the key ({key})")
        self.exit_code = exit_code


def shown_error(exc: BaseException, verbose: bool) -> str:
    """An error's first line as the console shows it: with --verbose, with the key value it is about."""
    if verbose and isinstance(exc, KeyValueRefused):
        return one_line(exc.verbose_message)
    return first_line(exc)


def first_line(exc: BaseException) -> str:
    """What a summary and the run log show of an error: its message's first line (a JDBC error's stack
    trace follows it), secrets masked, at most 2,000 characters."""
    return one_line(str(exc)) or type(exc).__name__


def one_line(text: str) -> str:
    """The first line of `text`, secrets masked, at most 2,000 characters."""
    return mask((text.strip().splitlines() or [""])[0])[:2000]


def about_table(table: str, message: str) -> str:
    """`message` as said of table `table`: prefixed with its name, unless the message starts with it."""
    bare = message.removeprefix("LOGICAL ERROR: ")
    return message if bare.startswith(f"{table}:") or bare.startswith(f"{table} ") else f"{table}: {message}"
