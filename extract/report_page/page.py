"""One static HTML page of the run history: the charts drawn by vega-embed (inlined, so the page opens
without a network), and the failures. Names and errors from the state reach the page only as JSON
data (with `<`, `>` and `&` escaped, so nothing closes its script element) and as escaped HTML text."""

from __future__ import annotations

import html
import json
from datetime import UTC, datetime
from pathlib import Path

from extract.core.errors import TidemarkError
from extract.report_page.charts import charts

LIBRARIES = ("vega/build/vega.min.js", "vega-lite/build/vega-lite.min.js", "vega-embed/build/vega-embed.min.js")

_DRAW = """
const runs = JSON.parse(document.getElementById("runs").textContent);
const specs = JSON.parse(document.getElementById("specs").textContent);
for (const [id, spec] of Object.entries(specs)) {
  spec.data = {values: runs};
  vegaEmbed("#" + id, spec, {renderer: "svg", actions: false})
    .then(() => { document.getElementById(id).dataset.rendered = "true"; })
    .catch((error) => { document.getElementById(id).textContent = "chart failed: " + error; });
}
"""

_STYLE = """
body { font-family: system-ui, sans-serif; margin: 2rem; color: #222; }
table { border-collapse: collapse; } td, th { border: 1px solid #ccc; padding: .3rem .6rem; text-align: left; }
.chart { margin: 1.5rem 0; }
"""


def _json_data(value: object) -> str:
    return json.dumps(value).replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _libraries(assets: Path) -> str:
    missing = [name for name in LIBRARIES if not (assets / name).is_file()]
    if missing:
        raise TidemarkError(
            f"the plotting libraries are not installed ({assets / missing[0]} is missing): run make install, "
            f"or npm ci in a copy of extract/report_page/ and set TIDEMARK_REPORT_ASSETS to its node_modules"
        )
    return "\n".join(f"<script>{(assets / name).read_text()}</script>" for name in LIBRARIES)


_FAILURE_COLUMNS = {
    "started": "started_at",
    "table": "table",
    "run": "run_id",
    "kind": "kind",
    "error": "error_message",
}


def _failures(runs: list[dict[str, object]]) -> str:
    failed = [run for run in runs if run["status"] == "failed"]
    if not failed:
        return '<p id="failures">No run failed in this period.</p>'
    head = "".join(f"<th>{title}</th>" for title in _FAILURE_COLUMNS)
    rows = "".join(
        "<tr>" + "".join(f"<td>{html.escape(str(run[key] or ''))}</td>" for key in _FAILURE_COLUMNS.values()) + "</tr>"
        for run in reversed(failed)
    )
    return f'<table id="failures"><tr>{head}</tr>{rows}</table>'


def render(runs: list[dict[str, object]], title: str, days: int, assets: Path) -> str:
    tables = sorted({str(run["table"]) for run in runs})
    generated = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    divs = "".join(f'<div class="chart" id="{chart_id}"></div>' for chart_id in charts())
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title><style>{_STYLE}</style>
{_libraries(assets)}</head>
<body>
<h1>{html.escape(title)}</h1>
<p>{len(runs)} run(s) of {len(tables)} table(s) in the last {days} day(s); generated {generated}.</p>
{divs}
<h2>Failures</h2>
{_failures(runs)}
<script type="application/json" id="runs">{_json_data(runs)}</script>
<script type="application/json" id="specs">{_json_data(charts())}</script>
<script>{_DRAW}</script>
</body></html>
"""
