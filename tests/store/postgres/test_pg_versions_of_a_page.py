"""`search.languages.also_in` on both stores' real catalogs: which pages in other languages also have a version in
the asker's language, over the whole collection (hybrid's `interleave` gives those no rank). Pages paired by the
permalink their front matter declares, by their paths, and two notes that only share a name."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from mcp_docs.index.language_mix import LanguageView
from mcp_docs.library import Library
from mcp_docs.search.languages import also_in

from .both_stores import STORES, library_on

FRENCH = (
    "Le canevas est un espace infini où vous pouvez disposer vos notes, les relier entre elles et les regrouper. "
    "Vous pouvez aussi y ajouter des images et des pages web."
)
GERMAN = (
    "Die Leinwand ist eine unendliche Fläche, auf der Sie Ihre Notizen anordnen, miteinander verbinden und "
    "gruppieren können. Sie können auch Bilder und Webseiten hinzufügen."
)
ENGLISH = (
    "The canvas is an infinite space where you can lay out your notes, connect them and group them. You can "
    "also add images and web pages to it."
)
FRENCH_SETUP = "Pour installer le programme, téléchargez le fichier puis suivez les étapes de l'assistant."
GERMAN_SETUP = "Um das Programm zu installieren, laden Sie die Datei herunter und folgen Sie dem Assistenten."


def note(front: str, body: str, sections: int = 1) -> str:
    parts = [f"---\n{front}\n---\n" if front else ""]
    parts += [f"## Teil {i}\n\n{body}\n\n" for i in range(sections)]
    return "".join(parts)


@pytest.fixture(scope="module", params=STORES)
def library(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Library]:
    notes = {
        # one page in three languages, paired by the permalink its front matter declares (translated names)
        "en/Plugins/Canvas.md": note("permalink: plugins/canvas", ENGLISH),
        "fr/Modules/Canevas.md": note("permalink: plugins/canvas", FRENCH),
        "de/Erweiterungen/Leinwand.md": note("permalink: plugins/canvas", GERMAN),
        # paired by their paths
        "fr/guide/setup.md": note("", FRENCH_SETUP),
        "de/guide/setup.md": note("", GERMAN_SETUP),
        # a German page only
        "de/nur-deutsch.md": note("", GERMAN_SETUP + " " + GERMAN),
        # two notes that only share a name: one section against six
        "fr/todo.md": note("", FRENCH_SETUP),
        "de/todo.md": note("", GERMAN_SETUP, sections=6),
    }
    yield from library_on(request, tmp_path_factory, "versions", notes)


def test_also_in_pairs_pages_across_the_whole_collection_as_translations_are_paired(library: Library) -> None:
    catalog = library.catalog
    languages = catalog.languages_of(catalog.ids())
    assert languages["fr/Modules/Canevas.md"] == "fr" and languages["de/Erweiterungen/Leinwand.md"] == "de"
    others: dict[str, list[str]] = {}
    for doc_id, lang in sorted(languages.items()):
        if lang != "en":
            others.setdefault(lang, []).append(doc_id)
    view = LanguageView("en", others, {})
    german = ["de/Erweiterungen/Leinwand.md", "de/guide/setup.md", "de/nur-deutsch.md", "de/todo.md"]
    assert also_in(catalog, view, "fr")(german) == {"de/Erweiterungen/Leinwand.md", "de/guide/setup.md"}
    assert also_in(catalog, view, "fr")(["en/Plugins/Canvas.md"]) == {"en/Plugins/Canvas.md"}
    assert also_in(catalog, view, "fr")([]) == set()
