"""The JVM side of landing (extract/landing/jvm): compiled once per source and Spark version into a jar
that every Spark session loads. `make install` builds it; a session builds it if it is missing."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

from extract.config.environment import java_home
from extract.core.errors import TidemarkError
from extract.runtime.pyspark_files import pyspark_dir, pyspark_version

POSTGRES_JAR = "/usr/share/java/postgresql.jar"


def _sources() -> dict[str, bytes]:
    """The Java sources by path under extract/landing/jvm, read as package data: also from a zip, as
    spark-submit's --py-files ships the package."""
    found: dict[str, bytes] = {}

    def walk(folder: Traversable, prefix: str) -> None:
        for entry in folder.iterdir():
            if entry.is_dir():
                walk(entry, f"{prefix}{entry.name}/")
            elif entry.name.endswith(".java"):
                found[prefix + entry.name] = entry.read_bytes()

    walk(resources.files("extract.landing") / "jvm", "")
    return dict(sorted(found.items()))


def jar_path() -> Path:
    """Where the jar for these sources and this Spark lives (inside the Python environment)."""
    digest = hashlib.sha256(pyspark_version().encode())
    for name, text in _sources().items():
        digest.update(name.encode())
        digest.update(text)
    return Path(sys.prefix) / "tidemark-spark" / f"tidemark-landing-{digest.hexdigest()[:16]}.jar"


def _javac() -> str:
    home = java_home()
    found = str(home / "bin" / "javac") if home and (home / "bin" / "javac").exists() else shutil.which("javac")
    if not found:
        raise TidemarkError(
            "javac was not found: landing compiles a small Java class against Spark, which needs a JDK "
            "(Debian: apt-get install openjdk-17-jdk-headless; or set JAVA_HOME to a JDK 17)"
        )
    return found


def ensure_jar() -> Path:
    """The jar, compiled first if this environment does not have it yet."""
    path = jar_path()
    if path.exists():
        return path
    if not Path(POSTGRES_JAR).exists():
        raise TidemarkError(f"{POSTGRES_JAR} is missing: apt-get install libpostgresql-jdbc-java")
    spark_jars = pyspark_dir() / "jars"
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="tidemark-javac-") as work:
        classes = Path(work) / "classes"
        sources = []
        for name, text in _sources().items():
            sources.append(Path(work) / "src" / name)
            sources[-1].parent.mkdir(parents=True, exist_ok=True)
            sources[-1].write_bytes(text)
        if not sources:
            raise TidemarkError("the landing classes' Java sources are missing from extract/landing/jvm")
        command = [
            _javac(),
            "--release",
            "17",
            "-nowarn",
            "-cp",
            f"{spark_jars}/*:{POSTGRES_JAR}",
            "-d",
            str(classes),
            *map(str, sources),
        ]
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise TidemarkError(f"compiling the landing classes failed:\n{done.stderr.strip()}")
        partial = Path(work) / "landing.jar"
        with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as jar:
            jar.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\r\n\r\n")
            for compiled in sorted(classes.rglob("*.class")):
                jar.write(compiled, compiled.relative_to(classes).as_posix())
        # Another process may build it at the same time: each renames a whole jar into place.
        shutil.move(str(partial), path.with_suffix(f".{os.getpid()}.tmp"))
        path.with_suffix(f".{os.getpid()}.tmp").replace(path)
    return path
