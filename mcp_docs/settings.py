"""One place for settings: command-line flags override `MCP_DOCS_*` environment variables, which override defaults.

Nothing else in mcp_docs reads the environment: every variable is read, checked and typed here, and a bad
value is one sentence naming the variable.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal, TypeVar

import platformdirs

from .errors import SettingsInvalid

EmbeddingsKind = Literal["local", "openai", "none"]
RerankApi = Literal["tei", "cohere"]
StoreKind = str  # a name in store/choices.py CHOICES: "tantivy", "postgres", or a store registered in store/registry.py
_Number = TypeVar("_Number", int, float)
_Default = TypeVar("_Default", int, float, None)

DEFAULT_EXTENSIONS = (".md", ".markdown")
DEFAULT_MAX_FILE_BYTES = 5 * 1024 * 1024
DEFAULT_PARSE_SECONDS = 5.0  # CPU time to parse one file, else it is skipped; 5 MB of the OTel docs take ~2 s
IGNORE_FILE_NAME = ".mcpdocsignore"
# Streamable HTTP sessions (see serve/http_sessions.py): an idle one ends after this long; at the cap the least
# recently used idle one makes room. A session costs ~40 KB, so the cap bounds them to ~10 MB.
DEFAULT_SESSION_IDLE_SECONDS = 1800.0
DEFAULT_MAX_SESSIONS = 256
# Reranking (mcp_docs/rerank): sections re-scored per search, and how long one call to an HTTP reranker may take
# before the fused order is returned instead.
DEFAULT_RERANK_TOP = 30
DEFAULT_RERANK_TIMEOUT = 2.0
MAX_RERANK_TOP = 200

# Languages with a Tantivy Snowball stemmer; the key is what users write in `lang:` or `--language`.
STEMMER_LANGUAGES: dict[str, str] = {
    "ar": "arabic",
    "da": "danish",
    "nl": "dutch",
    "en": "english",
    "fi": "finnish",
    "fr": "french",
    "de": "german",
    "el": "greek",
    "hu": "hungarian",
    "it": "italian",
    "no": "norwegian",
    "pt": "portuguese",
    "ro": "romanian",
    "ru": "russian",
    "es": "spanish",
    "sv": "swedish",
    "ta": "tamil",
    "tr": "turkish",
}


def normalize_language(value: str | None) -> str | None:
    """'fr', 'FR', 'fr-CA', 'french' → 'fr'; unknown → None."""
    if not value or not isinstance(value, str):
        return None
    key = value.strip().lower().replace("_", "-").split("-")[0]
    if key in STEMMER_LANGUAGES:
        return key
    for code, name in STEMMER_LANGUAGES.items():
        if key == name:
            return code
    return None


@dataclass(frozen=True)
class Settings:
    root: Path
    index_dir: Path
    language: str = "en"
    embeddings: EmbeddingsKind = "local"
    embeddings_model: str | None = None
    embeddings_base_url: str | None = None
    embeddings_api_key_env: str = "OPENAI_API_KEY"
    extensions: tuple[str, ...] = DEFAULT_EXTENSIONS
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES
    parse_seconds: float = DEFAULT_PARSE_SECONDS
    watch: bool = True
    session_idle_seconds: float = DEFAULT_SESSION_IDLE_SECONDS
    max_sessions: int = DEFAULT_MAX_SESSIONS
    # the key of an OpenAI-compatible endpoint, read from the variable named by embeddings_api_key_env
    embeddings_api_key: str | None = field(default=None, repr=False)
    parse_workers: int | None = None  # None: decided by store.embedded.sync.parse_workers
    # HTTP: the bearer token (MCP_DOCS_TOKEN) or the file holding it (MCP_DOCS_TOKEN_FILE, read when serving),
    # and the Host names and Origins allowed beyond the bound address, lower-case
    token: str | None = field(default=None, repr=False)
    token_file: Path | None = None
    allowed_hosts: tuple[str, ...] = ()
    allowed_origins: tuple[str, ...] = ()
    # the optional rerank stage: an HTTP service (rerank_url, in the rerank_api wire format) or a local ONNX
    # cross-encoder folder (rerank_model_dir); the key comes from the variable named by rerank_api_key_env
    rerank_url: str | None = None
    rerank_api: RerankApi = "tei"
    rerank_model: str | None = None
    rerank_api_key_env: str | None = None
    rerank_api_key: str | None = field(default=None, repr=False)
    rerank_model_dir: Path | None = None
    rerank_top: int = DEFAULT_RERANK_TOP
    rerank_timeout: float = DEFAULT_RERANK_TIMEOUT
    # HTTP: processes answering on the one port (see serve/workers.py), and Streamable HTTP without sessions
    workers: int = 1
    stateless: bool = False
    # where the index lives: the index folder (tantivy) or a PostgreSQL database (MCP_DOCS_DATABASE_URL)
    store: StoreKind = "tantivy"
    database_url: str | None = field(default=None, repr=False)
    # False for a server over PostgreSQL started without a root: it only reads (its root is an empty folder of
    # its own, `reader_root()`); with a root, `serve --store postgres` is the one writer (see serve/process.py)
    has_root: bool = True
    extra: dict[str, str] = field(default_factory=dict)

    @classmethod
    def load(
        cls,
        root: str | os.PathLike[str] | None = None,
        index_dir: str | os.PathLike[str] | None = None,
        *,
        language: str | None = None,
        embeddings: str | None = None,
        rerank_url: str | None = None,
        environ: Mapping[str, str] | None = None,
        store: str | None = None,
        database_url: str | None = None,
        **overrides: Any,
    ) -> Settings:
        env = os.environ if environ is None else environ
        store_kind, db_url = _store_settings(env, store, database_url)
        reader = bool(overrides.pop("reader", False))  # a server: over PostgreSQL it needs no copy of the root
        root_value = root or env.get("MCP_DOCS_ROOT")
        has_root = bool(root_value)
        if not root_value and reader and not _store_needs_root(store_kind):
            root_value = str(reader_root())
        if not root_value:
            raise SettingsInvalid("No documents root given: pass --root DIR or set MCP_DOCS_ROOT.")
        root_path = Path(root_value).expanduser()
        if not root_path.is_dir():
            raise SettingsInvalid(f"The documents root does not exist or is not a folder: {root_path}")
        # As written (links not followed), '..' undone as the shell user means it: `--root . --index-dir ../idx`.
        given_root = Path(os.path.abspath(root_path))
        root_path = root_path.resolve()
        index_value = index_dir or env.get("MCP_DOCS_INDEX_DIR")
        given_index = (
            Path(os.path.abspath(Path(index_value).expanduser())) if index_value else default_index_dir(root_path)
        )
        index_path = given_index.resolve()
        check_separate(root_path, index_path, (given_root, root_path), (given_index, index_path))
        lang_value = language or env.get("MCP_DOCS_LANGUAGE") or "en"
        lang = normalize_language(lang_value)
        if lang is None:
            origin = "" if language else " (from MCP_DOCS_LANGUAGE)"
            raise SettingsInvalid(
                f"Unsupported language '{lang_value}'{origin}. Choose one of: {', '.join(sorted(STEMMER_LANGUAGES))}."
            )
        emb = (embeddings or env.get("MCP_DOCS_EMBEDDINGS") or "local").lower()
        if emb not in ("local", "openai", "none"):
            origin = "" if embeddings else " (from MCP_DOCS_EMBEDDINGS)"
            raise SettingsInvalid(f"Unknown embeddings '{emb}'{origin}: choose local, openai or none.")
        exts_env = env.get("MCP_DOCS_EXTENSIONS")
        extensions = (
            tuple(e if e.startswith(".") else f".{e}" for e in (x.strip().lower() for x in exts_env.split(",")) if e)
            if exts_env
            else DEFAULT_EXTENSIONS
        )
        api_key_env = str(
            overrides.get("embeddings_api_key_env") or env.get("MCP_DOCS_EMBEDDINGS_API_KEY_ENV") or "OPENAI_API_KEY"
        )
        token_file = env.get("MCP_DOCS_TOKEN_FILE", "").strip()
        settings = cls(
            root=root_path,
            index_dir=index_path,
            language=lang,
            embeddings=emb,  # type: ignore[arg-type]  # checked just above
            embeddings_model=env.get("MCP_DOCS_EMBEDDINGS_MODEL"),
            # OPENAI_BASE_URL is the openai package's own variable: honoured when ours is not set
            embeddings_base_url=env.get("MCP_DOCS_EMBEDDINGS_BASE_URL") or env.get("OPENAI_BASE_URL") or None,
            embeddings_api_key_env=api_key_env,
            embeddings_api_key=(env.get(api_key_env) or None) if emb == "openai" else None,
            extensions=extensions,
            max_file_bytes=_positive(env, "MCP_DOCS_MAX_FILE_BYTES", DEFAULT_MAX_FILE_BYTES, int),
            parse_seconds=_positive(env, "MCP_DOCS_PARSE_SECONDS", DEFAULT_PARSE_SECONDS, float),
            parse_workers=_positive(env, "MCP_DOCS_PARSE_WORKERS", None, int),
            session_idle_seconds=_positive(env, "MCP_DOCS_SESSION_IDLE_SECONDS", DEFAULT_SESSION_IDLE_SECONDS, float),
            max_sessions=_positive(env, "MCP_DOCS_MAX_SESSIONS", DEFAULT_MAX_SESSIONS, int),
            token=env.get("MCP_DOCS_TOKEN", "").strip() or None,
            token_file=Path(token_file).expanduser() if token_file else None,
            allowed_hosts=_names(env, "MCP_DOCS_ALLOWED_HOSTS"),
            allowed_origins=tuple(o.rstrip("/") for o in _names(env, "MCP_DOCS_ALLOWED_ORIGINS")),
            **_rerank_settings(env, rerank_url),
            workers=_positive(env, "MCP_DOCS_WORKERS", 1, int),
            stateless=_flag(env, "MCP_DOCS_STATELESS"),
            store=store_kind,
            database_url=db_url,
            has_root=has_root,
        )
        clean = {k: v for k, v in overrides.items() if v is not None}
        return replace(settings, **clean) if clean else settings


def check_separate(root: Path, index: Path, root_forms: tuple[Path, ...], index_forms: tuple[Path, ...]) -> None:
    """The root and the index folder must not contain each other, as written or through links: the index
    is deleted and rebuilt at will, and documents inside it (or an index inside the root) would be lost or indexed."""
    for r in root_forms:
        for i in index_forms:
            if i == r or i.is_relative_to(r):
                raise SettingsInvalid(
                    f"The index folder {index} is inside the documents root {root}; mcp-docs never writes into "
                    "the root. Choose another --index-dir."
                )
            if r.is_relative_to(i):
                raise SettingsInvalid(
                    f"The documents root {root} is inside the index folder {index}; the index folder is a cache "
                    "that mcp-docs may delete. Choose another --index-dir."
                )


def _rerank_settings(env: Mapping[str, str], url_flag: str | None) -> dict[str, Any]:
    """The rerank stage's fields, checked: a URL or a model folder (not both), a known wire format, a key when
    its variable is named."""
    url = (url_flag or env.get("MCP_DOCS_RERANK_URL", "")).strip().rstrip("/") or None
    origin = "--rerank-url" if url_flag else "MCP_DOCS_RERANK_URL"
    if url is not None and not re.fullmatch(r"https?://[^/\s?#]+(/[^\s?#]*)?", url):
        # a URL with an @ may hold user:password (even mistyped): it is never repeated
        shown = "(not shown: it holds an @, maybe a user:password)" if "@" in url else f"'{url[:80]}'"
        raise SettingsInvalid(
            f"{origin} must be an http:// or https:// URL such as http://127.0.0.1:8080, not {shown}."
        )
    api = env.get("MCP_DOCS_RERANK_API", "").strip().lower() or "tei"
    if api not in ("tei", "cohere"):
        raise SettingsInvalid(f"Unknown MCP_DOCS_RERANK_API '{api[:40]}': choose tei or cohere.")
    key_env = env.get("MCP_DOCS_RERANK_API_KEY_ENV", "").strip() or None
    key = (env.get(key_env, "").strip() or None) if key_env else None
    if url is not None and key_env and key is None:
        raise SettingsInvalid(
            f"MCP_DOCS_RERANK_API_KEY_ENV names {key_env[:60]}, which is not set: set it to the reranker's API key."
        )
    if url is not None and key is not None and "@" in url.split("/", 3)[2]:
        # the HTTP client would send the URL's user:password as Basic auth in place of the key, silently
        raise SettingsInvalid(
            f"{origin} holds a user:password@ and MCP_DOCS_RERANK_API_KEY_ENV names a key: the service would get "
            "only one of them, so keep one (the key, as a bearer token, or the URL's user:password)."
        )
    model_dir_value = env.get("MCP_DOCS_RERANK_MODEL_DIR", "").strip()
    model_dir = Path(model_dir_value).expanduser().resolve() if model_dir_value else None
    if model_dir is not None:
        if url is not None:
            raise SettingsInvalid(f"Both {origin} and MCP_DOCS_RERANK_MODEL_DIR are set: keep one reranker.")
        from .rerank.local import find_model_files  # what a cross-encoder export folder must hold

        find_model_files(model_dir)
    top = _positive(env, "MCP_DOCS_RERANK_TOP", DEFAULT_RERANK_TOP, int)
    if top > MAX_RERANK_TOP:
        raise SettingsInvalid(f"MCP_DOCS_RERANK_TOP must be at most {MAX_RERANK_TOP}, not {top}.")
    return {
        "rerank_url": url,
        "rerank_api": api,
        "rerank_model": env.get("MCP_DOCS_RERANK_MODEL", "").strip() or None,
        "rerank_api_key_env": key_env,
        "rerank_api_key": key,
        "rerank_model_dir": model_dir,
        "rerank_top": top,
        "rerank_timeout": _positive(env, "MCP_DOCS_RERANK_TIMEOUT", DEFAULT_RERANK_TIMEOUT, float),
    }


def _store_needs_root(kind: str) -> bool:
    from .store.choices import CHOICES

    return CHOICES[kind].needs_root


def _store_settings(
    env: Mapping[str, str], store: str | None, database_url: str | None
) -> tuple[StoreKind, str | None]:
    """--store and its database URL, checked; the URL is never repeated in a message (it may hold a password)."""
    from .store.choices import CHOICES, DEFAULT_STORE, store_choices_sentence  # store/registry.py adds to it

    kind = (store or env.get("MCP_DOCS_STORE", "")).strip().lower() or DEFAULT_STORE
    if kind not in CHOICES:
        origin = "" if store else " (from MCP_DOCS_STORE)"
        raise SettingsInvalid(f"Unknown store '{kind[:40]}'{origin}: choose {store_choices_sentence()}.")
    url = (database_url or env.get("MCP_DOCS_DATABASE_URL", "")).strip() or None
    if CHOICES[kind].needs_database_url:
        if url is None:
            raise SettingsInvalid(
                f"--store {kind} needs the database: set MCP_DOCS_DATABASE_URL (or pass --database-url) to a URL "
                "such as postgresql://user:password@host:5432/dbname."
            )
        from .store.postgres.dsn import is_key_value  # libpq's other form: host=h dbname=d password='...'

        if not (re.match(r"postgres(ql)?://", url) or is_key_value(url)):
            origin = "--database-url" if database_url else "MCP_DOCS_DATABASE_URL"
            raise SettingsInvalid(
                f"{origin} must be a PostgreSQL URL such as postgresql://user:password@host:5432/dbname, or libpq "
                "key=value pairs (the value given is not shown: it may hold a password)."
            )
    return kind, url


@contextmanager
def token_kept_from_children() -> Iterator[None]:
    """MCP_DOCS_TOKEN taken out of the environment that child processes inherit, for the duration: the settings
    have read it already, and a child's environment is readable in /proc/PID/environ (serve/workers.py passes the
    token through the spawn pipe instead). Put back afterwards, for whoever runs in the same process next."""
    given = os.environ.pop("MCP_DOCS_TOKEN", None)
    try:
        yield
    finally:
        if given is not None:
            os.environ["MCP_DOCS_TOKEN"] = given


def reader_root() -> Path:
    """The documents root of a server that reads a PostgreSQL index without a copy of the documents: an empty
    folder of its own (documents are read from the database; nothing is ever written there)."""
    path = Path(platformdirs.user_cache_dir("mcp-docs", appauthor=False)) / "postgres-reader-root"
    path.mkdir(parents=True, exist_ok=True)
    return path


def _flag(env: Mapping[str, str], name: str) -> bool:
    raw = env.get(name, "").strip().lower()
    if raw in ("", "0", "false", "no", "off"):
        return False
    if raw in ("1", "true", "yes", "on"):
        return True
    raise SettingsInvalid(f"{name} must be 1 or 0 (true or false), not '{raw[:40]}'.")


def _names(env: Mapping[str, str], name: str) -> tuple[str, ...]:
    """A comma-separated list, lower-case, without blanks."""
    return tuple(dict.fromkeys(v.strip().lower() for v in env.get(name, "").split(",") if v.strip()))


def _positive(
    env: Mapping[str, str], name: str, default: _Default, kind: Callable[[str], _Number]
) -> _Number | _Default:
    raw = env.get(name, "").strip()
    if not raw:
        return default
    try:
        value: _Number | None = kind(raw)
    except ValueError:
        value = None
    if value is None or not 0 < value < float("inf"):
        raise SettingsInvalid(f"{name} must be a positive number, not '{raw[:40]}' (default {default}).")
    return value


def default_index_dir(root: Path) -> Path:
    """One folder per absolute root in the user cache dir, readable and collision-free."""
    digest = hashlib.sha256(str(root).encode("utf-8")).hexdigest()[:12]
    slug = re.sub(r"[^A-Za-z0-9_-]+", "-", root.name).strip("-")[:40] or "root"
    return Path(platformdirs.user_cache_dir("mcp-docs", appauthor=False)) / f"{slug}-{digest}"
