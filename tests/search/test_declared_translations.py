"""Translations whose folders are translated too (`en/Plugins/Canvas.md`, `no/Utvidelser/Canvas.md`), paired by
the key their front matter shares: an Obsidian Publish `permalink`, Hugo's `translationKey` (issue 29, part 3:
"a translation pair is shown once, in the question's language")."""

from collections.abc import Iterator

import pytest

from mcp_docs.library import Library
from mcp_docs.search.translations import collapse, declared_key
from tests.index.written_vault import keyword_library


def page(permalink: str, title: str, body: str, more: str) -> str:
    return f"---\npermalink: {permalink}\n---\n# {title}\n\n{body}\n\n## {more}\n\n{body}\n"


NOTES = {
    "en/Plugins/Canvas.md": page(
        "plugins/canvas", "Canvas", "The canvas lays out your notes as cards that you connect.", "Embed a canvas"
    ),
    "fr/Modules/Canvas.md": page(
        "plugins/canvas", "Canvas", "Le canvas dispose vos notes en cartes que vous reliez entre elles.", "Intégrer"
    ),
    "no/Utvidelser/Canvas.md": page(
        "plugins/canvas", "Canvas", "Canvas legger ut notatene dine som kort som du kobler sammen.", "Bygg inn"
    ),
    # same name, another page (its own permalink): never merged with the others
    "en/Plugins/Canvas export.md": page(
        "plugins/canvas-export", "Canvas export", "Export a canvas as an image or a PDF file.", "Formats"
    ),
}


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Library]:
    yield from keyword_library(tmp_path_factory, "declared", NOTES)


@pytest.mark.parametrize(
    ("query", "shown"),
    [("what is the canvas", "en/Plugins/Canvas.md"), ("qu'est-ce que le canvas", "fr/Modules/Canvas.md")],
)
def test_versions_with_one_permalink_are_one_answer_in_the_questions_language(
    library: Library, query: str, shown: str
) -> None:
    result = library.search(query, mode="keyword", max_results=5)
    ids = [r.id for r in result.results]
    versions = {"en/Plugins/Canvas.md", "fr/Modules/Canvas.md", "no/Utvidelser/Canvas.md"}
    assert ids[0] == shown and len(versions & set(ids)) == 1
    assert "en/Plugins/Canvas export.md" in ids  # another page that shares the name stays
    assert result.note is not None and all(v in result.note for v in versions)


def test_declared_keys() -> None:
    assert declared_key({"permalink": "/plugins/canvas/"}) == declared_key({"permalink": "plugins/Canvas"})
    assert declared_key({"translationKey": "about"}) != declared_key({"permalink": "about"})
    assert declared_key({"title": "x"}) is None and declared_key({"permalink": ""}) is None
    # the same language twice under one key is no pair (an untranslated copy), declared or not
    answers = collapse(["a.md", "b.md"], lambda _: "en", "en", declared={"a.md": "k", "b.md": "k"})
    assert [a.shown for a in answers] == ["a.md", "b.md"]
