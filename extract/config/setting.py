"""One setting of the environment: its name, what it takes, its default and what it is for, read and
parsed in one way. extract/config/spec.py lists every setting; this is the only module that reads the
process's environment (os.environ), and extract/config/environment.py the only one that changes it."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Generic, Literal, TypeVar

from extract.config.values import Parser
from extract.core.errors import TidemarkError
from extract.core.secrets import register

T = TypeVar("T")
#: Who reads a variable: tidemark, or a tool it runs (dbt's profile, Spark), to which it is passed on.
Reader = Literal["tidemark", "dbt", "spark"]


def environment(env: Mapping[str, str] | None = None) -> Mapping[str, str]:
    """`env` when given (tests, a child's environment), else this process's."""
    return os.environ if env is None else env


@dataclass(frozen=True)
class Setting(Generic[T]):
    name: str
    parse: Parser[T]
    #: What an unset or blank variable stands for; None: no value.
    default: str | None
    doc: str
    #: Registered with extract.core.secrets as it is read, so that no message or log shows it.
    secret: bool = False
    reader: Reader = "tidemark"

    @property
    def kind(self) -> str:
        return self.parse.kind

    def given(self, env: Mapping[str, str] | None = None) -> str | None:
        """The variable's text as set, None when unset or blank (the default does not count)."""
        text = environment(env).get(self.name)
        if text is None or not text.strip():
            return None
        if self.secret:
            register(text)
        return text

    def text(self, env: Mapping[str, str] | None = None) -> str | None:
        given = self.given(env)
        return self.default if given is None else given

    def read(self, env: Mapping[str, str] | None = None) -> T | None:
        """The value, or None when the variable is unset and has no default."""
        text = self.text(env)
        return None if text is None else self.parse(text, self.name)

    def value(self, env: Mapping[str, str] | None = None) -> T:
        """The value; refused when the variable is unset and has no default."""
        text = self.text(env)
        if text is None:
            raise TidemarkError(f"{self.name} is not set: {self.doc}")
        return self.parse(text, self.name)

    def value_or(self, given: str | None, option: str, env: Mapping[str, str] | None = None) -> T:
        """The command line's `option` when it was `given` (errors then name the option), else the setting."""
        return self.value(env) if given is None else self.parse(given, option)
