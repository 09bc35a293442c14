"""A vault of translated pages ranks on PostgreSQL as in the embedded store: the same first answer for each question on
both stores (real Tantivy/SQLite files in a tmp dir; a real PostgreSQL, pgserver), where sections alone ranked the
right page second on PostgreSQL. What the PostgreSQL store gained (store/postgres/signal_columns.py, store.py):

- the embedded store's document signals (search/document_signals.py): the share of the question's words found in the
  whole page and in its path, and the page being in the question's language, read in the ranking statement itself;
- the title and heading path scored as a field of their own (HEAD_FIELD), as the embedded store's `head_stem`;
- a Thai run's letter pairs at half a word (PAIR_SHARE), as the embedded store's pairs, normalised by their own field.

The notes are written for the test: English, French, Russian and Thai folders of a small app's help, each with a
page on templates, a page on a note-merging tool that says "note" everywhere, a glossary, a Canvas page and an
"about" page whose heading asks "what is"."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from mcp_docs.library import Library, open_library
from mcp_docs.settings import Settings
from mcp_docs.store.postgres.store import PostgresStore

from ...server_fixtures import write
from .both_stores import STORES, library_on
from .conftest import new_database
from .test_postgres import _index


def page(lang: str, title: str, *sections: tuple[str, str]) -> str:
    body = "\n\n".join(f"## {heading}\n\n{text}" for heading, text in sections)
    return f"---\nlang: {lang}\n---\n# {title}\n\n{body}\n"


# Per language: the folder names and the texts (written for this test).
PAGES = {
    "en": {
        "Plugins/Templates.md": page(
            "en",
            "Templates",
            ("Insert", "Insert a prepared text into the current note with one command."),
            ("Folder", "Choose the folder that holds your prepared texts in the settings."),
        ),
        "Plugins/Note merger.md": page(
            "en",
            "Note merger",
            ("Merge notes", "Merge a note into another note. The merged note keeps the links of both notes."),
            ("Split a note", "Split a note into new notes at its headings; each new note links back to the note."),
            ("Templates for new notes", "New notes made by a split can start from one of your templates for notes."),
        ),
        "Getting started/Glossary.md": page(
            "en",
            "Glossary",
            ("Vault", "A folder of notes on your device."),
            ("Plugin", "An extension that adds a feature to the app."),
            ("Link", "A reference from one note to another note or file."),
        ),
        "Plugins/Canvas.md": page(
            "en",
            "Canvas",
            ("Cards", "Lay out cards on an endless board and connect them with arrows."),
            ("Groups", "Put related cards together in a group."),
        ),
        "App/About.md": page(
            "en",
            "About the app",
            ("What is the app", "The app is a private and flexible writing tool that stores notes as plain files."),
            ("Company", "The app is made by a small team that answers to its users."),
            ("Storage", "Your notes stay on your device, in a folder you choose."),
        ),
    },
    "fr": {
        "Modules/Modèles.md": page(
            "fr",
            "Modèles",
            ("Insérer", "Insérez un texte préparé dans la note actuelle avec une seule commande."),
            ("Dossier", "Choisissez dans les paramètres le dossier qui contient vos textes préparés."),
        ),
        "Modules/Fusion de notes.md": page(
            "fr",
            "Fusion de notes",
            ("Fusionner", "Fusionnez une note dans une autre note. La note fusionnée garde les liens des deux notes."),
            ("Scinder", "Scindez une note en nouvelles notes à ses titres ; chaque nouvelle note renvoie à la note."),
            ("Modèles de notes", "Les nouvelles notes d'une scission peuvent partir d'un de vos modèles de notes."),
        ),
        "Démarrer/Glossaire.md": page(
            "fr",
            "Glossaire",
            ("Coffre", "Un dossier de notes sur votre appareil."),
            ("Module", "Une extension qui ajoute une fonction à l'application."),
        ),
        "Modules/Canvas.md": page(
            "fr",
            "Canvas",
            ("Cartes", "Disposez des cartes sur un tableau sans fin et reliez-les par des flèches."),
            ("Groupes", "Rassemblez des cartes liées dans un groupe."),
        ),
        "Application/À propos.md": page(
            "fr",
            "À propos de l'application",
            (
                "Stockage",
                "Vos notes restent sur votre appareil, dans un dossier de votre choix : vos notes, vos fichiers.",
            ),
        ),
    },
    "ru": {
        "Плагины/Шаблоны.md": page(
            "ru",
            "Шаблоны",
            ("Вставка", "Вставьте заготовленный текст в текущую заметку одной командой."),
            ("Папка", "Выберите в настройках папку с вашими заготовками."),
        ),
        "Плагины/Слияние заметок.md": page(
            "ru",
            "Слияние заметок",
            ("Слияние", "Слейте одну заметку с другой заметкой. Новая заметка хранит ссылки обеих заметок."),
            ("Разделение", "Разделите заметку на новые заметки по заголовкам; каждая ссылается на исходную заметку."),
            (
                "Шаблоны для заметок",
                "Новые заметки после разделения могут начинаться с одного из шаблонов для заметок.",
            ),
        ),
        "Начало работы/Глоссарий.md": page(
            "ru",
            "Глоссарий",
            ("Хранилище", "Папка с заметками на вашем устройстве."),
            ("Плагин", "Расширение, которое добавляет приложению функцию."),
        ),
        "Плагины/Canvas.md": page(
            "ru",
            "Canvas",
            ("Карточки", "Раскладывайте карточки на бесконечной доске и соединяйте их стрелками."),
            ("Группы", "Соберите связанные карточки в группу."),
        ),
    },
    "th": {
        "ปลั๊กอิน/Canvas.md": page(
            "th",
            "Canvas",
            ("การ์ด", "วางการ์ดบนกระดานที่ไม่มีที่สิ้นสุดและเชื่อมต่อการ์ดด้วยลูกศร"),
            ("กลุ่ม", "รวมการ์ดที่เกี่ยวข้องไว้ในกลุ่มเดียวกัน"),
        ),
        "แอป/เกี่ยวกับแอป.md": page(
            "th",
            "เกี่ยวกับแอป",
            ("แอปคืออะไร", "แอปคืออะไร แอปคือเครื่องมือเขียนที่เป็นส่วนตัวและยืดหยุ่น เก็บโน้ตเป็นไฟล์ธรรมดา"),
            ("บริษัท", "แอปสร้างโดยทีมเล็ก ๆ ที่รับฟังผู้ใช้"),
        ),
        "ปลั๊กอิน/แม่แบบ.md": page(
            "th",
            "แม่แบบ",
            ("แทรก", "แทรกข้อความที่เตรียมไว้ลงในโน้ตปัจจุบันด้วยคำสั่งเดียว"),
        ),
    },
}
NOTES = {f"{lang}/{rel}": text for lang, pages in PAGES.items() for rel, text in pages.items()}

# Each question and the embedded store's first answers (the first, or the first three), which PostgreSQL now gives.
FIRST = {
    # the Thai page's letter pairs for "what is" outweighed "Canvas": the "about" page, whose heading asks it, first
    "Canvas คืออะไร": ["th/ปลั๊กอิน/Canvas.md"],
    # 'notes' is French too: without the language signal the French note-merging page came second
    "where do my notes stay": ["en/App/About.md", "en/Plugins/Note merger.md", "fr/Modules/Fusion de notes.md"],
    "my notes on my device": ["en/Getting started/Glossary.md", "en/App/About.md", "en/Plugins/Note merger.md"],
}


@pytest.fixture(scope="module", params=STORES)
def library(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Library]:
    yield from library_on(request, tmp_path_factory, "signals", NOTES)


def _ids(library: Library, query: str) -> list[str]:
    return [r.id for r in library.search(query, mode="keyword").results]


@pytest.mark.parametrize("query", list(FIRST))
def test_the_first_answers_are_the_same_on_both_stores(library: Library, query: str) -> None:
    want = FIRST[query]
    assert _ids(library, query)[: len(want)] == want


def test_the_signals_cost_no_statement_of_their_own(library: Library, monkeypatch: pytest.MonkeyPatch) -> None:
    """The documents' signals come with the sections, in the one ranking statement, and the bonus they give is
    the one the embedded store's formula gives (document_signals.share_of_best): the page in the question's
    language, holding every word of it, gains the language share and the whole coverage share."""
    if not isinstance(library.store, PostgresStore):
        pytest.skip("the embedded store runs no SQL")
    query = "where do my notes stay"
    library.search(query, mode="keyword")  # what a first search reads once (the collection's languages)
    statements: list[str] = []
    execute = psycopg.Connection.execute

    def counted(self: Any, sql: Any, *args: Any, **kwargs: Any) -> Any:
        statements.append(str(sql))
        return execute(self, sql, *args, **kwargs)

    monkeypatch.setattr(psycopg.Connection, "execute", counted)
    hits = library.keyword_hits(query, 10, None, [])
    bonus = library.document_bonus(query, by_key=True)
    assert len(statements) == 1, statements
    assert bonus is not None
    shares = bonus([h.doc_key for h in hits])
    assert len(statements) == 1, statements  # the bonus is read from what the statement returned
    # 'notes' and 'stay' are both in the English "about" page (coverage 0.5 of a page of 4 sections), not in its
    # path; it is in the question's language (0.2)
    assert shares["en/App/About.md"] == pytest.approx(0.5 + 0.2)
    assert shares["fr/Modules/Fusion de notes.md"] < shares["en/Plugins/Note merger.md"]
    # hybrid's fused scores: the documents the statement returned cost nothing more, one it did not (found by the
    # vectors alone) one statement for all such (fused_signals.py)
    fused = library.document_bonus(query, fused=True)
    assert fused is not None
    found = list(dict.fromkeys(h.section.doc_id for h in hits))
    assert fused(found)["en/App/About.md"] == pytest.approx(0.5 + 0.2)
    assert len(statements) == 1, statements
    others = [doc_id for doc_id in NOTES if doc_id not in found]
    assert others
    fused([*found, *others])
    assert len(statements) == 2, statements


def test_a_database_indexed_before_reads_the_same_answers(pg_server: tuple[str, Path], tmp_path: Path) -> None:
    """A database a previous version indexed has no count of sections per configuration (what a stopword's
    document frequency is read from, `PgWriter.save_statistics`): the answers are the same meanwhile (a stopword
    then counts as in every section), and the writer's next sync records them, even one that changes nothing."""
    root = tmp_path / "vault"
    for rel, text in NOTES.items():
        write(root, rel, text)
    url = new_database(pg_server[0])
    assert _index(root, url, "--embeddings", "none") == 0
    with psycopg.connect(url, autocommit=True) as conn:
        assert conn.execute("select value from mcp_docs_meta where key = 'config_sections'").fetchone()
        conn.execute("delete from mcp_docs_meta where key = 'config_sections'")
    settings = Settings.load(
        store="postgres", database_url=url, embeddings="none", reader=True, index_dir=tmp_path / "i"
    )
    with open_library(settings, read_only=True) as lib:
        for query, want in FIRST.items():
            assert _ids(lib, query)[: len(want)] == want, query
    assert _index(root, url, "--embeddings", "none") == 0  # nothing changed
    with psycopg.connect(url) as conn:
        row = conn.execute(
            "select value::json ->> 'english' from mcp_docs_meta where key = 'config_sections'"
        ).fetchone()
        assert row is not None and int(row[0]) > 0
