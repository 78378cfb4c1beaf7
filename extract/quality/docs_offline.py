"""Data Docs that open without a network: great-expectations writes pages that load Bootstrap, Font
Awesome, jQuery and the rest from CDNs; offline they are unstyled and their status icons invisible.
The same libraries, pinned in extract/report_page/package.json, are copied into the site, and the
pages written by this check point at those copies."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

_VENDOR = "static/vendor"

#: Each CDN address great-expectations' templates use, and the same library's file in node_modules.
#: popper.js is 1.14.7 (the version Bootstrap 4.3.1 declares), where the templates ask for 1.12.9.
LOCAL_COPIES = {
    "https://maxcdn.bootstrapcdn.com/bootstrap/4.3.1/css/bootstrap.min.css": "bootstrap/dist/css/bootstrap.min.css",
    "https://stackpath.bootstrapcdn.com/bootstrap/4.3.1/js/bootstrap.min.js": "bootstrap/dist/js/bootstrap.min.js",
    "https://unpkg.com/bootstrap-table@1.19.1/dist/bootstrap-table.min.css": (
        "bootstrap-table/dist/bootstrap-table.min.css"
    ),
    "https://unpkg.com/bootstrap-table@1.19.1/dist/bootstrap-table.min.js": (
        "bootstrap-table/dist/bootstrap-table.min.js"
    ),
    "https://unpkg.com/bootstrap-table@1.19.1/dist/extensions/filter-control/bootstrap-table-filter-control.min.js": (
        "bootstrap-table/dist/extensions/filter-control/bootstrap-table-filter-control.min.js"
    ),
    "https://unpkg.com/bootstrap-table@1.19.0/dist/extensions/filter-control/bootstrap-table-filter-control.min.css": (
        "bootstrap-table/dist/extensions/filter-control/bootstrap-table-filter-control.min.css"
    ),
    "https://unpkg.com/bootstrap-table@1.19.0/dist/extensions/filter-control/bootstrap-table-filter-control.css": (
        "bootstrap-table/dist/extensions/filter-control/bootstrap-table-filter-control.css"
    ),
    "https://cdnjs.cloudflare.com/ajax/libs/bootstrap-datepicker/1.9.0/css/bootstrap-datepicker.min.css": (
        "bootstrap-datepicker/dist/css/bootstrap-datepicker.min.css"
    ),
    "https://cdnjs.cloudflare.com/ajax/libs/bootstrap-datepicker/1.9.0/js/bootstrap-datepicker.min.js": (
        "bootstrap-datepicker/dist/js/bootstrap-datepicker.min.js"
    ),
    "https://cdn.jsdelivr.net/npm/@forevolve/bootstrap-dark@1.1.0/dist/css/bootstrap-prefers-dark.css": (
        "@forevolve/bootstrap-dark/dist/css/bootstrap-prefers-dark.css"
    ),
    "https://cdnjs.cloudflare.com/ajax/libs/font-awesome/6.6.0/css/all.min.css": (
        "@fortawesome/fontawesome-free/css/all.min.css"
    ),
    "https://code.jquery.com/jquery-3.7.1.min.js": "jquery/dist/jquery.min.js",
    "https://cdnjs.cloudflare.com/ajax/libs/popper.js/1.12.9/umd/popper.min.js": "popper.js/dist/umd/popper.min.js",
    "https://cdn.jsdelivr.net/npm/vega@5": "vega/build/vega.min.js",
    "https://cdn.jsdelivr.net/npm/vega-lite@5": "vega-lite/build/vega-lite.min.js",
    "https://cdn.jsdelivr.net/npm/vega-embed@6": "vega-embed/build/vega-embed.min.js",
}
#: Folders a copied stylesheet refers to by a relative address (Font Awesome's ../webfonts/).
_FOLDERS = ("@fortawesome/fontawesome-free/webfonts",)
#: The dark theme's logo, which the site's own stylesheet loads from the network.
_REMOTE_LOGO = "https://great-expectations-web-assets.s3.us-east-2.amazonaws.com/full_logo_dark.png"
_LOCAL_LOGO = "../images/logo-long-vector.svg"
#: A script's subresource-integrity and CORS attributes: a page opened from a file has no origin, and
#: Chromium refuses a crossorigin script from it.
_CHECKS = re.compile(r'\s+(?:integrity="[^"]*"|crossorigin="[^"]*")')
_SCRIPT_TAG = re.compile(r"<script\b[^>]*>")


def missing_assets(assets: Path) -> list[str]:
    """The library files not found under `assets` (a node_modules folder)."""
    wanted = [*LOCAL_COPIES.values(), *_FOLDERS]
    return [name for name in wanted if not (assets / name).exists()]


def copy_assets(site: Path, assets: Path) -> None:
    """The libraries into the site's static/vendor/, each under its node_modules path."""
    vendor = site / _VENDOR
    for name in LOCAL_COPIES.values():
        (vendor / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(assets / name, vendor / name)
    for folder in _FOLDERS:
        shutil.copytree(assets / folder, vendor / folder, dirs_exist_ok=True)
    styles = site / "static" / "styles" / "data_docs_default_styles.css"
    if styles.is_file():
        styles.write_text(styles.read_text().replace(_REMOTE_LOGO, _LOCAL_LOGO))


def localize_page(page: Path, site: Path) -> None:
    """The page's CDN addresses replaced by relative addresses of the site's copies."""
    text = page.read_text()
    depth = len(page.relative_to(site).parts) - 1
    prefix = "../" * depth + _VENDOR + "/"
    changed = text
    for url, name in LOCAL_COPIES.items():
        changed = changed.replace(f'"{url}"', f'"{prefix}{name}"')
    changed = _SCRIPT_TAG.sub(
        lambda tag: _CHECKS.sub("", tag.group(0)) if prefix in tag.group(0) else tag.group(0), changed
    )
    if changed != text:
        page.write_text(changed)


def localize_site(site: Path, assets: Path, since: float) -> str | None:
    """Make the pages written at or after `since` (a time.time()) load their libraries from the site.
    Returns why it could not (the libraries are not installed), or None."""
    missing = missing_assets(assets)
    if missing:
        return (
            f"the Data Docs load their styles from the network: {assets / missing[0]} is missing "
            "(make install, or TIDEMARK_REPORT_ASSETS naming a node_modules of extract/report_page/package.json)"
        )
    copy_assets(site, assets)
    for page in site.rglob("*.html"):
        if page.stat().st_mtime >= since:
            localize_page(page, site)
    return None
