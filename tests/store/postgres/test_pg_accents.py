"""Words typed without their accents are found on PostgreSQL as in the embedded store (real Tantivy/SQLite files in a
tmp dir; a real PostgreSQL, pgserver). Tantivy's analyzers end with `ascii_fold`; PostgreSQL's tsvectors and a
query's words are folded by the same filter's table (mcp_docs/ascii_fold.py, store/postgres/letter_pairs.word_fold),
in every configuration: Czech and Vietnamese (`simple`), Turkish and French (stemmed). Before, PostgreSQL found none
of these pages by the question typed without accents (the Obsidian help's multilingual evaluation missed Czech
"vlastni domena", Turkish "sayisi", Vietnamese "cach dung mau ghi chu" so).

The notes are written for the test: a Czech, Turkish, Vietnamese and French page each on its subject, beside pages
in the same language on another, and an English page that shares the bare words."""

from __future__ import annotations

import unicodedata
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
import tantivy

from mcp_docs.ascii_fold import ascii_fold, sql_fold
from mcp_docs.library import Library, open_library
from mcp_docs.store.postgres.database import PG_SCHEMA_VERSION

from ...server_fixtures import write
from .both_stores import STORES, library_on, postgres_reader
from .conftest import new_database
from .test_postgres import _index


def page(lang: str, title: str, *sections: tuple[str, str]) -> str:
    body = "\n\n".join(f"## {heading}\n\n{text}" for heading, text in sections)
    return f"---\nlang: {lang}\n---\n# {title}\n\n{body}\n"


NOTES = {
    "cs/Publikování/Vlastní doména.md": page(
        "cs",
        "Vlastní doména",
        ("Nastavení", "Svůj web můžete zveřejnit pod vlastní doménou. Doménu nastavíte v nastavení webu."),
        ("Subdoména", "Místo domény můžete použít i subdoménu, kterou spravuje váš poskytovatel."),
    ),
    "cs/Publikování/Heslo.md": page(
        "cs",
        "Ochrana heslem",
        ("Heslo", "Web můžete chránit heslem. Návštěvníci zadají heslo před čtením."),
    ),
    "tr/Eklentiler/Kelime sayısı.md": page(
        "tr",
        "Kelime sayısı",
        ("Durum çubuğu", "Kelime sayısı ve karakter sayısı durum çubuğunda gösterilir."),
        ("Seçim", "Bir metin seçtiğinizde yalnızca seçimin sayısı gösterilir."),
    ),
    "tr/Eklentiler/Dosya kurtarma.md": page(
        "tr",
        "Dosya kurtarma",
        ("Anlık görüntüler", "Silinen dosyaları ve eski sürümleri anlık görüntülerden geri yükleyin."),
    ),
    "vi/Plugin/Mẫu.md": page(
        "vi",
        "Mẫu",
        ("Cách dùng", "Cách dùng mẫu ghi chú: chèn một mẫu vào ghi chú hiện tại bằng một lệnh."),
        ("Thư mục", "Chọn thư mục chứa các mẫu của bạn trong phần cài đặt."),
    ),
    "vi/Plugin/Canvas.md": page(
        "vi",
        "Canvas",
        ("Thẻ", "Sắp xếp các thẻ trên một bảng vô tận và nối chúng bằng mũi tên."),
    ),
    "fr/Modules/Modèles.md": page(
        "fr",
        "Modèles",
        ("Insérer", "Insérez un modèle préparé dans la note actuelle avec une seule commande."),
        ("Dossier", "Choisissez le dossier qui contient vos modèles. Un élément préféré reste en haut de la liste."),
    ),
    "fr/Modules/Publier.md": page(
        "fr",
        "Publier",
        ("Site", "Publiez vos notes sur un site web ; le site se met à jour à chaque publication."),
    ),
    "en/Plugins/Templates.md": page(
        "en",
        "Templates",
        ("Insert", "Insert a prepared text into the current note with one command."),
    ),
    "en/Publish/Domain.md": page(
        "en",
        "Custom domain",
        ("Setup", "Publish your site under a custom domain of your own."),
    ),
}

# Each question, typed without its accents, and the page both stores answer first. Every word of a question is
# written with an accent in its page (a bare word found it before this change).
FIRST = {
    "vlastni domena": "cs/Publikování/Vlastní doména.md",  # Czech: `simple`, unstemmed
    "sayisi gosterilir": "tr/Eklentiler/Kelime sayısı.md",  # Turkish: stemmed, and 'ı' (dotless) folds to 'i'
    "cubugunda gosterilir": "tr/Eklentiler/Kelime sayısı.md",
    "cach dung mau": "vi/Plugin/Mẫu.md",  # Vietnamese: `simple`, several marks on one letter
    "element prefere": "fr/Modules/Modèles.md",  # French: stemmed ('élément', 'préféré')
}


@pytest.fixture(scope="module", params=STORES)
def library(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Library]:
    yield from library_on(request, tmp_path_factory, "accents", NOTES)


def _first(library: Library, query: str) -> str | None:
    hits = library.keyword_hits(query, 10, None, [])
    return hits[0].section.doc_id if hits else None


@pytest.mark.parametrize("query", list(FIRST))
def test_a_question_typed_without_accents_finds_the_page(library: Library, query: str) -> None:
    assert _first(library, query) == FIRST[query]


@pytest.mark.parametrize("query", ["vlastní doména", "kelime sayısı", "cách dùng mẫu ghi chú", "insérer un modèle"])
def test_the_same_question_with_its_accents_still_finds_it(library: Library, query: str) -> None:
    assert ascii_fold(query) != query  # the query's words are folded as the sections' are
    want = {
        "vlastní doména": "cs/Publikování/Vlastní doména.md",
        "kelime sayısı": "tr/Eklentiler/Kelime sayısı.md",
        "cách dùng mẫu ghi chú": "vi/Plugin/Mẫu.md",
        "insérer un modèle": "fr/Modules/Modèles.md",
    }[query]
    assert _first(library, query) == want


def test_the_path_counts_for_a_question_without_accents(library: Library) -> None:
    """The document signals' path words (signal_columns.py) are folded too: 'vlastni domena' is the whole of
    the Czech page's file name, so its bonus holds the path share, as in the embedded store."""
    query = "vlastni domena"
    hits = library.keyword_hits(query, 10, None, [])
    bonus = library.document_bonus(query, by_key=True)
    assert bonus is not None
    shares = bonus([h.doc_key for h in hits])
    doc = "cs/Publikování/Vlastní doména.md"
    key = next(h.doc_key for h in hits if h.section.doc_id == doc)
    # both words in the page and in its path, and the page in the question's language: the whole bonus, 1.0, on
    # both stores (the path unfolded on PostgreSQL: its path share lost, 0.7)
    assert shares[key] == pytest.approx(1.0)


def test_an_index_of_schema_9_is_upgraded_in_place(pg_server: tuple[str, Path], tmp_path: Path) -> None:
    """Schema 9 built the tsvectors from the words as written: the writer upgrades it in place (every note read
    again, its section vectors kept), and the questions typed without accents find their pages."""
    root = tmp_path / "vault"
    for rel, text in NOTES.items():
        write(root, rel, text)
    url = new_database(pg_server[0])
    assert _index(root, url, "--embeddings", "local") == 0
    with psycopg.connect(url, autocommit=True) as conn:  # the rows as schema 9 wrote them: accents kept
        conn.execute(
            "update mcp_docs_sections s set tsv = setweight(to_tsvector(s.config, d.title || ' ' || s.heading_path), "
            "'A') || setweight(to_tsvector(s.config, s.body), 'B') from mcp_docs_documents d where d.id = s.doc_id"
        )
        conn.execute("delete from mcp_docs_terms")
        conn.execute(
            "insert into mcp_docs_terms select s.config, t.lexeme, s.doc_id, s.idx, cardinality(t.positions), "
            "coalesce(cardinality(array_positions(t.weights, 'A')), 0), coalesce(s.length, s.tokens) "
            "from mcp_docs_sections s cross join unnest(s.tsv) t"
        )
        conn.execute("update mcp_docs_meta set value = '9' where key = 'schema_version'")
        vectors = conn.execute(
            "select hash, embedding::text from mcp_docs_chunks where embedding is not null order by hash"
        ).fetchall()
        indexed_at = dict(conn.execute("select id, indexed_at from mcp_docs_documents").fetchall())
    assert vectors
    with pytest.raises(Exception, match="schema version 9"):
        open_library(postgres_reader(url, tmp_path), read_only=True)
    assert _index(root, url, "--embeddings", "local") == 0
    with psycopg.connect(url) as conn:
        assert conn.execute("select value from mcp_docs_meta where key = 'schema_version'").fetchone() == (
            str(PG_SCHEMA_VERSION),
        )
        # upgraded, not rebuilt: the same documents, each read again; the section vectors kept as they were
        again = dict(conn.execute("select id, indexed_at from mcp_docs_documents").fetchall())
        assert again.keys() == indexed_at.keys()
        assert all(again[d] > indexed_at[d] for d in again)
        assert (
            conn.execute(
                "select hash, embedding::text from mcp_docs_chunks where embedding is not null order by hash"
            ).fetchall()
            == vectors
        )
    with open_library(postgres_reader(url, tmp_path), read_only=True) as lib:
        for query, want in FIRST.items():
            assert _first(lib, query) == want, query


def test_the_database_folds_a_path_as_python_folds_the_words(pg_server: tuple[str, Path]) -> None:
    """The result paths are folded in SQL (ascii_fold.sql_fold: marks dropped, then the few Latin letters that do not
    decompose): the same text as the Python fold of the words, for the letters of these languages and their
    neighbours', Cyrillic, Korean, Japanese and Devanagari left as they are."""
    text = (
        "Publikování/Vlastní doména, Kelime sayısı, İstanbul, Mẫu, Cách dùng, Đường, Modèles, Ørsted, Łódź, "
        "Straße, Æble, œuvre, Ñandú, Ţară, Шаблоны, Йод, 한국어, がガ, क़, ά"
    )
    with psycopg.connect(pg_server[0]) as conn:
        row = conn.execute(f"select {sql_fold('normalize(%s::text, nfc)')}", (text,)).fetchone()
    assert row is not None
    assert row[0] == ascii_fold(unicodedata.normalize("NFC", text))
    assert "Vlastni domena" in row[0] and "sayisi" in row[0] and "Duong" in row[0] and "Шаблоны" in row[0]


def test_the_fold_is_the_embedded_stores_filter() -> None:
    """ascii_fold gives what Tantivy's own ascii_fold filter gives (the embedded store's analyzers), on text of the
    languages of the test and of scripts it must leave alone."""
    analyzer = tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.raw()).filter(tantivy.Filter.ascii_fold()).build()
    text = "Vlastní doména · sayısı İĞŞ · cách dùng mẫu ghi chú · préféré œuvre Straße ﬁn Ｆｕｌｌ « » Шаблоны й 한국어 क़ ά"
    assert ascii_fold(text) == analyzer.analyze(text)[0]
    assert ascii_fold("plain ascii") == "plain ascii"
