"""Grouping section hits into documents, and which sections of a document lead."""

from __future__ import annotations

from mcp_docs.index.hits import RankedSection
from mcp_docs.search.ranking import DocumentGroup, group_by_document, lead_with


def sec(path: str, doc_id: str = "d.md", idx: int = 0) -> RankedSection:
    return RankedSection(doc_id, idx, doc_id, path.split(" > ")[-1], path, 1, 2, "body", ())


def paths(hits: list[RankedSection]) -> list[str]:
    return [h.heading_path for h in hits]


def test_a_section_whose_subsections_also_match_leads_them() -> None:
    # "span kind producer and consumer": the subsection repeats its parent's heading and adds one matching word
    hits = [
        (1.0, sec("Spans > Span Kind > Consumer", idx=17)),
        (0.93, sec("Spans > Span Kind", idx=12)),
        (0.82, sec("Spans > Span Kind > Producer", idx=16)),
        (0.44, sec("Spans > Span Kind > Client", idx=13)),
    ]
    [group] = group_by_document([(s.doc_id, score, s) for score, s in hits], 5)
    assert paths(group.hits) == ["Spans > Span Kind", "Spans > Span Kind > Consumer", "Spans > Span Kind > Producer"]


def test_the_document_score_and_order_do_not_depend_on_which_section_leads() -> None:
    hits = [
        ("a.md", 1.0, sec("X > Y", "a.md", 1)),
        ("b.md", 0.99, sec("Z", "b.md", 0)),
        ("a.md", 0.95, sec("X", "a.md", 0)),
        ("b.md", 0.5, sec("Z > W", "b.md", 1)),
        ("a.md", 0.2, sec("Q", "a.md", 2)),
        ("a.md", 0.1, sec("R", "a.md", 3)),
    ]
    groups = group_by_document(hits, 5)
    assert [(g.doc_id, round(g.score, 6)) for g in groups] == [("a.md", 1.115), ("b.md", 1.04)]
    assert paths(groups[0].hits) == ["X", "X > Y", "Q"] and paths(groups[1].hits) == ["Z", "Z > W"]


def test_a_parent_well_below_its_subsection_stays_behind_it() -> None:
    hits = [(1.0, sec("Install > Docker", idx=2)), (0.5, sec("Install", idx=1))]
    [group] = group_by_document([(s.doc_id, score, s) for score, s in hits], 5)
    assert paths(group.hits) == ["Install > Docker", "Install"]


def test_a_parent_beyond_the_first_few_hits_can_come_in() -> None:
    hits = [(1.0, sec("A > B", idx=2)), (0.99, sec("C", idx=5)), (0.98, sec("D", idx=6)), (0.95, sec("A", idx=1))]
    [group] = group_by_document([(s.doc_id, score, s) for score, s in hits], 5)
    assert paths(group.hits) == ["A", "A > B", "C"]


def test_only_whole_headings_make_a_parent_and_repeated_paths_share_the_credit() -> None:
    # "Span" is a prefix of "Span Kind" as text, not as a heading; two "Example" sections under one parent
    hits = [
        (1.0, sec("Span Kind > Consumer", idx=3)),
        (0.95, sec("Span", idx=1)),
        (0.9, sec("Ex > Example", idx=7)),
        (0.8, sec("Ex", idx=5)),
        (0.8, sec("Ex", idx=6)),
    ]
    [group] = group_by_document([(s.doc_id, score, s) for score, s in hits], 5, per_document=5)
    assert paths(group.hits) == ["Span Kind > Consumer", "Span", "Ex > Example", "Ex", "Ex"]
    assert [h.section_idx for h in group.hits[-2:]] == [5, 6]


def test_a_parent_just_below_the_one_child_asked_about_does_not_hide_it() -> None:
    # "how to link a span to spans of another trace": the answer is Spans > Span Links, not all of Spans
    hits = [(1.0, sec("Spans > Span Links", idx=4)), (0.92, sec("Spans", idx=1)), (0.3, sec("Resources", idx=9))]
    [group] = group_by_document([(s.doc_id, score, s) for score, s in hits], 5)
    assert paths(group.hits) == ["Spans > Span Links", "Spans", "Resources"]


def test_a_document_bonus_is_a_share_of_the_best_score_given_to_the_leading_documents_only() -> None:
    hits = [(f"{c}.md", score, sec("S", f"{c}.md")) for c, score in (("a", 10.0), ("b", 9.0), ("c", 8.0), ("d", 1.0))]
    asked: list[list[str]] = []

    def bonus(ids):
        asked.append(list(ids))
        return {"c.md": 0.3, "d.md": 5.0}  # d.md is not among the leading documents: it gains nothing

    groups = group_by_document(hits, 3, bonus=bonus, candidates=3)
    assert asked == [["a.md", "b.md", "c.md"]]
    assert [(g.doc_id, g.score) for g in groups] == [("c.md", 11.0), ("a.md", 10.0), ("b.md", 9.0)]
    assert [g.doc_id for g in group_by_document(hits, 3)] == ["a.md", "b.md", "c.md"]


def test_lead_with_moves_a_listed_document_up_with_its_own_sections_at_the_best_score() -> None:
    groups = [
        DocumentGroup("a.md", 3.0, ["a1"]),
        DocumentGroup("b.md", 2.0, ["b1", "b2"]),
        DocumentGroup("c.md", 1.0, []),
    ]
    led = lead_with(groups, DocumentGroup("b.md", 40.0, ["b9"]))
    assert [(g.doc_id, g.score, g.hits) for g in led] == [
        ("b.md", 3.0, ["b1", "b2"]),
        ("a.md", 3.0, ["a1"]),
        ("c.md", 1.0, []),
    ]


def test_lead_with_puts_an_unlisted_document_first_and_keeps_the_length() -> None:
    groups = [DocumentGroup("a.md", 3.0, ["a1"]), DocumentGroup("b.md", 2.0, ["b1"])]
    led = lead_with(groups, DocumentGroup("k.md", 40.0, ["k1"]))
    assert [(g.doc_id, g.score, g.hits) for g in led] == [("k.md", 3.0, ["k1"]), ("a.md", 3.0, ["a1"])]
    assert lead_with(led, DocumentGroup("k.md", 1.0, [])) == led  # already first: unchanged
    assert lead_with([], DocumentGroup("k.md", 1.0, [])) == []
