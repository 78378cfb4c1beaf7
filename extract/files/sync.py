"""One sync of a file source: list its location, compare the listing with the checkpoint, and when a file
is new, changed or gone, land what changed through the run lifecycle (extract/files/reader.py)."""

from __future__ import annotations

import csv
from typing import Any
from urllib.parse import urlsplit

import psycopg

from extract.config.file_sources import FileSource
from extract.core.observer import Note, Observer, silent
from extract.files.checkpoint import FileChanges, candidates, changes, committed_files
from extract.files.listing import first_lines, list_location, settled, sha256
from extract.files.reader import FileSourceReader
from extract.files.reading import file_fields
from extract.lifecycle.context import RunContext
from extract.lifecycle.run import run_stream
from extract.lifecycle.run_result import RunResult
from extract.planning.file_plan import file_plan, replica_columns, spark_type_of, stream_names
from extract.planning.table_plan import TablePlan
from extract.source.typemap import TypeMap

#: Files hashed at a time.
DIGEST_THREADS = 4


def _filesystem(context: RunContext, source: FileSource) -> tuple[Any, Any]:
    """(the JVM, Hadoop's configuration) the source's location is listed with: a local folder's in a JVM that
    starts in a fraction of Spark's; any other filesystem's in Spark's driver, with the session's settings
    (its credentials, spark.hadoop.*), as its files are read."""
    if urlsplit(source.location).scheme in ("", "file"):
        jvm = context.runtime.files_jvm
        return jvm, jvm.org.apache.hadoop.conf.Configuration()
    spark = context.spark
    return spark.sparkContext._jvm, spark.sparkContext._jsc.hadoopConfiguration()


def find_changes(context: RunContext, source: FileSource, observer: Observer = silent) -> FileChanges:
    """What a run of `source` would do now: the listing against the committed checkpoint; a file still
    being written is left for the next run."""
    jvm, conf = _filesystem(context, source)
    listed = list_location(jvm, conf, source)
    with psycopg.connect(context.settings.target.libpq_url) as conn:
        kept = committed_files(conn, context.settings.state_schema, stream_names(source).table_key)
    found = candidates(listed, kept)
    still, moving = settled(jvm, conf, found.unsure, context.settings.files_settle)
    for file in moving:
        observer(Note(source.key, f"{file.path} is still being written: it is read once it stops changing"))
    gone = found.gone if source.on_file_removed == "delete" else []
    digests = sha256(jvm, conf, still, DIGEST_THREADS)
    # A file removed while the others were hashed has no digest: the next listing says what became of it.
    return changes([f for f in still if digests[f.path]], digests, kept, gone)


def _headers_known(context: RunContext, source: FileSource, paths: list[str], names: set[str]) -> bool:
    """Whether every CSV file's header names columns the replica has: then nothing new is in them, and
    their types are the replica's, without reading them to guess any."""
    if source.format != "csv" or not source.csv.header or not paths:
        return False
    jvm, conf = _filesystem(context, source)
    options = source.csv
    for line in first_lines(jvm, conf, paths, options.encoding):
        header = next(csv.reader([line.lstrip("\ufeff")], delimiter=options.delimiter, quotechar=options.quote), [])
        if not header or any(name.lower() not in names for name in header):
            return False
    return True


def stream_plan(context: RunContext, source: FileSource, found: FileChanges, type_map: TypeMap) -> TablePlan:
    """The run's plan: the replica's columns as they are, then the columns new in the files it lands."""
    names = stream_names(source)
    with psycopg.connect(context.settings.target.libpq_url) as conn:
        existing = [(name, spark_type_of(kind)) for name, kind in replica_columns(conn, names)]
    landing = [f.path for f, _ in found.land]
    known = {name.lower() for name, _ in existing}
    # JSON names its fields in every record, in their own case: the files say how a column is spelled.
    guess = source.format == "json" or not (existing and _headers_known(context, source, landing, known))
    inferred = list(source.columns) or (file_fields(context.spark, source, landing) if landing and guess else [])
    spelled = {name.lower(): name for name, _ in inferred}
    fields = [(spelled.get(name.lower(), name), kind) for name, kind in existing]
    fields += [(name, kind) for name, kind in inferred if name.lower() not in known]
    return file_plan(source, fields, type_map, context.settings.state_schema)


def sync_files(
    context: RunContext,
    source: FileSource,
    type_map: TypeMap,
    observer: Observer = silent,
    found: FileChanges | None = None,
) -> RunResult | None:
    """Land what changed in the source's files since its checkpoint (`found`, when the pass has looked
    already); None when nothing did."""
    found = find_changes(context, source, observer) if found is None else found
    if not found.anything:
        observer(Note(source.key, "no file new, changed or gone since the checkpoint: nothing to read"))
        return None
    plan = stream_plan(context, source, found, type_map)
    reader = FileSourceReader(context, plan, observer, source, found)
    record = run_stream(context, reader, observer)
    return RunResult.of(source.key, record, reader.schema_changes, reader.failed_files)
