"""A file source's location as Hadoop's filesystem API lists it (so a cluster's filesystems work as a
local folder does), less the files still being written."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from extract.config.file_sources import FileSource
from extract.core.errors import TidemarkError
from extract.source.jdbc import java_message

#: Name endings and beginnings of files that writers (hdfs put, Spark, rsync, editors) are still writing
#: or that are not data: such a file is left alone until it has its final name.
TEMPORARY_SUFFIXES = ("._COPYING_", "_COPYING_", ".tmp", ".temp", ".partial", ".crdownload")
TEMPORARY_PREFIXES = (".", "_")


@dataclass(frozen=True)
class ListedFile:
    #: The path as Hadoop prints it (file:/..., s3a://...): the file's identity in the checkpoint.
    path: str
    size: int
    #: Modification time, milliseconds since the epoch.
    mtime: int

    @property
    def name(self) -> str:
        return self.path.rstrip("/").rsplit("/", 1)[-1]


def is_temporary(name: str) -> bool:
    return name.startswith(TEMPORARY_PREFIXES) or name.endswith(TEMPORARY_SUFFIXES)


def _fields(text: str) -> list[ListedFile]:
    if not text:
        return []
    parts = text.split("\0")
    return [ListedFile(parts[i], int(parts[i + 1]), int(parts[i + 2])) for i in range(0, len(parts), 3)]


def _helper(jvm: Any) -> Any:
    return jvm.tidemark.landing.FileListing


def _call(read: Callable[[], Any]) -> str:
    """What a call into the JVM returned, or a file error said in one line (a file gone, unreadable)."""
    try:
        return str(read())
    except Exception as exc:  # py4j wraps every Java exception
        raise TidemarkError(f"reading a file failed: {java_message(exc)}") from None


def list_location(jvm: Any, conf: Any, source: FileSource) -> list[ListedFile]:
    """The files the source's glob matches, temporary names left out, in path order."""
    try:
        listed = _fields(_helper(jvm).list(source.location, source.glob, conf))
    except Exception as exc:  # py4j wraps every Java exception
        raise TidemarkError(f"{source.key}: listing {source.location} failed: {java_message(exc)}") from None
    return sorted((f for f in listed if not is_temporary(f.name)), key=lambda f: f.path)


def settled(jvm: Any, conf: Any, files: list[ListedFile], wait: timedelta) -> tuple[list[ListedFile], list[ListedFile]]:
    """(the files whose size and time are the same after `wait`, those still changing or gone): a file
    growing between two listings is being written, and is read once it stops."""
    if not files or wait <= timedelta(0):
        return files, []
    time.sleep(wait.total_seconds())
    now = {f.path: f for f in _fields(_call(lambda: _helper(jvm).stat("\0".join(f.path for f in files), conf)))}
    still = [f for f in files if now.get(f.path) == f]
    return still, [f for f in files if now.get(f.path) != f]


def sha256(jvm: Any, conf: Any, files: list[ListedFile], threads: int) -> dict[str, str]:
    """The SHA-256 (hex) of each file's content, by path."""
    if not files:
        return {}
    paths = [f.path for f in files]
    digests = _call(lambda: _helper(jvm).sha256("\0".join(paths), conf, threads)).split("\0")
    return dict(zip(paths, digests, strict=True))


def first_lines(jvm: Any, conf: Any, paths: list[str], encoding: str) -> list[str]:
    """Each file's first line (a CSV file's header), read alone."""
    return _call(lambda: _helper(jvm).firstLines("\0".join(paths), conf, encoding)).split("\0")
