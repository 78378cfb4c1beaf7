"""tidemark's dbt package (dbt_package/ in the repository, inside the installed wheel too) in a
user's project: dbt_packages/tidemark, a link to the installed package, as `dbt deps` makes of a
local package. dbt loads every folder under dbt_packages/, so the link alone installs it;
packages.yml names the same path, so that `dbt deps` after a `dbt clean` brings it back."""

from __future__ import annotations

from pathlib import Path

#: The package's name, its macros' namespace (tidemark.<macro>).
PACKAGE_NAME = "tidemark"
PACKAGE_FOLDER = "dbt_package"
INSTALL_PATH = Path("dbt_packages") / PACKAGE_NAME


def install_package(project_dir: Path, package: Path) -> bool:
    """Link dbt_packages/tidemark to `package`; False when it already was."""
    link = project_dir / INSTALL_PATH
    target = package.resolve()
    if link.is_symlink() and link.resolve() == target:
        return False
    if link.is_symlink():
        link.unlink()
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(target, target_is_directory=True)
    return True
