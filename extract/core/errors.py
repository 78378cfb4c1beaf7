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
