"""Errors from the JVM (the landing classes, Spark, the JDBC drivers) said in one line.

py4j hands over a Java exception as the text of its stack trace, and Spark wraps a task's failure
in a job failure; the line that names what failed is somewhere inside. The whole text stays on
the exception's cause, shown with `--verbose`.
"""

from __future__ import annotations

import re

from extract.core.errors import one_line

_LANDING_FAILURE = re.compile(r"tidemark\.landing\.LandingFailure: (?P<message>[^\n]*)")
_JAVA_EXCEPTION = re.compile(
    r"^(?:Caused by: |: )?(?P<type>[a-z][\w$]*(?:\.[\w$]+)*\.[A-Z][\w$]*(?:Exception|Error)): (?P<message>[^\n]*)$",
    re.MULTILINE,
)
#: Exceptions that only wrap another: their message is not the reason.
_WRAPPERS = ("org.apache.spark.SparkException", "py4j.", "java.util.concurrent.ExecutionException")


class LandingError(Exception):
    """Rows could not be read from the source or landed in the target; the message says why."""


def java_error_line(exc: BaseException) -> str:
    """The line of a JVM error that says what failed: a landing failure's, else the innermost cause's."""
    text = str(exc)
    found = _LANDING_FAILURE.search(text)
    if found:
        return one_line(found.group("message"))
    causes = [m for m in _JAVA_EXCEPTION.finditer(text) if not m.group("type").startswith(_WRAPPERS)]
    if causes:
        return one_line(causes[-1].group("message"))
    return one_line(text.split("\n", 1)[-1] if text.startswith("An error occurred") else text)
