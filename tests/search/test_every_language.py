"""One page translated into eleven languages, searched in several of them through a real library (Tantivy and
SQLite files in a tmp dir): the answer is the page in the question's language, shown once with its other
versions named (benchmarks/REPORT.md, "Every language at reading speed"). The notes are written for the tests.
"""

from collections.abc import Iterator

import pytest

from mcp_docs.library import Library
from tests.index.written_vault import keyword_library


def page(lang: str, body: str, permalink: str = "plugins/canvas") -> str:
    return f"---\nlang: {lang}\npermalink: {permalink}\n---\n# Canvas\n\n{body}\n"


NOTES = {
    "en/Plugins/Canvas.md": page(
        "en",
        "Canvas is a core plugin for visual note-taking. Lay out notes, images and web pages as cards on an endless "
        "board and connect them with arrows.",
    ),
    "fr/Modules/Canvas.md": page(
        "fr",
        "Canvas est un module principal pour prendre des notes visuelles. Disposez notes, images et pages web en "
        "cartes sur un tableau infini et reliez-les par des flèches.",
    ),
    "de/Erweiterungen/Canvas.md": page(
        "de",
        "Canvas ist ein Kernplugin für visuelle Notizen. Ordne Notizen, Bilder und Webseiten als Karten auf einer "
        "endlosen Fläche an und verbinde sie mit Pfeilen.",
    ),
    "es/Complementos/Canvas.md": page(
        "es",
        "Canvas es un complemento principal para tomar notas visuales. Coloca notas, imágenes y páginas web como "
        "tarjetas en un tablero infinito y únelas con flechas.",
    ),
    "pt/Plugins/Canvas.md": page(
        "pt",
        "O Canvas é um plugin principal para notas visuais. Disponha notas, imagens e páginas web como cartões num "
        "quadro infinito e ligue-os com setas.",
    ),
    "pt-br/Plugin/Canvas.md": page(
        "pt-BR",
        "O Canvas é um plugin central para anotações visuais. Organize notas, imagens e páginas da web como cartões "
        "em um quadro infinito e conecte-os com setas.",
    ),
    "no/Utvidelser/Canvas.md": page(
        "no",
        "Canvas er en kjerneutvidelse for visuelle notater. Plasser notater, bilder og nettsider som kort på en "
        "uendelig flate og koble dem sammen med piler.",
    ),
    "sv/Tillägg/Canvas.md": page(
        "sv",
        "Canvas är ett kärntillägg för visuella anteckningar. Placera anteckningar, bilder och webbsidor som kort på "
        "en oändlig yta och koppla ihop dem med pilar.",
    ),
    "vi/Plugin/Canvas.md": page(
        "vi",
        "Canvas là một plugin lõi để ghi chú trực quan. Sắp xếp ghi chú, hình ảnh và trang web thành các thẻ trên "
        "một bảng vô hạn và nối chúng bằng mũi tên.",
    ),
    # Thai and Khmer write no spaces between words: their pages are the longest in letters.
    "th/ปลั๊กอิน/Canvas.md": page(
        "th",
        "Canvas เป็นปลั๊กอินหลักสำหรับการจดบันทึกแบบภาพ คุณสามารถจัดวางบันทึก รูปภาพ และหน้าเว็บเป็นการ์ดบนกระดาน"
        "ที่ไม่มีที่สิ้นสุด แล้วเชื่อมต่อการ์ดเหล่านั้นด้วยลูกศร\n\n## สร้าง Canvas ใหม่\n\nเปิดแผงคำสั่งแล้วเลือกสร้าง"
        " Canvas ใหม่ ไฟล์จะถูกบันทึกในโฟลเดอร์ที่คุณกำหนดไว้ในการตั้งค่า คุณสามารถลากไฟล์จากตัวจัดการไฟล์มาวางบน"
        "กระดานได้โดยตรง และปรับขนาดการ์ดแต่ละใบได้ตามต้องการ",
    ),
    "km/Plugins/Canvas.md": page(
        "km",
        "Canvas គឺជាកម្មវិធីជំនួយស្នូលសម្រាប់កត់ចំណាំជារូបភាព។ រៀបចំកំណត់ចំណាំ រូបភាព និងទំព័របណ្ដាញជាកាតនៅលើក្ដារគ្មានទីបញ្ចប់ ហើយភ្ជាប់វាដោយព្រួញ។",
    ),
}


# A second page in each Latin-script language that names Canvas once, in few words: on the shared word alone
# they all rank above a long page, as the Obsidian help's "Embed files" pages do.
EMBEDS = {
    "en": "Embed a canvas in a note.",
    "fr": "Intégrez un canvas dans une note.",
    "de": "Ein Canvas in eine Notiz einbetten.",
    "es": "Inserta un canvas en una nota.",
    "pt": "Incorpore um canvas numa nota.",
    "pt-br": "Incorpore um canvas em uma nota.",
    "no": "Bygg inn et canvas i et notat.",
    "sv": "Bädda in en canvas i en anteckning.",
    "vi": "Nhúng một canvas vào ghi chú.",
}
NOTES.update(
    {
        f"{code}/embed.md": page(code, text, permalink="embeds").replace("# Canvas", "# Embeds")
        for code, text in EMBEDS.items()
    }
)


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Library]:
    yield from keyword_library(tmp_path_factory, "every-language", NOTES)


def test_the_thai_page_leads_the_keyword_hits_themselves(library: Library) -> None:
    # Thai: what is Canvas? Its Thai words are not on the page; "Canvas" is on every version of it. Thai
    # fragments in the word fields made the Thai page the longest there, so the last on the shared word.
    # Before the document signals (the language bonus reaches only the 10 best documents) and the fusion: on
    # the Obsidian help the Thai page was not among the first 22 documents.
    hits = library.keyword_hits("Canvas คืออะไร", 50)
    assert hits[0].section.doc_id == "th/ปลั๊กอิน/Canvas.md"


def test_european_and_brazilian_portuguese_are_one_answer(library: Library) -> None:
    result = library.search("o que é o canvas", mode="keyword")
    ids = [r.id for r in result.results]
    versions = {"pt/Plugins/Canvas.md", "pt-br/Plugin/Canvas.md"}
    shown = [d for d in ids if d.endswith("Canvas.md")]
    assert len(shown) == 1 and shown[0] in versions, ids  # every version merged into one Portuguese answer
    other = (versions - set(shown)).pop()
    assert result.note is not None and other in result.note


def test_a_bare_name_shows_a_version_written_in_its_script(library: Library) -> None:
    # "Canvas" names no language. Its versions tie on the name, and a Khmer or Thai page's word fields hold
    # little besides it, so BM25 ranked those first and the merged answer showed a page the asker cannot read.
    result = library.search("Canvas", mode="keyword")
    shown = [r.id for r in result.results if r.id.endswith("Canvas.md")]
    assert len(shown) == 1, result.results
    assert not shown[0].startswith(("th/", "km/")), shown


TLDR_STYLE = {
    "pages/common/tar.md": "# tar\n\n> Archiving utility.\n\n- Extract a (compressed) archive file into the current "
    "directory:\n\n`tar xf {{path/to/source.tar[.gz|.bz2|.xz]}}`\n\n- Create a gzipped archive:\n\n"
    "`tar czf {{path/to/target.tar.gz}} {{path/to/file}}`\n",
    "pages.fr/common/tar.md": "# tar\n\n> Utilitaire d'archivage.\n\n- Extraire une archive (compressée) dans le "
    "répertoire courant :\n\n`tar xf {{chemin/vers/source.tar[.gz|.bz2|.xz]}}`\n\n- Créer une archive compressée "
    "avec gzip :\n\n`tar czf {{chemin/vers/cible.tar.gz}} {{chemin/vers/fichier}}`\n",
    "pages.ja/common/tar.md": "# tar\n\n> アーカイブユーティリティです。\n\n- 圧縮されたアーカイブファイルを現在のディレクトリに展開する:"
    "\n\n`tar xf {{path/to/source.tar[.gz|.bz2|.xz]}}`\n\n- gzip で圧縮したアーカイブを作成する:\n\n"
    "`tar czf {{path/to/target.tar.gz}} {{path/to/file}}`\n",
    "pages.th/common/tar.md": "# tar\n\n> เครื่องมือสำหรับจัดเก็บไฟล์รวมเป็นไฟล์เดียว\n\n- แตกไฟล์ที่ถูกบีบอัดไว้ลงในไดเรกทอรีปัจจุบัน:"
    "\n\n`tar xf {{path/to/source.tar[.gz|.bz2|.xz]}}`\n\n- สร้างไฟล์รวมที่บีบอัดด้วย gzip:\n\n"
    "`tar czf {{path/to/target.tar.gz}} {{path/to/file}}`\n",
    "pages/common/ls.md": "# ls\n\n> List directory contents.\n\n- List files one per line:\n\n`ls -1`\n",
    "pages.fr/common/ls.md": "# ls\n\n> Liste le contenu d'un répertoire.\n\n- Lister les fichiers, un par ligne :"
    "\n\n`ls -1`\n",
}


@pytest.fixture(scope="module")
def tldr_style(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Library]:
    yield from keyword_library(tmp_path_factory, "tldr-style", TLDR_STYLE)


def test_a_page_and_its_translations_in_suffixed_folders_are_one_answer(tldr_style: Library) -> None:
    # tldr keeps English in pages/ and each translation in pages.<language>/: the four tar pages were four
    # answers, the Japanese and Thai ones (whose word fields hold little besides the commands) first.
    result = tldr_style.search("extract a tar.gz archive", mode="keyword", max_results=5)
    ids = [r.id for r in result.results]
    assert ids[0] == "pages/common/tar.md", ids
    assert not any(i.endswith("tar.md") for i in ids[1:]), ids
    assert result.note is not None and "pages.ja/common/tar.md" in result.note


SCRIPTS = {
    "notes/compose.md": "# Running services with Compose\n\nCompose starts every service a project describes, in the "
    "order their dependencies need, and keeps their logs together so that a failing container is easy to find. "
    "Most days you start the whole project, follow its logs for a while and stop it again when you are done. "
    "A project file lists the services, their images, ports, volumes and networks; environment files keep "
    "secrets out of it, and profiles turn optional services on when you ask for them.\n\n"
    "`docker compose up --detach`\n\n`docker compose logs --follow`\n\n`docker compose down`\n",
    "メモ/コンポーズ.md": "# コンポーズの使い方\n\nプロジェクトのサービスを依存関係の順に起動し、ログをまとめて表示します。"
    "失敗したコンテナを見つけやすくなります。毎日の作業では、プロジェクト全体を起動してしばらくログを追い、終わったら停止します。\n\n"
    "`docker compose up --detach`\n\n`docker compose logs --follow`\n\n`docker compose down`\n",
    "メモ/ボリューム.md": "# ボリュームの管理\n\n名前付きボリュームはコンテナを削除してもデータを残します。定期的にバックアップを取りましょう。\n",
    "notes/volumes.md": "# Managing volumes\n\nNamed volumes keep their data when a container is removed. Back them up "
    "regularly, and prune the ones no container uses any more.\n",
}


@pytest.fixture(scope="module")
def two_scripts(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Library]:
    yield from keyword_library(tmp_path_factory, "two-scripts", SCRIPTS)


def test_a_query_in_latin_letters_finds_the_page_written_in_them_first(two_scripts: Library) -> None:
    # The Japanese note's own words are Japanese: its word fields hold only the commands, so BM25 weighed
    # "docker compose" there far above the English note, whose commands sit in a paragraph of English.
    ids = [r.id for r in two_scripts.search("docker compose", mode="keyword").results]
    assert ids[0] == "notes/compose.md", ids
    assert "メモ/コンポーズ.md" in ids  # still found, after it
    # and the other way round: a question in Japanese finds the Japanese note first
    ids = [r.id for r in two_scripts.search("コンポーズのログ docker", mode="keyword").results]
    assert ids[0] == "メモ/コンポーズ.md", ids


LANGS = ("en", "fr", "de", "es", "it", "nl", "pt", "sv", "fi", "pl", "cs", "tr")
PAGES = {"boards": 10, "cards": 1, "arrows": 1, "groups": 1}  # sections naming the word, per version: 120 of one page
MANY = {
    f"{code}/{name}.md": f"---\nlang: {code}\npermalink: {name}\n---\n# {name.title()}\n\n"
    + "".join(
        f"## Part {i}\n\n"
        + (
            f"Canvas, canvas: a canvas of {name}.\n\n"
            if name == "boards"
            else f"One canvas among many other words about {name}, written out at some length ({i}).\n\n"
        )
        for i in range(sections)
    )
    for code in LANGS
    for name, sections in PAGES.items()
}


@pytest.fixture(scope="module")
def many_versions(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Library]:
    yield from keyword_library(tmp_path_factory, "many-versions", MANY)


def test_a_page_in_many_languages_still_leaves_room_for_the_answers_asked_for(many_versions: Library) -> None:
    # The 120 sections of the twelve versions of one page filled the candidates: merged into one answer, the
    # search gave 1 of the 4 asked for. It now looks deeper once.
    result = many_versions.search("canvas", mode="keyword", max_results=4)
    pages = {r.id.split("/")[1] for r in result.results}
    assert pages == {"boards.md", "cards.md", "arrows.md", "groups.md"}, [r.id for r in result.results]
