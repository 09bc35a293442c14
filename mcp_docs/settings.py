"""One place for settings: command-line flags override `MCP_DOCS_*` environment variables, which override defaults."""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal

import platformdirs

EmbeddingsKind = Literal["local", "openai", "none"]

DEFAULT_EXTENSIONS = (".md", ".markdown")
DEFAULT_MAX_FILE_BYTES = 5 * 1024 * 1024
DEFAULT_PARSE_SECONDS = 5.0  # CPU time to parse one file, else it is skipped; 5 MB of the OTel docs take ~2 s
IGNORE_FILE_NAME = ".mcpdocsignore"

# Languages with a Tantivy Snowball stemmer; the key is what users write in `lang:` or `--language`.
STEMMER_LANGUAGES: dict[str, str] = {
    "ar": "arabic", "da": "danish", "nl": "dutch", "en": "english", "fi": "finnish",
    "fr": "french", "de": "german", "el": "greek", "hu": "hungarian", "it": "italian",
    "no": "norwegian", "pt": "portuguese", "ro": "romanian", "ru": "russian",
    "es": "spanish", "sv": "swedish", "ta": "tamil", "tr": "turkish",
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
    extra: dict[str, str] = field(default_factory=dict)

    @classmethod
    def load(
        cls,
        root: str | os.PathLike[str] | None = None,
        index_dir: str | os.PathLike[str] | None = None,
        *,
        language: str | None = None,
        embeddings: str | None = None,
        environ: dict[str, str] | None = None,
        **overrides: object,
    ) -> "Settings":
        env = os.environ if environ is None else environ
        root_value = root or env.get("MCP_DOCS_ROOT")
        if not root_value:
            raise ValueError("No documents root given: pass --root DIR or set MCP_DOCS_ROOT.")
        root_path = Path(root_value).expanduser()
        if not root_path.is_dir():
            raise ValueError(f"The documents root does not exist or is not a folder: {root_path}")
        root_path = root_path.resolve()
        index_value = index_dir or env.get("MCP_DOCS_INDEX_DIR")
        index_path = Path(index_value).expanduser().resolve() if index_value else default_index_dir(root_path)
        if index_path == root_path or index_path.is_relative_to(root_path):
            raise ValueError(
                f"The index folder {index_path} is inside the documents root; mcp-docs never writes into the root. "
                "Choose another --index-dir."
            )
        lang_value = language or env.get("MCP_DOCS_LANGUAGE") or "en"
        lang = normalize_language(lang_value)
        if lang is None:
            raise ValueError(
                f"Unsupported language '{lang_value}'. Choose one of: {', '.join(sorted(STEMMER_LANGUAGES))}."
            )
        emb = (embeddings or env.get("MCP_DOCS_EMBEDDINGS") or "local").lower()
        if emb not in ("local", "openai", "none"):
            raise ValueError(f"Unknown embeddings '{emb}': choose local, openai or none.")
        exts_env = env.get("MCP_DOCS_EXTENSIONS")
        extensions = (
            tuple(e if e.startswith(".") else f".{e}" for e in (x.strip().lower() for x in exts_env.split(",")) if e)
            if exts_env
            else DEFAULT_EXTENSIONS
        )
        max_bytes = int(env.get("MCP_DOCS_MAX_FILE_BYTES", DEFAULT_MAX_FILE_BYTES))
        settings = cls(
            root=root_path,
            index_dir=index_path,
            language=lang,
            embeddings=emb,  # type: ignore[arg-type]
            embeddings_model=env.get("MCP_DOCS_EMBEDDINGS_MODEL"),
            embeddings_base_url=env.get("MCP_DOCS_EMBEDDINGS_BASE_URL"),
            embeddings_api_key_env=env.get("MCP_DOCS_EMBEDDINGS_API_KEY_ENV", "OPENAI_API_KEY"),
            extensions=extensions,
            max_file_bytes=max_bytes,
            parse_seconds=_positive_seconds(env.get("MCP_DOCS_PARSE_SECONDS"), DEFAULT_PARSE_SECONDS),
        )
        clean = {k: v for k, v in overrides.items() if v is not None}
        return replace(settings, **clean) if clean else settings


def _positive_seconds(value: str | None, default: float) -> float:
    if value is None or not value.strip():
        return default
    try:
        seconds = float(value)
    except ValueError:
        seconds = -1.0
    if not 0 < seconds < float("inf"):
        raise ValueError(f"MCP_DOCS_PARSE_SECONDS must be a positive number of seconds (CPU time), not '{value[:20]}'.")
    return seconds


def default_index_dir(root: Path) -> Path:
    """One folder per absolute root in the user cache dir, readable and collision-free."""
    digest = hashlib.sha256(str(root).encode("utf-8")).hexdigest()[:12]
    slug = re.sub(r"[^A-Za-z0-9_-]+", "-", root.name).strip("-")[:40] or "root"
    return Path(platformdirs.user_cache_dir("mcp-docs", appauthor=False)) / f"{slug}-{digest}"
