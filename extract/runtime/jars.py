"""The jars the JVMs of a run load: tidemark's landing classes, the JDBC drivers, Spark's own, and Hadoop's
filesystem."""

from __future__ import annotations

from pathlib import Path

from extract.core.errors import TidemarkError
from extract.runtime import landing_jar
from extract.runtime.pyspark_files import pyspark_dir

# Debian's libpostgresql-jdbc-java and libjtds-java; mssql-jdbc comes through TIDEMARK_JARS.
DEFAULT_JARS = ("/usr/share/java/postgresql.jar", "/usr/share/java/jtds.jar")


def jar_paths(extra: tuple[str, ...] = ()) -> list[str]:
    """tidemark's landing jar (built if missing), the JDBC drivers that are installed, then `extra`
    (TIDEMARK_JARS), each of which must exist."""
    missing = [jar for jar in extra if not Path(jar).is_file()]
    if missing:
        raise TidemarkError(f"TIDEMARK_JARS names a jar that does not exist: {', '.join(missing)}")
    return [str(landing_jar.ensure_jar()), *(jar for jar in DEFAULT_JARS if Path(jar).exists()), *extra]


def source_jvm_jars(extra: tuple[str, ...] = ()) -> list[str]:
    """The class path of the JVM of the source's queries (runtime/source_jvm.py): `jar_paths`, then Spark's
    jars, whose JDBC code converts the rows of a batch that JVM lands without a Spark job."""
    return [*jar_paths(extra), *(str(jar) for jar in sorted((pyspark_dir() / "jars").glob("*.jar")))]


#: What Hadoop's filesystem API needs, as pyspark ships it: a file source's listing needs no more of Spark.
HADOOP_JARS = ("hadoop-client-api-*.jar", "hadoop-client-runtime-*.jar", "slf4j-api-*.jar", "jcl-over-slf4j-*.jar")


def hadoop_jars() -> list[str]:
    return [str(jar) for pattern in HADOOP_JARS for jar in sorted((pyspark_dir() / "jars").glob(pattern))[-1:]]
