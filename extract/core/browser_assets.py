"""Where the browser libraries of tidemark's pages are: `make install` runs npm ci of
extract/report_page/package.json into the virtualenv; TIDEMARK_REPORT_ASSETS names another node_modules."""

from __future__ import annotations

import os
import sys
from pathlib import Path

INSTALLED = Path(sys.prefix) / "report-assets" / "node_modules"


def browser_assets() -> Path:
    return Path(os.environ.get("TIDEMARK_REPORT_ASSETS") or INSTALLED)
