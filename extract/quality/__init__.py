"""great-expectations for replicas: a file-backed GX project (`gx/`), one suite per replica, a
checkpoint run by `python -m extract check`.

great_expectations is imported here, once, so that every module of this package finds it loaded
(see main_module.py for why the import needs care)."""

from extract.quality.main_module import main_module_named

with main_module_named():
    import great_expectations  # noqa: F401
