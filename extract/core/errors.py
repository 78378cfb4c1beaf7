"""Errors a user can act on: each names the bad value and what to do about it."""

from extract.core.secrets import mask

#: Every exit code the extract gives, and what it means; the README's table says the same.
EXIT_CODES = {
    0: "every table landed (and --dbt's dbt succeeded)",
    1: "some table failed while landing; the others still ran",
    2: "bad input or configuration, found anywhere; nothing was written",
    3: "the source refused or could not be reached",
    4: "the target refused or could not be reached (no such database, a wrong password, no privilege)",
    5: "--dbt's dbt failed; what landed waits for the next merge",
    130: "interrupted",
}


class TidemarkError(Exception):
    """An error caused by input or configuration; printed without a traceback."""

    exit_code = 2


class SourceError(TidemarkError):
    """The source database refused or lacks what we need."""

    exit_code = 3


class TargetError(TidemarkError):
    """The target database refused or could not be reached."""

    exit_code = 4


class BatchRefused(TidemarkError):
    """A landed batch breaks a rule the merge relies on (a key held twice, a key left empty): the table's
    run fails, and the other tables go on (exit 1)."""

    exit_code = 1


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
