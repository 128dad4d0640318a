"""Where the result store is: the one parser of a store location (`--db`, $CRYPTOBENCH_DB) and the
one redaction of it, for every line that names it.

A location is a SQLite file path or a `postgresql://` (`postgres://`) URL. Anything else that
looks like a URL (`mysql://u@h/db`, `postgresql:/x`, `sqlite:///x`) or a libpq key=value string is
refused with one line before anything is opened, so that no folder named after a URL is created.

A URL may hold secrets: the password of its user part, and the query parameters `password`,
`sslpassword`, `passfile` and `sslkey`. `redact` hides them in any text (the URL itself, or a
driver's error that echoes it); `StoreLocation.label` is the URL as every message prints it.
libpq ends the user part at the first '@' or '/', so a password with an unencoded '@', '/', '?'
or a space is read as a host name and echoed in its errors: such a URL is refused before it
reaches libpq (percent-encode them), and shown with everything before its right-most '@' hidden.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote

from ..core.errors import UsageError

POSTGRES_SCHEMES = ("postgresql://", "postgres://")
SECRET_PARAMETERS = ("password", "sslpassword", "passfile", "sslkey")
HIDDEN = "***"
# a scheme followed by '/', or a database's name as scheme: a URL, never a file name
_URL_LIKE = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:/|(postgres|postgresql|sqlite|sqlite3|mysql|mariadb|oracle|"
                       r"mssql|mongodb|redis)(\+[\w-]+)?:", re.IGNORECASE)
# libpq's other form of a connection string: host=… dbname=… password=…
_CONNINFO = re.compile(r"(^|\s)(host|hostaddr|dbname|user|password|port|service)\s*=", re.IGNORECASE)
# scheme://USERINFO@ up to the right-most '@' of the word: what comes before the host, whatever it holds
_USERINFO = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)(?P<info>\S*)@")
# a secret parameter in a URL's query or a key=value string, its value quoted or not
_PARAMETER = re.compile(r"(?P<key>(?<![A-Za-z0-9_])(?:" + "|".join(SECRET_PARAMETERS) + r")\s*=\s*)"
                        r"(?P<value>'(?:[^'\\]|\\.)*'?|[^&\s]*)", re.IGNORECASE)


def redact(text: str) -> str:
    """`text` with every store secret in it hidden: the password of any URL's user part (all
    before the right-most '@' of the word but the user name) and the value of every secret
    parameter (`password=`, `sslpassword=`, `passfile=`, `sslkey=`). The one redaction every
    message about a store goes through."""
    def userinfo(m: re.Match) -> str:
        user, colon, _ = m["info"].partition(":")
        hidden = f"{user}:{HIDDEN}" if colon else user
        return f"{m['scheme']}{hidden}@"
    # the parameters first: a value holding an '@' is hidden whole, never split at it as a user part
    return _USERINFO.sub(userinfo, _hide_parameters(str(text)))


def _hide_parameters(text: str) -> str:
    return _PARAMETER.sub(lambda m: m["key"] + HIDDEN, text)


@dataclass(frozen=True)
class StoreLocation:
    """A parsed store location: a SQLite file, or a PostgreSQL URL (with its secrets, to hide)."""

    kind: str                       # "sqlite" | "postgresql"
    path: Path | None               # the SQLite file
    url: str | None                 # the PostgreSQL URL as given, secrets and all: for the driver only
    label: str                      # what every message prints: the path, or the URL redacted
    secrets: tuple[str, ...] = ()   # what no message may hold (the password, secret parameter values)

    @property
    def target(self) -> Path | str:
        """What the store is opened with: the file's path, or the URL."""
        return self.path if self.kind == "sqlite" else self.url

    def redact(self, text: str) -> str:
        """`text` (a driver's error, say) with this location's URL shown as its label and every
        one of its secrets hidden, wherever they appear."""
        text = str(text)
        if self.url:
            text = text.replace(self.url, self.label)
        return redact(_hide(text, self.secrets))


def parse_location(text, source: str = "--db") -> StoreLocation:
    """The store `text` names (from `source`, for the message): a postgresql:// URL, else a
    SQLite file path. UsageError, with the text redacted, for a URL of another kind, a malformed
    PostgreSQL URL or a libpq key=value string."""
    if isinstance(text, StoreLocation):
        return text
    raw = str(text)
    if not raw.strip():
        raise UsageError(f"{source}: empty; give a SQLite file path or a postgresql:// URL")
    if raw.startswith(POSTGRES_SCHEMES):
        return _postgres(raw, source)
    if _URL_LIKE.match(raw):
        raise UsageError(f"{source} {redact(raw)}: not a store location: give a SQLite file path or a "
                         "postgresql:// (postgres://) URL; nothing was opened or created")
    if _CONNINFO.search(raw):
        raise UsageError(f"{source} {redact(raw)}: a libpq key=value string; give the store as a "
                         "postgresql://USER@HOST/DB URL (or a SQLite file path)")
    return StoreLocation("sqlite", Path(raw), None, raw)


def _postgres(url: str, source: str) -> StoreLocation:
    """A PostgreSQL URL, checked to mean to libpq what it means here, with its secrets found."""
    scheme, rest = url.split("://", 1)
    end = min([i for i in (rest.find("/"), rest.find("?")) if i >= 0], default=len(rest))
    authority, tail = rest[:end], rest[end:]
    if authority.count("@") > 1 or "@" in tail or re.search(r"[\s\x00-\x1f\x7f]", url):
        # the shown form: everything before the right-most '@' hidden (after the secret parameters)
        rest = _hide_parameters(rest)
        shown = redact(f"{scheme}://" + (HIDDEN + "@" + rest.rpartition("@")[2] if "@" in rest else rest))
        raise UsageError(f"{source} {shown}: a character in the URL that libpq reads differently (an "
                         "unencoded '@', '/', '?' or space in the user name or password, or an '@' after "
                         "the host); percent-encode it (%40, %2F, %3F, %20)")
    secrets: list[str] = []
    if "@" in authority:
        user, colon, password = authority.rpartition("@")[0].partition(":")
        if colon and password:
            secrets += [password, unquote(password)]
    query = tail.partition("?")[2]
    for pair in query.split("&") if query else ():
        key, eq, value = pair.partition("=")
        if not eq:       # libpq would echo it in its error, and it may be the rest of a value with an '&'
            raise UsageError(f"{source} {redact(url.partition('?')[0])}?{HIDDEN}: a query parameter "
                             "without '=' (an unencoded '&' in a value?); percent-encode it (%26)")
        if eq and value and unquote(key).strip().lower() in SECRET_PARAMETERS:
            secrets += [value, unquote(value)]
    found = tuple(dict.fromkeys(s for s in secrets if s))
    # _hide as well as redact: a parameter written pass%77ord= is hidden too
    return StoreLocation("postgresql", None, url, redact(_hide(url, found)), found)


def _hide(text: str, secrets: tuple[str, ...]) -> str:
    """`text` with each of `secrets` replaced by ***, the longest first; a secret shorter than four
    characters only where it stands as a word of its own ("ab" hidden inside every word would
    garble the line)."""
    for secret in sorted(secrets, key=len, reverse=True):
        text = text.replace(secret, HIDDEN) if len(secret) >= 4 else \
            re.sub(rf"(?<![A-Za-z0-9]){re.escape(secret)}(?![A-Za-z0-9])", HIDDEN, text)
    return text
