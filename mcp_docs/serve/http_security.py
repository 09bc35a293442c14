"""Who may talk to the HTTP server: the bind policy, the bearer token, and Host/Origin checks on every request.

DNS rebinding lets a web page reach a server on 127.0.0.1 under a name the attacker controls, so every
request must name an allowed host (421 otherwise) and, when a browser sends an Origin, an allowed origin
(403). Header values are parsed strictly: anything that is not `hostname`, `IPv4` or `[IPv6]` with an
optional numeric port is refused rather than guessed at (`127.0.0.1:80@evil.example` is not 127.0.0.1).
"""

from __future__ import annotations

import hmac
import ipaddress
import re
from collections.abc import Iterable
from pathlib import Path
from urllib.parse import urlsplit

from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send

from ..errors import TokenFileUnusable

TOKEN_ENV = "MCP_DOCS_TOKEN"  # both read by Settings; named here in messages
TOKEN_FILE_ENV = "MCP_DOCS_TOKEN_FILE"
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1")
WILDCARD_HOSTS = ("0.0.0.0", "::", "")
# A token guards the documents from the whole network once we bind beyond loopback: refuse guessable ones.
MIN_NETWORK_TOKEN_CHARS = 16

_HOST_HEADER = re.compile(
    r"(?:\[(?P<ipv6>[0-9a-f:.]+)\]|(?P<name>[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*\.?))"
    r"(?::(?P<port>[0-9]{1,5}))?"
)


def is_loopback(host: str) -> bool:
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def load_token(token: str | None, token_file: Path | None) -> str | None:
    """The bearer token from MCP_DOCS_TOKEN, or the file named by MCP_DOCS_TOKEN_FILE (never a CLI flag)."""
    if token:
        return token
    if token_file is not None:
        try:
            token = token_file.read_text(encoding="utf-8").strip()
        except OSError as exc:
            raise TokenFileUnusable(
                f"cannot read the token file named by {TOKEN_FILE_ENV} ({exc.strerror or exc})."
            ) from exc
        if not token:
            raise TokenFileUnusable(f"the token file named by {TOKEN_FILE_ENV} is empty.")
        return token
    return None


def bind_policy_error(host: str, token: str | None) -> str | None:
    """Why serving on `host` with this token would expose the documents, or None if it is fine."""
    if is_loopback(host):
        return None
    if not token:
        return (
            f"refusing to listen on {host} without a token: anyone on the network could read the documents. "
            f"Set {TOKEN_ENV} (or {TOKEN_FILE_ENV}) to a long random secret, or bind to 127.0.0.1."
        )
    if len(token) < MIN_NETWORK_TOKEN_CHARS:
        return (
            f"refusing to listen on {host} with a {len(token)}-character token: it must have at least "
            f'{MIN_NETWORK_TOKEN_CHARS} characters (for example `python -c "import secrets; '
            f'print(secrets.token_urlsafe(32))"`).'
        )
    return None


def parse_host_header(value: str) -> str | None:
    """The host named by a Host header ('LocalHost:8000' → 'localhost', '[::1]:80' → '::1'), None if malformed.

    Only `hostname`, `IPv4` or `[IPv6]` followed by an optional `:digits` port is accepted: user info,
    paths, a second colon or a non-numeric port make the whole header invalid.
    """
    match = _HOST_HEADER.fullmatch(value.strip().lower())
    if match is None:
        return None
    port = match.group("port")
    if port is not None and int(port) > 65535:
        return None
    ipv6 = match.group("ipv6")
    if ipv6 is not None:
        try:
            return str(ipaddress.IPv6Address(ipv6))
        except ValueError:
            return None
    return match.group("name").rstrip(".")


def allowed_hosts_for(host: str, allowed: Iterable[str] = ()) -> set[str] | None:
    """Host names a request may carry when bound to `host`, with the `allowed` extra ones (lower-case,
    Settings.allowed_hosts); None means any (wildcard bind, token required)."""
    extra = set(allowed)
    if host in WILDCARD_HOSTS:
        # Every interface: the token (required) protects it; list names in MCP_DOCS_ALLOWED_HOSTS to restrict.
        return set(LOOPBACK_NAMES) | extra if extra else None
    bare = host.strip("[]").lower()
    # compare IPv6 addresses in the form parse_host_header gives them ('0:0::1' → '::1')
    named = parse_host_header(f"[{bare}]") if ":" in bare else bare
    return set(LOOPBACK_NAMES) | extra | {named or bare}


class SecurityMiddleware:
    """Host and Origin validation (DNS rebinding) and an optional bearer token, for every HTTP route.

    Foreign or malformed Host → 421, foreign Origin → 403, missing or wrong token → 401
    (compared with `hmac.compare_digest`). `/health` needs no token.
    """

    def __init__(
        self, app: ASGIApp, allowed_hosts: set[str] | None, allowed_origins: set[str], token: str | None
    ) -> None:
        self.app = app
        self.allowed_hosts = allowed_hosts  # None: any well-formed Host (wildcard bind with a token)
        self.allowed_origins = allowed_origins
        self.token = token.encode("utf-8") if token else None

    def host_ok(self, header: str | None) -> bool:
        host = parse_host_header(header) if header else None
        if host is None:
            return False
        return self.allowed_hosts is None or host in self.allowed_hosts

    def origin_ok(self, origin: str | None) -> bool:
        if origin is None:
            return True  # not a browser (or same-origin GET): nothing to check
        origin = origin.strip().lower()
        if origin in self.allowed_origins:
            return True
        try:
            parts = urlsplit(origin)
        except ValueError:
            return False
        if parts.scheme not in ("http", "https") or parts.path or parts.query or parts.fragment:
            return False
        host = parse_host_header(parts.netloc)
        hosts = self.allowed_hosts if self.allowed_hosts is not None else set(LOOPBACK_NAMES)
        return host is not None and host in hosts

    def token_ok(self, authorization: str) -> bool:
        assert self.token is not None
        scheme, _, supplied = authorization.partition(" ")
        return scheme.lower() == "bearer" and hmac.compare_digest(supplied.strip().encode("utf-8"), self.token)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        if not self.host_ok(headers.get("host")):
            await _plain(421, "Invalid Host header", scope, receive, send)
            return
        if not self.origin_ok(headers.get("origin")):
            await _plain(403, "Invalid Origin header", scope, receive, send)
            return
        needs_token = self.token is not None and scope.get("path") != "/health"
        if needs_token and not self.token_ok(headers.get("authorization", "")):
            response = JSONResponse(
                {"error": "unauthorized", "error_description": "a valid bearer token is required"},
                status_code=401,
                headers={"WWW-Authenticate": 'Bearer realm="mcp-docs", error="invalid_token"'},
            )
            await response(scope, receive, send)
            return
        await self.app(scope, receive, send)


async def _plain(status: int, text: str, scope: Scope, receive: Receive, send: Send) -> None:
    await Response(text, status_code=status, media_type="text/plain")(scope, receive, send)


__all__ = [
    "SecurityMiddleware",
    "allowed_hosts_for",
    "bind_policy_error",
    "is_loopback",
    "load_token",
    "parse_host_header",
]
