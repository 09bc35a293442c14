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
