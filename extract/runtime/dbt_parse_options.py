"""The options of `--dbt`'s arguments that change what dbt parses, for the parse a pass reads ahead of its run.

dbt's own run parses with its options; the pass parses first, on its own thread, and hands the result to
the run, which then takes it as it is. A variable a node's config reads (`--vars`), the target whose
schema names the nodes' relations (`--target`, `--profile`), and where dbt finds its profiles and keeps
its parse must therefore be given to that parse too.
"""

from __future__ import annotations

#: The options `dbt parse` takes that change the manifest, with their short forms.
PARSE_OPTIONS = frozenset({"--vars", "--target", "-t", "--profile", "--profiles-dir", "--target-path"})


def parse_options(args: list[str]) -> list[str]:
    """The options of `args` (a dbt command line) among PARSE_OPTIONS, each with its value, in order."""
    kept: list[str] = []
    rest = iter(args)
    for arg in rest:
        if arg in PARSE_OPTIONS:
            kept += [arg, next(rest, "")]
        elif arg.split("=", 1)[0] in PARSE_OPTIONS or (arg.startswith("-t") and not arg.startswith("--")):
            kept.append(arg)  # --vars=..., or -tprod: a short option with its value attached
    return kept
