"""`python -m extract report`: one static page of the run history, opened in headless Chromium: its
three charts drawn by vega-embed, and the failures, with names from the source shown as text."""

from __future__ import annotations

import re
from pathlib import Path

from tests.browser import dom, screenshot
from tests.conftest import Project
from tests.failing_table import items_and_failing

#: A table whose name would close the page's script element, were it not escaped.
HOSTILE = "D</script><script>document.title='x'</script>"


def test_the_report_page_draws_the_history_and_the_failures(project: Project, tmp_path: Path) -> None:
    # The hostile table is keyed on a repeating column: its run fails, and its error names it.
    items_and_failing(project, HOSTILE, rows=12)
    for _ in range(2):
        project.cli("--all", "--dbt", "build", "--quiet")
        with project.source() as conn:
            conn.execute(
                """update dbo."Items" set "ModifiedDate" = clock_timestamp() at time zone 'UTC' where "Id" < 4"""
            )
    page = tmp_path / "report.html"
    done = project.cli("report", "--out", str(page))
    assert done.returncode == 0, done.stderr[-2000:]
    assert "wrote" in done.stdout and "(4 runs)" in done.stdout

    rendered = dom(page.as_uri(), tmp_path / "chromium")
    for chart in ("duration", "rows", "lag"):
        element = re.search(
            rf'<div class="chart[^"]*" id="{chart}"[^>]*data-rendered="true"[^>]*>(.*?)</div>', rendered, re.S
        )
        assert element is not None, f"chart {chart} not drawn:\n{rendered[:3000]}"
        assert "<svg" in element.group(1) and "mark-" in element.group(1)
    assert "<title>tidemark runs on" in rendered  # the hostile name ran nothing
    failures = rendered[rendered.index('id="failures"') :]
    assert failures.count("<tr>") == 3  # the header and the hostile table's two failed runs
    assert "D&lt;/script&gt;&lt;script&gt;document.title='x'&lt;/script&gt;" in failures
    assert "more than once" in failures

    shot = screenshot(page.as_uri(), tmp_path / "chromium", tmp_path / "report.png")
    assert shot.stat().st_size > 20_000  # charts drawn, not a blank page


def test_the_report_refuses_a_bad_period(project: Project) -> None:
    done = project.cli("report", "--days", "0")
    assert done.returncode == 2 and "not '0'" in done.stderr
