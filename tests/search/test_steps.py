"""The pipeline's small steps on plain inputs: documents and keyword's first answer, the rerank step's pass-through,
snippet terms and result models."""

from __future__ import annotations

from mcp_docs.index.hits import RankedSection
from mcp_docs.search.documents import group_sections, keyword_leads, lead_with_keyword, uses_signals
from mcp_docs.search.pipeline import join_notes
from mcp_docs.search.ranking import DocumentGroup
from mcp_docs.search.reranking import rerank, rerank_text
from mcp_docs.search.results import LEAD_SNIPPET_CHARS, document_matches, snippet_terms


def section(doc_id: str, idx: int = 0, heading: str = "H", body: str = "body") -> RankedSection:
    return RankedSection(doc_id, idx, doc_id.upper(), heading, heading, idx + 1, idx + 2, body, ("t",))


def test_sections_group_into_documents_and_the_bonus_reorders_the_best_candidates() -> None:
    ranked = [(section("a.md"), 1.0), (section("b.md"), 0.9), (section("a.md", 1, "H2"), 0.5)]
    groups = group_sections(ranked, 5, None)
    assert [g.doc_id for g in groups] == ["a.md", "b.md"]
    assert [s.heading for s in groups[0].hits] == ["H", "H2"]
    boosted = group_sections(ranked, 5, lambda ids: {"b.md": 0.5})
    assert [g.doc_id for g in boosted] == ["b.md", "a.md"]
    assert [g.doc_id for g in group_sections(ranked, 1, None)] == ["a.md"]


def test_signals_count_the_query_words_except_in_semantic_search_or_after_a_reranker() -> None:
    assert uses_signals("hybrid", reranked=False) and uses_signals("keyword", reranked=False)
    assert not uses_signals("semantic", reranked=False)
    assert not uses_signals("hybrid", reranked=True)


def test_keyword_leads_only_in_hybrid_while_embedding_fills_in_and_not_after_a_reranker() -> None:
    assert keyword_leads("hybrid", 0.4, reranked=False)
    assert not keyword_leads("hybrid", 1.0, reranked=False)
    assert not keyword_leads("semantic", 0.4, reranked=False)
    assert not keyword_leads("hybrid", 0.4, reranked=True)


def test_keywords_first_document_is_put_first_at_the_best_score_and_nothing_changes_without_one() -> None:
    groups = [DocumentGroup("v.md", 2.0, [section("v.md")]), DocumentGroup("k.md", 1.0, [section("k.md")])]
    first = [DocumentGroup("k.md", 7.0, [section("k.md")])]
    led = lead_with_keyword(list(groups), first)
    assert [(g.doc_id, g.score) for g in led] == [("k.md", 2.0), ("v.md", 2.0)]
    assert lead_with_keyword(groups, []) == groups


def test_without_a_reranker_the_sections_pass_unchanged_and_what_it_reads_is_the_path_then_the_text() -> None:
    ranked = [(section("a.md", body="text"), 1.0)]
    outcome = rerank(None, "q", ranked)
    assert outcome.ranked == ranked and not outcome.reranked and outcome.note is None
    assert rerank_text(ranked[0]) == "H\ntext"


def test_snippets_centre_on_the_query_words_without_stopwords_and_on_its_identifiers() -> None:
    # an identifier's parts, then the identifier whole
    assert snippet_terms("how do I set OTEL_SERVICE_NAME") == ["set", "otel", "service", "name", "otel_service_name"]
    assert snippet_terms("the") == ["the"]  # nothing but stopwords: they are the terms


def test_result_models_carry_the_lead_sections_snippet_and_the_named_language() -> None:
    body = "filler words here. " * 30 + "The retry policy is exponential."
    groups = [DocumentGroup("a.md", 1.23456, [section("a.md", body=body), section("a.md", 1, "Next", body)])]
    (match,) = document_matches(groups, {"a.md": "fr"}, ["retry"])
    assert (match.id, match.title, match.score, match.tags, match.language) == ("a.md", "A.MD", 1.2346, ["t"], "fr")
    assert "retry" in match.sections[0].snippet and len(match.sections[0].snippet) <= LEAD_SNIPPET_CHARS + 2
    assert len(match.sections[1].snippet) < len(match.sections[0].snippet)


def test_notes_join_with_a_space_and_none_when_there_is_none() -> None:
    assert join_notes("a.", None, "b.") == "a. b."
    assert join_notes(None, None) is None
