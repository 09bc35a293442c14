"""The catalog on a real SQLite file: writes inside one transaction, fingerprints by id and by folder, listing
with folder, tag and paging, the problem list, and the count seen by another connection."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from mcp_docs.scan import Problem
from mcp_docs.store.embedded.catalog import Catalog, DocumentRecord, Fingerprint, SectionRecord, folder_of

IDS = ["a.md", "guides/install.md", "guides/k8s/helm.md", "guides2/x.md", "notes/today.md"]


def record(doc_id: str, tags: tuple[str, ...] = (), lang: str = "en") -> DocumentRecord:
    return DocumentRecord(
        id=doc_id,
        folder=folder_of(doc_id),
        hash=f"h-{doc_id}",
        mtime_ns=len(doc_id),
        size=100,
        title=doc_id.upper(),
        summary="",
        tags=tags,
        aliases=(),
        front_matter={"tags": list(tags)},
        lang=lang,
        links=(),
        warnings=("invalid UTF-8 replaced",) if doc_id == "a.md" else (),
        tokens=10,
    )


def sections(n: int) -> list[SectionRecord]:
    return [SectionRecord(i, f"H{i}", f"T > H{i}", 2, i * 5 + 1, i * 5 + 4, i * 5 + 4, 7) for i in range(n)]


@pytest.fixture
def catalog(tmp_path: Path) -> Iterator[Catalog]:
    cat = Catalog.open(tmp_path / "catalog.sqlite")
    with cat.transaction() as conn:
        for n, doc_id in enumerate(IDS):
            Catalog.upsert(
                conn, record(doc_id, ("ops",) if "guides" in doc_id else (), "fr" if n == 4 else "en"), sections(n + 1)
            )
    yield cat
    cat.close()


def test_a_document_reads_back_as_written(catalog: Catalog) -> None:
    doc = catalog.document("guides/k8s/helm.md")
    assert (
        doc is not None
        and doc.folder == "guides/k8s"
        and doc.tags == ("ops",)
        and doc.front_matter == {"tags": ["ops"]}
    )
    assert [s.idx for s in catalog.sections("guides/k8s/helm.md")] == [0, 1, 2]
    assert catalog.section_counts(["a.md", "notes/today.md", "nope.md"]) == {"a.md": 1, "notes/today.md": 5}
    assert (catalog.count(), catalog.section_total(), set(catalog.language_counts())) == (5, 15, {"en", "fr"})
    assert catalog.documents_with_warnings() == [("a.md", ["invalid UTF-8 replaced"])]


def test_upsert_replaces_delete_removes_touch_updates_the_fingerprint_only(catalog: Catalog) -> None:
    with catalog.transaction() as conn:
        Catalog.upsert(conn, record("a.md", ("new",)), sections(2))
        Catalog.delete(conn, "notes/today.md")
        Catalog.touch(conn, "guides/install.md", 99, 123)
    assert catalog.sections("a.md") and len(catalog.sections("a.md")) == 2
    assert catalog.list_documents("", "new", 10, 0)[1] == 1
    assert catalog.document("notes/today.md") is None and catalog.sections("notes/today.md") == []
    assert catalog.fingerprints(["guides/install.md"]) == {
        "guides/install.md": Fingerprint("h-guides/install.md", 123, 99)
    }


def test_fingerprints_of_a_folder_are_those_under_it_not_of_a_sibling_sharing_its_prefix(catalog: Catalog) -> None:
    assert sorted(catalog.fingerprints(["guides"])) == ["guides/install.md", "guides/k8s/helm.md"]
    assert sorted(catalog.fingerprints(["a.md", "guides2"])) == ["a.md", "guides2/x.md"]
    assert sorted(catalog.fingerprints()) == IDS


def test_listing_filters_by_folder_and_tag_and_pages(catalog: Catalog) -> None:
    docs, total = catalog.list_documents("guides", None, 1, 1)
    assert total == 2 and [d.id for d in docs] == ["guides/k8s/helm.md"]
    assert [d.id for d in catalog.list_documents("", "ops", 10, 0)[0]] == [
        "guides/install.md",
        "guides/k8s/helm.md",
        "guides2/x.md",
    ]
    assert catalog.subfolders("", None) == [("guides", 2), ("guides2", 1), ("notes", 1)]
    assert catalog.subfolders("guides", "ops") == [("guides/k8s", 1)]


def test_problems_are_replaced_whole_or_under_one_folder(catalog: Catalog) -> None:
    with catalog.transaction() as conn:
        Catalog.replace_problems(conn, [Problem("x/big.md", "too_large", "2 MB"), Problem("y.md", "binary", "NUL")])
    with catalog.transaction() as conn:
        Catalog.replace_problems(conn, [Problem("x/other.md", "binary", "NUL")], scope="x")
    assert [p.path for p in catalog.problems()] == ["x/other.md", "y.md"]
    with catalog.transaction() as conn:
        Catalog.delete_problems(conn, ["y.md"])
        Catalog.add_problems(conn, [Problem("z.md", "unreadable", "EACCES")])
    assert [p.path for p in catalog.problems()] == ["x/other.md", "z.md"]


def test_the_count_follows_commits_of_another_connection(catalog: Catalog) -> None:
    other = Catalog(catalog.path)
    assert catalog.count() == 5
    with other.transaction() as conn:
        Catalog.delete(conn, "a.md")
    other.close()
    assert catalog.count() == 4


def test_clear_forgets_everything_but_the_meta(catalog: Catalog) -> None:
    catalog.set_meta("root", "/docs")
    catalog.clear()
    assert (catalog.count(), catalog.section_total(), catalog.problems()) == (0, 0, [])
    assert catalog.get_meta("root") == "/docs"


def test_documents_by_language_and_languages_of_follow_commits_here_and_elsewhere(
    catalog: Catalog, tmp_path: Path
) -> None:
    assert catalog.documents_by_language("en") == {"fr": ["notes/today.md"]}
    assert catalog.languages_of(["a.md", "notes/today.md", "nope.md"]) == {"a.md": "en", "notes/today.md": "fr"}
    with catalog.transaction() as conn:  # this connection commits
        Catalog.upsert(conn, record("fr/a.md", lang="fr"), sections(1))
    assert catalog.documents_by_language("en") == {"fr": ["fr/a.md", "notes/today.md"]}
    writer = Catalog.open(tmp_path / "catalog.sqlite")  # another one (a writing worker) commits
    with writer.transaction() as conn:
        Catalog.upsert(conn, record("de/b.md", lang="de"), sections(1))
    writer.close()
    assert catalog.documents_by_language("en") == {"de": ["de/b.md"], "fr": ["fr/a.md", "notes/today.md"]}
    assert catalog.documents_by_language("fr") == {"en": [*IDS[:4]], "de": ["de/b.md"]}
