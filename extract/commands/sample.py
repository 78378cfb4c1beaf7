"""`python -m extract sample load --dataset PATH`: a sample database into the stand-in source."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from extract.config.environment import project_dir
from extract.config.settings import source_from_env
from extract.devtools.sample import load_sample, sync_table_rows
from extract.source.target_types import TargetTypes
from extract.source.typemap import TypeMap


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m extract sample", description=__doc__)
    sub = parser.add_subparsers(dest="action", required=True)
    load = sub.add_parser("load", help="create the tables of schema.json in TIDEMARK_SOURCE_URL and load the data")
    load.add_argument("--dataset", type=Path, required=True, help="folder with schema.json and the Parquet files")
    load.add_argument("--table", action="append", default=[], metavar="SCHEMA.TABLE", help="only these tables")
    load.add_argument("--write-seed", type=Path, metavar="CSV", help="also write a sync_tables.csv for the tables")
    args = parser.parse_args(argv)
    source = source_from_env()
    project = project_dir()
    # The stand-in source is PostgreSQL: the type map's target types are checked by it before any table is made.
    types = TargetTypes(source)
    try:
        loaded = load_sample(args.dataset, source, TypeMap(project / "seeds", types.problem), args.table)
    finally:
        types.close()
    for sample, rows in loaded:
        print(f"{sample.table.qualified}: {rows} rows")
    print(f"{len(loaded)} tables, {sum(rows for _, rows in loaded)} rows loaded into {source.display}")
    if args.write_seed:
        header = "source_schema,source_table,cursor_column,primary_key,enabled\n"
        args.write_seed.write_text(header + "".join(r + "\n" for r in sync_table_rows(s for s, _ in loaded)))
        print(f"wrote {args.write_seed}")
    return 0
