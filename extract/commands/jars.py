"""`python -m extract jars`: the jars a Spark session of the extract needs, for spark-submit."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from extract.config.environment import extra_jars
from extract.runtime.jars import jar_paths


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m extract jars",
        description="Print tidemark's landing jar (compiled first if missing) and the JDBC drivers, "
        "TIDEMARK_JARS included: for spark-submit's --jars (comma-separated, the default) and "
        "--driver-class-path (--separator :).",
    )
    parser.add_argument("--separator", default=",", help="between paths (default ',')")
    args = parser.parse_args(argv)
    extra = extra_jars()
    print(args.separator.join(jar_paths(extra)))
    return 0
