"""The package's folders are layers: a module imports only from its own folder and from folders below it,
never from the commands and the top-level modules that drive it, and no two folders import each other."""

from __future__ import annotations

import ast
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "extract"
MAX_FILE_LINES = 250
MAX_FUNCTION_LINES = 60


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    """Every extract module `path` imports, at the top or inside a function."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name.startswith("extract"))
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("extract"):
            for alias in node.names:
                sub = f"{node.module}.{alias.name}"
                found.add(sub if (PACKAGE.parent / sub.replace(".", "/")).with_suffix(".py").exists() else node.module)
    return found


def _folder(module: str) -> str:
    """`extract.source.dialects.tsql` -> `source`; a top-level module is the folder `extract`."""
    parts = module.split(".")
    return parts[1] if len(parts) > 2 or (PACKAGE / parts[-1]).is_dir() else "extract"


def _graph() -> dict[str, set[str]]:
    return {_module_name(p): _imports(p) for p in PACKAGE.rglob("*.py")}


def test_folders_import_only_downward() -> None:
    drivers = {"extract", "commands"}
    upward = []
    for module, imported in _graph().items():
        if _folder(module) not in drivers:
            upward += [f"{module} imports {i}" for i in imported if _folder(i) in drivers and i != "extract"]
    assert upward == []


def test_no_import_cycles_between_folders_or_modules() -> None:
    modules = _graph()
    folders: dict[str, set[str]] = {}
    for module, imported in modules.items():
        folders.setdefault(_folder(module), set()).update(_folder(i) for i in imported if _folder(i) != _folder(module))
    for graph in (folders, {m: {i for i in imported if i != m} for m, imported in modules.items()}):
        try:
            tuple(TopologicalSorter(graph).static_order())
        except CycleError as cycle:
            raise AssertionError(f"import cycle: {' -> '.join(cycle.args[1])}") from None


def test_files_and_functions_stay_small() -> None:
    too_long = []
    for path in sorted(PACKAGE.rglob("*.py")):
        text = path.read_text()
        if text.count("\n") > MAX_FILE_LINES:
            too_long.append(f"{path.relative_to(PACKAGE)}: {text.count(chr(10))} lines")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > MAX_FUNCTION_LINES:
                    too_long.append(f"{path.relative_to(PACKAGE)}: {node.name} has {length} lines")
    assert too_long == []
