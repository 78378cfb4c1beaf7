"""The report's charts as Vega-Lite specifications over the run history (extract/report_page/history.py)."""

from __future__ import annotations

from typing import Any

_WIDTH = 720


def _over_time(title: str, field: str, axis: str, mark: str = "line") -> dict[str, Any]:
    return {
        "$schema": "https://vega.github.io/schema/vega-lite/v6.json",
        "title": title,
        "width": _WIDTH,
        "height": 220,
        "data": {"name": "runs"},
        "transform": [{"filter": f"datum.{field} != null"}],
        "mark": {"type": mark, "point": True, "tooltip": True} if mark == "line" else {"type": mark, "tooltip": True},
        "encoding": {
            "x": {"field": "started_at", "type": "temporal", "title": "run started", "axis": {"format": "%m-%d %H:%M"}},
            "y": {"field": field, "type": "quantitative", "title": axis},
            "color": {"field": "table", "type": "nominal", "title": "table"},
        },
    }


def charts() -> dict[str, dict[str, Any]]:
    """By element id: sync duration (landing and merge), rows landed, and lag, per table over time."""
    duration = _over_time("Sync duration per table", "sync_seconds", "seconds (landing + merge)")
    duration["transform"] = [
        {"calculate": "datum.landing_seconds + (datum.merge_seconds || 0)", "as": "sync_seconds"},
        {"filter": "datum.landing_seconds != null"},
    ]
    return {
        "duration": duration,
        "rows": _over_time("Rows landed per run", "rows_landed", "rows landed", mark="bar"),
        "lag": _over_time(
            "Lag after each merge (merge committed minus run started)", "lag_seconds", "seconds behind the source"
        ),
    }
