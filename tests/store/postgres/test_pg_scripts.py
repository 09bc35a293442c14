"""A vault written in several scripts ranks on PostgreSQL as it does in the embedded store: the same first answer
for each question, on both stores (real Tantivy/SQLite files in a tmp dir; a real PostgreSQL, pgserver). Three
rules the embedded store has (query_language.OTHER_SCRIPT_SHARE, query_text.spaced_text, Indic words whole):

- a section in a language that does not write the query's script scores half: a Japanese page's words are the
  commands it borrows, so a Latin question weighed them many times there (tldr's Japanese tar page first);
- Thai runs are searched by their letter pairs only, and do not lengthen their section for BM25: the Thai
  question "Canvas คืออะไร" found the other languages' Canvas pages before the Thai one;
- a Hindi word finds its page, and a word on no page nothing.

The notes are written for the test (tldr-style translated pages under `pages/` and `pages.ja/`, Obsidian-style
language folders)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from mcp_docs.library import Library, open_library
from mcp_docs.settings import Settings
from mcp_docs.store.postgres.database import PG_SCHEMA_VERSION, TERMS_OF
from mcp_docs.store.postgres.store import PostgresStore

from ...server_fixtures import write
from .both_stores import STORES, library_on
from .conftest import new_database
from .test_postgres import _index

TAR_EN = """# tar

> Archiving utility.
> Often combined with a compression method, such as gzip or bzip2.

- Create an archive and write it to a file:

`tar cf path/to/target.tar path/to/file1 path/to/file2`

- Create a gzipped archive and write it to a file:

`tar czf path/to/target.tar.gz path/to/file1 path/to/file2`

- Extract a (compressed) archive file into the current directory verbosely:

`tar xvf path/to/source.tar.gz`

- Extract a (compressed) archive file into the target directory:

`tar xf path/to/source.tar.gz --directory path/to/directory`

- List the contents of a tar file verbosely:

`tar tvf path/to/source.tar`

- Extract files matching a pattern from an archive file:

`tar xf path/to/source.tar --wildcards "*.html"`

- Extract a specific file from an archive file without preserving the folder structure, which is handy when you
  only need one configuration file out of a large release bundle and do not want its whole tree on disk:

`tar xf path/to/source.tar --strip-components=depth_to_strip path/to/file`
"""

TAR_JA = """# tar

> アーカイブ。

- 展開:

`tar xzf archive.tar.gz`

- 一覧:

`tar tzf archive.tar.gz`

- 作成:

`tar czf archive.tar.gz archive/`
"""

THAI = (
    "Canvas คือปลั๊กอินหลักสำหรับการจดบันทึกแบบภาพ คุณสามารถจัดวางบันทึก รูปภาพ และหน้าเว็บเป็นการ์ดบนกระดานที่ไม่มีที่สิ้นสุด "
    "และเชื่อมต่อกันด้วยลูกศร ใช้ Canvas เพื่อระดมความคิด วางแผนโครงการ และจัดระเบียบข้อมูลของคุณให้เป็นภาพที่ชัดเจน "
    "คุณสามารถเพิ่มการ์ดข้อความ การ์ดบันทึก และการ์ดสื่อ แล้วจัดกลุ่มการ์ดเหล่านั้นเข้าด้วยกันตามที่คุณต้องการ"
)


def canvas(lang: str, body: str) -> str:
    return f"---\nlang: {lang}\npermalink: plugins/canvas\n---\n# Canvas\n\n{body}\n"


NOTES = {
    "pages/tar.md": TAR_EN,
    "pages.ja/tar.md": TAR_JA,
    "en/Plugins/Canvas.md": canvas("en", "Canvas is a core plugin for visual note-taking. Lay out notes as cards."),
    "fr/Modules/Canvas.md": canvas("fr", "Canvas est un module principal pour les notes visuelles, en cartes."),
    "de/Erweiterungen/Canvas.md": canvas("de", "Canvas ist ein Kernplugin für visuelle Notizen, als Karten."),
    "th/ปลั๊กอิน/Canvas.md": canvas("th", THAI),
    "hi/टिप्पणियाँ.md": "---\nlang: hi\n---\n# टिप्पणियाँ\n\nअपनी टिप्पणियाँ फ़ोल्डर में व्यवस्थित करें और उन्हें खोजें।\n",
    "en/Notes.md": "---\nlang: en\n---\n# Notes\n\nOrganise your notes in folders and search them.\n",
}

# Each question and the page it finds first, on either store.
FIRST = {
    "extract a tar.gz archive": "pages/tar.md",
    "tar.gz archive": "pages/tar.md",  # the Japanese page's commands alone matched: first on PostgreSQL before
    "Canvas คืออะไร": "th/ปลั๊กอิน/Canvas.md",
    "tarアーカイブを展開": "pages.ja/tar.md",  # a Japanese sentence is one word to PostgreSQL's parser: found nothing
    "टिप्पणियाँ": "hi/टिप्पणियाँ.md",
    "व्यवस्थित": "hi/टिप्पणियाँ.md",
}
NOWHERE = ["कॉफ़ी", "गुलाबी"]  # Hindi words on no page


@pytest.fixture(scope="module", params=STORES)
def library(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Library]:
    yield from library_on(request, tmp_path_factory, "scripts", NOTES)


def _ids(library: Library, query: str) -> list[str]:
    return [r.id for r in library.search(query, mode="keyword").results]


@pytest.mark.parametrize("query", list(FIRST))
def test_the_first_answer_is_the_same_on_both_stores(library: Library, query: str) -> None:
    ids = _ids(library, query)
    assert ids and ids[0] == FIRST[query], ids
    # and the best-ranked section: the answers group a page's translations (the Thai page was shown for the Thai
    # question, but ranked below the German, French and English Canvas sections on PostgreSQL)
    sections = [hit.section.doc_id for hit in library.keyword_hits(query, 10, None, [])]
    assert sections[0] == FIRST[query], sections


@pytest.mark.parametrize("query", NOWHERE)
def test_a_word_on_no_page_finds_nothing(library: Library, query: str) -> None:
    assert _ids(library, query) == []


def test_an_index_of_schema_8_is_upgraded_in_place(pg_server: tuple[str, Path], tmp_path: Path) -> None:
    """Schema 8 stored no BM25 length (a Thai section as long as its bytes) and the term table read its tokens: the
    writer upgrades it in place, every note read again, and the Thai question finds the Thai section first."""
    root = tmp_path / "vault"
    for rel, text in NOTES.items():
        write(root, rel, text)
    url = new_database(pg_server[0])
    assert _index(root, url, "--embeddings", "none") == 0
    with psycopg.connect(url, autocommit=True) as conn:  # the rows as schema 8 left them
        conn.execute("update mcp_docs_sections set length = null")
        conn.execute("delete from mcp_docs_terms")
        conn.execute(f"insert into mcp_docs_terms {TERMS_OF.format(sections='mcp_docs_sections')}")
        conn.execute("delete from mcp_docs_meta where key in ('sections', 'average_tokens')")
        conn.execute("update mcp_docs_meta set value = '8' where key = 'schema_version'")
    settings = Settings.load(
        store="postgres", database_url=url, embeddings="none", reader=True, index_dir=tmp_path / "i"
    )
    question = "Canvas คืออะไร"
    assert _index(root, url, "--embeddings", "none") == 0
    with psycopg.connect(url) as conn:
        assert conn.execute("select count(*) from mcp_docs_sections where length is null").fetchone() == (0,)
        assert conn.execute("select value from mcp_docs_meta where key = 'schema_version'").fetchone() == (
            str(PG_SCHEMA_VERSION),
        )
    with open_library(settings, read_only=True) as lib:
        assert lib.keyword_hits(question, 10, None, [])[0].section.doc_id == FIRST[question]


def test_the_other_script_share_costs_no_statement_of_its_own(
    library: Library, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On PostgreSQL the sections' languages are read in the ranking statement: the ranking stays one statement.
    (The search of a page with translations then reads their section counts, one more, as before this change.)"""
    if not isinstance(library.store, PostgresStore):
        pytest.skip("the embedded store runs no SQL")
    library.search("tar.gz archive", mode="keyword")  # what a first search reads once (the collection's languages)
    statements: list[str] = []
    execute = psycopg.Connection.execute

    def counted(self: Any, query: Any, *args: Any, **kwargs: Any) -> Any:
        statements.append(str(query))
        return execute(self, query, *args, **kwargs)

    monkeypatch.setattr(psycopg.Connection, "execute", counted)
    hits = library.keyword_hits("tar.gz archive", 10, None, [])
    assert [h.section.doc_id for h in hits][:2] == ["pages/tar.md", "pages.ja/tar.md"]
    assert len(statements) == 1, statements
    assert "d.lang = any(" in statements[0]  # the damped ranking ran (its languages as one parameter)
