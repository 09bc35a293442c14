"""A PostgreSQL connection string as it may be shown: every credential libpq accepts replaced by ***.

libpq takes two forms (PostgreSQL manual, "Connection Strings"): a URI, `postgresql://user:pw@h1:5432,h2/db?k=v&...`
(its userinfo, and any query parameter, percent-encoded or not: the parameter's name is decoded too, so
`pass%77ord=` is a password), and `key=value` pairs separated by spaces, a value either bare or in single quotes,
with backslash escapes in both. The keys that carry a secret are `password` and `sslpassword`; `passfile` names
the file of passwords (its path is hidden too: it says where the secrets are). The value of a key libpq does not
know (`passwrod=`, a typo that libpq refuses) is hidden as well. A string neither form parses is never shown at
all, since whatever it holds cannot be told apart from a password.
"""

from __future__ import annotations

from urllib.parse import unquote

SECRET_KEYS = frozenset({"password", "sslpassword", "passfile"})
# The parameters whose values are shown (libpq 16's, less the three above). Any other key's value is hidden too:
# libpq refuses an unknown key, but the message must not show `passwrod=...` while saying so.
SHOWN_KEYS = frozenset(
    {
        "host", "hostaddr", "port", "dbname", "user", "connect_timeout", "client_encoding", "options",
        "application_name", "fallback_application_name", "keepalives", "keepalives_idle", "keepalives_interval",
        "keepalives_count", "tcp_user_timeout", "replication", "gssencmode", "sslmode", "sslcompression", "sslcert",
        "sslkey", "sslrootcert", "sslcrl", "sslcrldir", "sslsni", "requirepeer", "ssl_min_protocol_version",
        "ssl_max_protocol_version", "krbsrvname", "gsslib", "gssdelegation", "service", "target_session_attrs",
        "load_balance_hosts", "require_auth", "channel_binding", "sslcertmode",
    }
)  # fmt: skip


def _hidden(key: str) -> bool:
    return key in SECRET_KEYS or key not in SHOWN_KEYS


MASK = "***"
UNSHOWN = "the configured database"
_SCHEMES = ("postgresql://", "postgres://")


def redact(dsn: str) -> str:
    """`dsn` with every credential replaced by ***; UNSHOWN when it cannot be parsed."""
    try:
        if dsn.startswith(_SCHEMES):
            return _redact_uri(dsn)
        return _redact_pairs(dsn)
    except ValueError:
        return UNSHOWN


def secrets(dsn: str) -> list[str]:
    """The credential values `dsn` holds, raw and decoded, longest first: what an error text must not repeat."""
    found: set[str] = set()
    try:
        if dsn.startswith(_SCHEMES):
            userinfo, _at, tail = _split_userinfo(dsn.split("://", 1)[1])
            if ":" in userinfo:
                raw = userinfo.split(":", 1)[1]
                found.update({raw, unquote(raw)})
            for param in tail.partition("?")[2].split("&"):
                key, _, value = param.partition("=")
                if _hidden(unquote(key)):
                    found.update({value, unquote(value)})
        else:
            for key, _start, _end, value in _pairs(dsn):
                if _hidden(key):
                    found.add(value)
    except ValueError:
        pass
    return sorted((s for s in found if s), key=len, reverse=True)


def scrub(text: str, dsn: str) -> str:
    """`text` (a driver's error message) without any credential of `dsn` in it."""
    for secret in secrets(dsn):
        text = text.replace(secret, MASK)
    return text


def is_key_value(dsn: str) -> bool:
    """`dsn` is libpq's key=value form (keys are lower-case words: `host`, `dbname`, `sslpassword`...)."""
    try:
        pairs = _pairs(dsn)
    except ValueError:
        return False
    return bool(pairs) and all(key.replace("_", "").isalpha() and key.islower() for key, *_ in pairs)


def parses(dsn: str) -> bool:
    return redact(dsn) != UNSHOWN


def _redact_uri(dsn: str) -> str:
    scheme, rest = dsn.split("://", 1)
    userinfo, at, tail = _split_userinfo(rest)
    if at and ":" in userinfo:
        userinfo = userinfo.split(":", 1)[0] + ":" + MASK
    path, question, query = tail.partition("?")
    if question:
        params = []
        for param in query.split("&"):
            key, eq, _value = param.partition("=")
            params.append(f"{key}={MASK}" if eq and _hidden(unquote(key)) else param)
        query = "&".join(params)
    return f"{scheme}://{userinfo}{at}{path}{question}{query}"


def _split_userinfo(rest: str) -> tuple[str, str, str]:
    """(userinfo, '@', the rest) of a URI after its scheme. The userinfo ends at the LAST '@', not libpq's first
    one before a '/': a password holding an unencoded '/', '?' or '@' is then hidden whole (an '@' further on,
    in a query value, hides more than needed, never less)."""
    return rest.rpartition("@") if "@" in rest else ("", "", rest)


def _redact_pairs(dsn: str) -> str:
    pairs = _pairs(dsn)
    if not pairs:
        raise ValueError("no key=value pair")
    out, last = [], 0
    for key, start, end, _value in pairs:
        if _hidden(key):
            out += [dsn[last:start], MASK]
            last = end
    out.append(dsn[last:])
    return "".join(out)


def _pairs(dsn: str) -> list[tuple[str, int, int, str]]:
    """(key, start, end, value) of each `key = value` of a libpq key/value string; start-end spans the value as
    written (quotes included). ValueError where libpq would refuse the string."""
    pairs: list[tuple[str, int, int, str]] = []
    i, n = 0, len(dsn)
    while True:
        while i < n and dsn[i].isspace():
            i += 1
        if i >= n:
            return pairs
        start = i
        while i < n and dsn[i] != "=" and not dsn[i].isspace():
            i += 1
        key = dsn[start:i]
        while i < n and dsn[i].isspace():
            i += 1
        if not key or i >= n or dsn[i] != "=":
            raise ValueError("missing '='")
        i += 1
        while i < n and dsn[i].isspace():
            i += 1
        start, value = i, []
        if i < n and dsn[i] == "'":
            i += 1
            while True:
                if i >= n:
                    raise ValueError("unterminated quoted value")
                if dsn[i] == "\\" and i + 1 < n:
                    value.append(dsn[i + 1])
                    i += 2
                elif dsn[i] == "'":
                    i += 1
                    break
                else:
                    value.append(dsn[i])
                    i += 1
        else:
            while i < n and not dsn[i].isspace():
                if dsn[i] == "\\" and i + 1 < n:
                    value.append(dsn[i + 1])
                    i += 2
                else:
                    value.append(dsn[i])
                    i += 1
        pairs.append((key, start, i, "".join(value)))
