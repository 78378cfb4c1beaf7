"""Parse the source and target connection URLs into their parts.

Credentials come from the environment; they are kept out of every string that
can be printed (see `DatabaseUrl.display`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from urllib.parse import parse_qsl, quote, unquote

from extract.core.errors import TidemarkError
from extract.core.secrets import mask, register

SQLSERVER_DRIVER = "com.microsoft.sqlserver.jdbc.SQLServerDriver"
JTDS_DRIVER = "net.sourceforge.jtds.jdbc.Driver"
POSTGRES_DRIVER = "org.postgresql.Driver"

_HOST_PORT = re.compile(r"^(?P<host>\[[0-9a-fA-F:]+\]|[A-Za-z0-9_.\-]+)(?::(?P<port>\d{1,5}))?$")


@dataclass(frozen=True)
class DatabaseUrl:
    """A database location, independent of how it was written."""

    dialect: str  # "sqlserver" or "postgres"
    driver_class: str
    host: str
    port: int
    database: str
    user: str | None = None
    password: str | None = field(default=None, repr=False)
    properties: tuple[tuple[str, str], ...] = ()
    #: Seconds to wait for a connection before giving up (TIDEMARK_SOURCE/TARGET_CONNECT_TIMEOUT).
    connect_timeout: int = 10
    #: libpq's `options` for every session psycopg opens (the state key's setting): never printed.
    session_options: str | None = field(default=None, repr=False)

    @property
    def jdbc_url(self) -> str:
        """The JDBC URL without credentials (they travel as driver properties)."""
        props = dict(self.properties)
        if self.dialect == "sqlserver":
            props.setdefault("loginTimeout", str(self.connect_timeout))
        if self.driver_class == JTDS_DRIVER:
            tail = "".join(f";{k}={_braced(v)}" for k, v in props.items())
            return f"jdbc:jtds:sqlserver://{self.host}:{self.port}/{self.database}{tail}"
        if self.dialect == "sqlserver":
            props.setdefault("databaseName", self.database)
            tail = "".join(f";{k}={_braced(v)}" for k, v in props.items())
            return f"jdbc:sqlserver://{self.host}:{self.port}{tail}"
        # Prepared on the server from the first execution, so rows arrive in binary: the server formats
        # no text and the driver parses none. In the URL, not the driver properties: Spark's JDBC reader
        # with predicates lower-cases property names (SPARK-55830), and the driver ignores them then.
        props.setdefault("prepareThreshold", "-1")
        props.setdefault("connectTimeout", str(self.connect_timeout))
        query = "&".join(f"{k}={v}" for k, v in props.items())
        return f"jdbc:postgresql://{self.host}:{self.port}/{self.database}" + (f"?{query}" if query else "")

    @property
    def libpq_url(self) -> str:
        """A postgresql:// URL with credentials, for psycopg; never print it."""
        if self.dialect != "postgres":
            raise TidemarkError(f"{self.display} is not a PostgreSQL database")
        auth = ""
        if self.user:
            # Percent-encoded, so an @, : or / in a password cannot change the URL's meaning.
            auth = quote(self.user, safe="") + (f":{quote(self.password, safe='')}" if self.password else "") + "@"
        options = ""
        if self.session_options is not None:
            encoded = quote(self.session_options, safe="")
            register(encoded)  # as secret as the key it holds, in the form a printed URL would show
            options = "&options=" + encoded
        return (
            f"postgresql://{auth}{self.host}:{self.port}/{self.database}?connect_timeout={self.connect_timeout}"
            + options
        )

    @property
    def display(self) -> str:
        """A printable form: no password, ever."""
        who = f"{self.user}@" if self.user else ""
        return f"{self.dialect}://{who}{self.host}:{self.port}/{self.database}"

    def jdbc_properties(self) -> dict[str, str]:
        props = {"driver": self.driver_class}
        if self.user:
            props["user"] = self.user
        if self.password:
            props["password"] = self.password
        return props

    def with_credentials(self, user: str | None, password: str | None) -> DatabaseUrl:
        register(password)
        return replace(self, user=user or self.user, password=password or self.password)


def _braced(value: str) -> str:
    """A property value as mssql-jdbc reads it: in braces (a `}` doubled) when it holds a separator."""
    return "{" + value.replace("}", "}}") + "}" if any(c in value for c in ";{}=") else value


def _bad(url: str, why: str) -> TidemarkError:
    # Never echo a password back, in whatever form the URL holds it.
    return TidemarkError(
        f"malformed database URL {mask(url)!r}: {mask(why)}. Expected one of "
        "jdbc:sqlserver://HOST[:PORT];databaseName=DB, jdbc:jtds:sqlserver://HOST[:PORT]/DB, "
        "jdbc:postgresql://HOST[:PORT]/DB or postgresql://[USER[:PASSWORD]@]HOST[:PORT]/DB"
    )


def _host_port(url: str, text: str, default_port: int) -> tuple[str, int]:
    match = _HOST_PORT.match(text)
    if not match:
        raise _bad(url, f"cannot read host and port from {text!r}")
    port = int(match.group("port") or default_port)
    if not 0 < port < 65536:
        raise _bad(url, f"port {port} is out of range")
    return match.group("host"), port


def _semicolon_props(url: str, text: str) -> list[tuple[str, str]]:
    """`;key=value` pairs; a value in braces may hold `;` and `=`, and `}}` stands for `}` in it."""
    props = []
    position = 0
    while position < len(text):
        if text[position] == ";":
            position += 1
            continue
        equals = text.find("=", position)
        semicolon = text.find(";", position)
        if equals < 0 or (0 <= semicolon < equals):
            part = text[position : semicolon if semicolon >= 0 else len(text)]
            raise _bad(url, f"property {part!r} is not KEY=VALUE")
        key = text[position:equals].strip()
        if not key:
            raise _bad(url, "a property has no name before its '='")
        value, position = _property_value(url, text, equals + 1)
        props.append((key, value))
    return props


def _property_value(url: str, text: str, start: int) -> tuple[str, int]:
    """The value that starts at `start`, and where the text goes on after it."""
    if not text.startswith("{", start):
        end = text.find(";", start)
        end = len(text) if end < 0 else end
        return text[start:end], end
    value, position = [], start + 1
    while position < len(text):
        if text.startswith("}}", position):
            value.append("}")
            position += 2
        elif text[position] == "}":
            return "".join(value), position + 1
        else:
            value.append(text[position])
            position += 1
    raise _bad(url, "a value in braces has no closing '}'")


def _parse_sqlserver(url: str, rest: str) -> DatabaseUrl:
    server, _, tail = rest.partition(";")
    server, _, instance_db = server.partition("/")
    props = _semicolon_props(url, tail)
    host, port = _host_port(url, server, 1433)
    lowered = {k.lower(): v for k, v in props}
    database = lowered.get("databasename") or lowered.get("database") or instance_db
    if not database:
        raise _bad(url, "no databaseName property")
    user = lowered.get("user")
    password = lowered.get("password")
    register(password)
    keep = [(k, v) for k, v in props if k.lower() not in {"databasename", "database", "user", "password"}]
    return DatabaseUrl("sqlserver", SQLSERVER_DRIVER, host, port, database, user, password, tuple(keep))


def _parse_jtds(url: str, rest: str) -> DatabaseUrl:
    head, _, tail = rest.partition(";")
    server, _, database = head.partition("/")
    if not database:
        raise _bad(url, "no database after the host")
    host, port = _host_port(url, server, 1433)
    props = _semicolon_props(url, tail)
    lowered = {k.lower(): v for k, v in props}
    keep = [(k, v) for k, v in props if k.lower() not in {"user", "password"}]
    register(lowered.get("password"))
    return DatabaseUrl(
        "sqlserver", JTDS_DRIVER, host, port, database, lowered.get("user"), lowered.get("password"), tuple(keep)
    )


def _split_userinfo(rest: str) -> tuple[str | None, str]:
    """(user[:password], the rest): the userinfo ends at the `@` followed by a host and a `/`, so an
    unencoded `@`, `#`, `?` or `/` in a password stays in it."""
    for position in range(len(rest) - 1, -1, -1):
        if rest[position] != "@":
            continue
        host, slash, _ = rest[position + 1 :].partition("/")
        if slash and _HOST_PORT.match(host):
            return rest[:position], rest[position + 1 :]
    if "@" not in rest or _HOST_PORT.match(rest.partition("/")[0]):
        return None, rest  # no userinfo: any `@` is in the database name or the query
    # No host after any `@`: malformed, but still never show what stands before the last one.
    auth, _, after = rest.rpartition("@")
    return auth, after


def _parse_postgres(url: str, rest: str) -> DatabaseUrl:
    auth, rest = _split_userinfo(rest)
    user = password = None
    if auth is not None:
        user_text, _, password_text = auth.partition(":")
        user, password = unquote(user_text) or None, unquote(password_text) or None
        register(password_text)
        register(password)
    # Not urlsplit: a `#` is no fragment here, it can be part of a password= value.
    netloc, _, tail = rest.partition("/")
    path, _, query = tail.partition("?")
    host, port = _host_port(url, netloc, 5432)
    database = unquote(path)
    if not database or "/" in database:
        raise _bad(url, "no database name after the host")
    props = parse_qsl(query, keep_blank_values=True)
    lowered = dict(props)
    user = lowered.get("user", user)
    password = lowered.get("password", password)
    register(password)
    keep = [(k, v) for k, v in props if k not in {"user", "password"}]
    return DatabaseUrl("postgres", POSTGRES_DRIVER, host, port, database, user, password, tuple(keep))


def parse_url(url: str) -> DatabaseUrl:
    """Parse any supported URL form; raise a TidemarkError that names the URL otherwise."""
    text = url.strip()
    lowered = text.lower()
    prefixes = {
        "jdbc:sqlserver://": _parse_sqlserver,
        "jdbc:jtds:sqlserver://": _parse_jtds,
        "jdbc:postgresql://": _parse_postgres,
        "postgresql://": _parse_postgres,
        "postgres://": _parse_postgres,
    }
    for prefix, parser in prefixes.items():
        if lowered.startswith(prefix):
            return parser(text, text[len(prefix) :])
    raise _bad(text, "unknown scheme")
