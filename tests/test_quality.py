"""`python -m extract check`: the file-backed great-expectations project, its generated suites, the
checkpoint's stored results and Data Docs, read in headless Chromium."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from PIL import Image

from tests.browser import dom, screenshot
from tests.conftest import Project
from tests.demo_fixture import demo

__all__ = ["demo"]


def _check(project: Project, *args: str) -> tuple[int, dict[str, Any]]:
    done = project.cli("check", "--json", *args)
    assert done.returncode in (0, 1) and done.stdout.startswith("{"), done.stderr[-3000:]
    return done.returncode, json.loads(done.stdout)


def _table(report: dict[str, Any], table: str) -> dict[str, Any]:
    return next(t for t in report["tables"] if t["table"] == table)


def _text(html: str) -> str:
    """A page's visible words: GX puts each parameter of a sentence in a span of its own."""
    without_code = re.sub(r"<(script|style)\b.*?</\1>", " ", html, flags=re.S)
    return " ".join(re.sub(r"<[^>]+>", " ", without_code).split())


def _failed(table: dict[str, Any]) -> dict[str, Any]:
    return {e["expectation"]: e["observed"] for e in table["expectations"] if not e["success"]}


def test_checkpoint_passes_then_shows_a_deleted_row_in_data_docs(demo: Project, tmp_path: Path) -> None:
    demo.sync_replicas()
    code, report = _check(demo)
    assert code == 0 and report["success"]
    customers = _table(report, "dbo.Customers")
    kinds = sorted((e["expectation"], e["column"]) for e in customers["expectations"])
    assert kinds == [
        ("expect_column_values_to_be_unique", "customerid"),
        ("expect_column_values_to_not_be_null", "customerid"),
        ("expect_committed_watermark_to_be_recent", None),
        ("expect_replica_content_to_match_source", None),
        ("expect_table_row_count_to_equal", None),
    ]
    gx_dir = demo.root / "gx"
    assert (gx_dir / "great_expectations.yml").is_file()
    assert (gx_dir / "checkpoints" / "tidemark.json").is_file()
    assert "connection_string: ${TIDEMARK_GX_TARGET_URL}" in (gx_dir / "great_expectations.yml").read_text()
    assert "postgresql" not in (gx_dir / "great_expectations.yml").read_text()  # no URL, only its variable

    with demo.target() as conn:
        conn.execute(f'delete from "demo__{demo.source_db}__dbo".customers where customerid = 1')
    code, report = _check(demo)
    assert code == 1 and not report["success"]
    failed = _failed(_table(report, "dbo.Customers"))
    assert sorted(failed) == ["expect_replica_content_to_match_source", "expect_table_row_count_to_equal"]
    assert failed["expect_table_row_count_to_equal"] == 59
    assert failed["expect_replica_content_to_match_source"].startswith("59 rows, checksum ")
    assert [t["table"] for t in report["tables"] if not t["success"]] == ["dbo.Customers"]
    stored = list((gx_dir / "uncommitted" / "validations").rglob("*.json"))
    assert len(stored) == 2 * len(report["tables"])

    index = Path(report["data_docs"])
    index_page = dom(index.as_uri(), tmp_path / "chromium")
    customers_suite = _table(report, "dbo.Customers")["suite"]
    assert customers_suite in index_page
    pages = sorted((index.parent / "validations" / customers_suite).rglob("*.html"))
    assert len(pages) == 2
    first = _text(dom(pages[0].as_uri(), tmp_path / "chromium"))
    assert "Status: Succeeded" in first and "Unsuccessful Expectations 0 " in first
    latest = _text(dom(pages[-1].as_uri(), tmp_path / "chromium"))
    assert "Status: Failed" in latest and "Unsuccessful Expectations 2 " in latest
    assert "Must have exactly 60 rows. 59 " in latest
    assert re.search(r"Content must match the source: 60 rows, checksum \S+\. 59 rows, checksum ", latest)
    shot = screenshot(pages[-1].as_uri(), tmp_path / "chromium", tmp_path / "data_docs.png", "1400,1400")
    # Offline, the failed status's icon is drawn in Bootstrap's danger red only when Font Awesome and
    # Bootstrap come from the site itself; from a CDN the page would show neither.
    assert _pixels_near(shot, DANGER_RED) > 50
    for page in [index, *pages]:
        remote = re.findall(r'<(?:link|script)\b[^>]*(?:href|src)="(https?://[^"]+)"', page.read_text())
        assert remote == [], f"{page} loads {remote}"


#: Bootstrap 4's text-danger.
DANGER_RED = (220, 53, 69)


def _pixels_near(png: Path, colour: tuple[int, int, int], tolerance: int = 12) -> int:
    with Image.open(png) as image:
        pixels = image.convert("RGB").getdata()
        return sum(1 for pixel in pixels if all(abs(a - b) <= tolerance for a, b in zip(pixel, colour, strict=True)))


def test_a_users_expectation_survives_regeneration_and_is_checked(demo: Project) -> None:
    demo.sync_replicas()
    code, report = _check(demo, "--table", "dbo.Products")
    assert code == 0
    suite_file = next((demo.root / "gx" / "expectations").glob(_table(report, "dbo.Products")["suite"] + ".json"))
    suite = json.loads(suite_file.read_text())
    suite["expectations"].append(
        {
            "type": "expect_column_values_to_be_between",
            "kwargs": {"column": "listprice", "min_value": 0, "max_value": 1},
            "meta": {"owner": "analytics"},
        }
    )
    suite_file.write_text(json.dumps(suite))

    code, report = _check(demo, "--table", "dbo.Products")
    assert code == 1
    products = _table(report, "dbo.Products")
    assert list(_failed(products)) == ["expect_column_values_to_be_between"]
    mine = [e for e in products["expectations"] if not e["generated"]]
    assert [e["expectation"] for e in mine] == ["expect_column_values_to_be_between"]
    assert len(products["expectations"]) == 6
    kept = json.loads(suite_file.read_text())["expectations"]
    assert [e["type"] for e in kept].count("expect_table_row_count_to_equal") == 1
    assert kept[-1]["meta"] == {"owner": "analytics"}


def test_freshness_fails_when_the_watermark_is_older_than_the_limit(demo: Project) -> None:
    demo.sync_replicas()
    code, report = _check(demo, "--table", "dbo.Customers", "--max-lag", "0s")
    assert code == 1
    assert list(_failed(_table(report, "dbo.Customers"))) == ["expect_committed_watermark_to_be_recent"]
    code, _ = _check(demo, "--table", "dbo.Customers", "--max-lag", "1h")
    assert code == 0
    done = demo.cli("check", "--max-lag", "soon")
    assert done.returncode == 2 and "'soon'" in done.stderr


def test_a_replica_not_yet_synced_fails_its_expectations_by_name(demo: Project) -> None:
    code, report = _check(demo, "--table", "dbo.Countries")
    assert code == 1
    countries = _table(report, "dbo.Countries")
    assert not countries["success"]
    assert all(not e["success"] for e in countries["expectations"])
    text = demo.cli("check", "--table", "dbo.Countries")
    assert text.returncode == 1
    assert "dbo.Countries" in text.stdout and "no replica: sync the table first" in text.stdout
    assert "expectations failed for dbo.Countries" in text.stderr
