"""Errors from the JVM (the landing classes, Spark, the JDBC drivers) said in one line.

py4j hands over a Java exception as the text of its stack trace, and Spark wraps a task's failure
in a job failure; the line that names what failed is somewhere inside. The whole text stays on
the exception's cause, shown with `--verbose`.
"""

from __future__ import annotations

import re

from py4j.protocol import Py4JJavaError

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


def jvm_error(exc: BaseException) -> Py4JJavaError | None:
    """The JVM's error behind `exc` (py4j's Py4JJavaError): `exc` itself, or the one it was raised while
    handling. Once Spark has run in a process, pyspark converts every JVM's errors through its own driver's
    gateway: for the source's JVM that fails (an assertion once the driver has stopped, an unknown object
    in the driver's), or names a Spark error, with the JVM's error as the context."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, Py4JJavaError):
            return seen
        seen = seen.__context__
    return None
