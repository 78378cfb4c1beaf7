"""Prometheus text metrics of an `--every` process (`--metrics-port`, or TIDEMARK_METRICS_PORT), read
from the state in the target at each scrape, so that they hold for every process that syncs there:

- `tidemark_lag_seconds{table}`: seconds since the committed watermark was read from the source (the
  start of the latest merged run): how old the newest change the replica surely holds can be;
- `tidemark_rows_landed_total{table}` and `tidemark_rows_merged_total{table,change}`;
- `tidemark_last_success_timestamp_seconds{table}`: when its latest merge committed;
- `tidemark_runs_failed_total{table}` and `tidemark_last_run_failed{table}`;
- `tidemark_syncs_total` and `tidemark_sync_failures_total`: this process's passes.

It listens on TIDEMARK_METRICS_HOST (default 127.0.0.1): set 0.0.0.0 for a Prometheus on another host."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import psycopg

from extract.config.urls import DatabaseUrl
from extract.core.errors import TidemarkError

_PER_TABLE = """
select
    runs.source_schema || '.' || runs.source_table as source_table,
    coalesce(sum(runs.rows_landed) filter (where runs.status = 'landed'), 0) as rows_landed,
    count(*) filter (where runs.status = 'failed') as runs_failed,
    (array_agg(runs.status order by runs.run_id desc))[1] = 'failed' as last_failed,
    coalesce(merged.inserted, 0) as inserted,
    coalesce(merged.updated, 0) as updated,
    coalesce(merged.deleted, 0) as deleted,
    merged.last_success,
    extract(epoch from clock_timestamp() - committed_run.started_at) as lag
from _migration.runs as runs
left join (
    select
        m.table_key,
        sum(m.rows_inserted) as inserted,
        sum(m.rows_updated) as updated,
        sum(m.rows_deleted) as deleted,
        extract(epoch from max(m.merged_at)) as last_success
    from _migration.merge_log as m
    group by m.table_key
) as merged on runs.table_key = merged.table_key
left join _migration.committed_watermarks as committed on runs.table_key = committed.table_key
left join _migration.runs as committed_run on committed.run_id = committed_run.run_id
where runs.migration_type <> 'reconcile'
group by runs.source_schema, runs.source_table, merged.inserted, merged.updated, merged.deleted,
    merged.last_success, committed_run.started_at
order by 1
"""

_HELP = {
    "tidemark_lag_seconds": ("gauge", "Seconds since the committed watermark was read from the source."),
    "tidemark_rows_landed_total": ("counter", "Rows landed in staging by runs that landed."),
    "tidemark_rows_merged_total": ("counter", "Rows the merges inserted, updated or deleted in the replica."),
    "tidemark_last_success_timestamp_seconds": ("gauge", "When the table's latest merge committed."),
    "tidemark_runs_failed_total": ("counter", "Runs of the table that failed."),
    "tidemark_last_run_failed": ("gauge", "1 when the table's latest run failed."),
    "tidemark_syncs_total": ("counter", "Sync passes of this process."),
    "tidemark_sync_failures_total": ("counter", "Sync passes of this process that did not end with exit code 0."),
}


def metrics_port_setting(given: str | None, every: bool) -> int | None:
    """--metrics-port, else TIDEMARK_METRICS_PORT; None when neither is set, or without --every."""
    if given is not None and not every:
        raise TidemarkError("--metrics-port serves an --every process's metrics: give --every too")
    text, name = (
        (given, "--metrics-port")
        if given is not None
        else (os.environ.get("TIDEMARK_METRICS_PORT"), "TIDEMARK_METRICS_PORT")
    )
    if text is None or text == "" or not every:
        return None
    if not text.isdigit() or not 1 <= int(text) <= 65535:
        raise TidemarkError(f"{name} must be a port number from 1 to 65535, not {text!r}")
    return int(text)


def metrics_host() -> str:
    return os.environ.get("TIDEMARK_METRICS_HOST") or "127.0.0.1"


def label(value: str) -> str:
    """A label value as the text format writes it: backslash, double quote and newline escaped."""
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _number(value: object) -> str:
    return repr(float(value)) if value is not None else "NaN"  # type: ignore[arg-type]


class Metrics:
    """What a scrape returns; the process counts its passes here."""

    def __init__(self, target: DatabaseUrl, port: int) -> None:
        self.target = target
        self.port = port
        self.syncs = 0
        self.failures = 0
        self._lock = threading.Lock()

    def count_pass(self, exit_code: int) -> None:
        with self._lock:
            self.syncs += 1
            self.failures += exit_code != 0

    def render(self) -> str:
        with psycopg.connect(self.target.libpq_url, autocommit=True) as conn:
            found = conn.execute("select to_regclass('_migration.runs') is not null").fetchone()
            rows = conn.execute(_PER_TABLE).fetchall() if found and found[0] else []
        samples: dict[str, list[str]] = {name: [] for name in _HELP}
        for table, landed, failed, last_failed, inserted, updated, deleted, last_success, lag in rows:
            at = f"table={label(str(table))}"
            samples["tidemark_rows_landed_total"].append(f"{{{at}}} {_number(landed)}")
            for change, value in (("inserted", inserted), ("updated", updated), ("deleted", deleted)):
                samples["tidemark_rows_merged_total"].append(f'{{{at},change="{change}"}} {_number(value)}')
            samples["tidemark_runs_failed_total"].append(f"{{{at}}} {_number(failed)}")
            samples["tidemark_last_run_failed"].append(f"{{{at}}} {1 if last_failed else 0}")
            if last_success is not None:
                samples["tidemark_last_success_timestamp_seconds"].append(f"{{{at}}} {_number(last_success)}")
            if lag is not None:
                samples["tidemark_lag_seconds"].append(f"{{{at}}} {_number(lag)}")
        with self._lock:
            samples["tidemark_syncs_total"].append(f" {self.syncs}")
            samples["tidemark_sync_failures_total"].append(f" {self.failures}")
        return "".join(_family(name, lines) for name, lines in samples.items())


def _family(name: str, lines: Iterable[str]) -> str:
    kind, text = _HELP[name]
    return f"# HELP {name} {text}\n# TYPE {name} {kind}\n" + "".join(f"{name}{line}\n" for line in lines)


class MetricsServer:
    """`GET /metrics` on host:port, in a thread of its own, until `stop`."""

    def __init__(self, metrics: Metrics, host: str) -> None:
        self.metrics = metrics
        port = metrics.port

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                if self.path.split("?")[0] != "/metrics":
                    self.send_error(404, "metrics are at /metrics")
                    return
                try:
                    body, status = metrics.render().encode(), 200
                except psycopg.Error as exc:  # the target down for a while: say so, keep serving
                    body, status = f"# target unreachable: {type(exc).__name__}\n".encode(), 503
                self.send_response(status)
                self.send_header("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:
                pass  # a scrape every few seconds is not worth a line on the console

        try:
            self._server = ThreadingHTTPServer((host, port), Handler)
        except OSError as exc:
            raise TidemarkError(f"metrics port {port} on {host}: {exc.strerror or exc}") from None
        self._thread = threading.Thread(target=self._server.serve_forever, name="metrics", daemon=True)

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
