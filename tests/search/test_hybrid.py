"""Hybrid fusion while vectors cover only part of the collection: the pure fusion function, then a real library
(Tantivy + sqlite-vec files in a tmp dir) embedded part-way through an OpenAI-compatible endpoint on 127.0.0.1."""

from __future__ import annotations

import os
import random
import time
from pathlib import Path

import pytest

from mcp_docs.index import embedding_worker as worker_mod
from mcp_docs.index.hits import RankedSection, VectorHit
from mcp_docs.library import Library
from mcp_docs.search.hybrid import SHARE_BASE, coverage_share, fuse, query_keyword_share, without_text
from mcp_docs.search.ranking import group_by_document
from tests.test_embedders import FAKE_KEY, EmbeddingsServer, endpoint_settings

Key = tuple[str, int]


def section(doc_id: str, idx: int = 0) -> RankedSection:
    return RankedSection(doc_id, idx, doc_id, "H", "H", 1, 2, "body", ())


def vhit(doc_id: str, idx: int = 0, similarity: float = 0.9) -> VectorHit:
    return VectorHit(doc_id, idx, similarity, doc_id, "H", "H", 1, 2, "piece", ())


def keys(fused: list[tuple[RankedSection, float]]) -> list[Key]:
    return [(s.doc_id, s.section_idx) for s, _ in fused]


def kw(*doc_ids: str) -> list[tuple[RankedSection, float]]:
    return [(section(d), 10.0 - i) for i, d in enumerate(doc_ids)]


# -- the pure fusion ----------------------------------------------------------------------------


def test_a_section_without_vectors_does_not_lose_to_one_that_merely_has_them() -> None:
    # "install" is keyword rank 1 but not embedded yet; "blog" is keyword rank 2 and the vector side's top hit.
    keyword_hits = kw("install.md", "blog.md", "chart.md")
    vector_hits = [vhit("blog.md"), vhit("other.md")]
    waiting = {("install.md", 0), ("chart.md", 0)}
    assert keys(fuse(keyword_hits, vector_hits, 10, waiting=waiting))[0] == ("install.md", 0)
    # without knowing what is waiting, the section that merely has vectors wins (the bug this guards against;
    # at a flat keyword list's share: three hits alone would count as a confident keyword side)
    assert keys(fuse(keyword_hits, vector_hits, 10, keyword_share=SHARE_BASE))[0] == ("blog.md", 0)


def test_nothing_embedded_gives_the_keyword_order() -> None:
    rng = random.Random(7)
    for _ in range(50):
        docs = [f"d{i}.md" for i in rng.sample(range(100), 30)]
        keyword_hits = kw(*docs)
        waiting = {(d, 0) for d in docs}
        assert keys(fuse(keyword_hits, [], 50, waiting=waiting)) == [(d, 0) for d in docs]


def test_with_nothing_embedded_documents_group_exactly_as_in_keyword_search() -> None:
    # Ranks would not do: a document with several matching sections groups differently on rank scores.
    rng = random.Random(3)
    for _ in range(50):
        hits = [(section(f"d{rng.randrange(8)}.md", i), rng.uniform(1, 60)) for i in range(30)]
        hits.sort(key=lambda h: -h[1])
        waiting = {(s.doc_id, s.section_idx) for s, _ in hits}
        fused = fuse(hits, [], 50, waiting=waiting)
        by_keyword = group_by_document([(s.doc_id, score, s) for s, score in hits], 10)
        by_fusion = group_by_document([(s.doc_id, score, s) for s, score in fused], 10)
        assert [(g.doc_id, g.hits) for g in by_fusion] == [(g.doc_id, g.hits) for g in by_keyword]


def test_fully_embedded_each_side_is_scaled_to_its_best_hit_and_weighed_by_the_share() -> None:
    keyword_hits = [(section("a.md"), 20.0), (section("b.md"), 10.0)]
    vector_hits = [vhit("c.md", similarity=0.8), vhit("b.md", similarity=0.7), vhit("a.md", similarity=0.4)]
    both = fuse(keyword_hits, vector_hits, 10, keyword_share=0.5, min_similarity=0.4)
    # a: .5 * 20/20 + .5 * .4/.8;  b: .5 * 10/20 + .5 * .7/.8;  c: .5 * .8/.8
    assert [(k, score) for k, (_, score) in zip(keys(both), both, strict=False)] == [
        (("a.md", 0), 0.75),
        (("b.md", 0), 0.6875),
        (("c.md", 0), 0.5),
    ]
    only_keyword = fuse(keyword_hits, vector_hits, 10, keyword_share=1.0, min_similarity=0.4)
    assert keys(only_keyword)[:2] == [("a.md", 0), ("b.md", 0)]
    only_vector = fuse(keyword_hits, vector_hits, 10, keyword_share=0.0, min_similarity=0.4)
    assert keys(only_vector) == [("c.md", 0), ("b.md", 0), ("a.md", 0)]


def test_waiting_sections_keep_their_keyword_order_among_themselves_and_vector_only_hits_still_come_in() -> None:
    docs = [f"k{i}.md" for i in range(20)]
    keyword_hits = kw(*docs)
    waiting = {(d, 0) for d in docs[::2]}  # every other keyword hit has no vectors yet
    vector_hits = [vhit("new.md")] + [vhit(d) for d in reversed(docs[1::2])]
    fused = keys(fuse(keyword_hits, vector_hits, 50, waiting=waiting))
    assert [k for k in fused if k in waiting] == [(d, 0) for d in docs[::2]]
    assert ("new.md", 0) in fused


def test_partial_or_stale_vector_hits_of_waiting_sections_are_ignored() -> None:
    # half embedded: its one vector hit must not count on top of its keyword stand-in
    keyword_hits = kw("a.md", "b.md")
    waiting = {("b.md", 0)}
    alone = fuse(keyword_hits, [], 10, waiting=waiting)
    with_hit = fuse(keyword_hits, [vhit("b.md")], 10, waiting=waiting)
    assert with_hit == alone


def test_vector_hits_below_the_cutoff_are_left_out_whatever_the_coverage() -> None:
    fused = fuse(kw("a.md"), [vhit("far.md", similarity=0.1)], 10, waiting={("a.md", 0)}, min_similarity=0.4)
    assert keys(fused) == [("a.md", 0)]


def test_a_keyword_hit_that_stands_out_keeps_its_lead_over_the_vectors_choice() -> None:
    # an exact identifier: one section far above the rest of the BM25 list; the vectors prefer a neighbour
    keyword_hits = [(section("env.md"), 30.0)] + [(section(f"n{i}.md"), 6.0 - i * 0.1) for i in range(20)]
    vector_hits = [vhit("n3.md", similarity=0.7), vhit("env.md", similarity=0.41)]
    assert query_keyword_share([score for _, score in keyword_hits]) > 0.9
    assert keys(fuse(keyword_hits, vector_hits, 10, min_similarity=0.4))[0] == ("env.md", 0)
    # at the share of a flat list the vectors' choice would win
    assert keys(fuse(keyword_hits, vector_hits, 10, keyword_share=SHARE_BASE, min_similarity=0.4))[0] == ("n3.md", 0)


def test_a_keyword_list_without_a_clear_winner_lets_the_vectors_tell_its_hits_apart() -> None:
    # common words only: the BM25 scores fall off slowly; the vectors clearly prefer the fourth hit
    keyword_hits = [(section(f"f{i}.md"), 10.0 - i / 3) for i in range(20)]
    vector_hits = [vhit("f3.md", similarity=0.8), vhit("f0.md", similarity=0.55)]
    assert query_keyword_share([score for _, score in keyword_hits]) < 0.65
    assert keys(fuse(keyword_hits, vector_hits, 10, min_similarity=0.4))[0] == ("f3.md", 0)
    # a high fixed share (0.85, the previous constant) kept the keyword order
    assert keys(fuse(keyword_hits, vector_hits, 10, keyword_share=0.85, min_similarity=0.4))[0] == ("f0.md", 0)


def test_the_keyword_share_stays_within_bounds_for_any_scores() -> None:
    assert query_keyword_share([]) == SHARE_BASE
    assert query_keyword_share([0.0, 0.0]) == SHARE_BASE
    assert query_keyword_share([5.0]) == 1.0  # a lone hit stands far above: nothing else matched
    assert query_keyword_share([3.0] * 50) == SHARE_BASE  # ten equal best hits: flat
    rng = random.Random(11)
    for _ in range(200):
        scores = [rng.uniform(0, 50) for _ in range(rng.randrange(1, 40))]
        assert 0.0 <= query_keyword_share(scores) <= 1.0
        assert query_keyword_share(scores) == query_keyword_share(sorted(scores))  # order does not matter


def test_the_keyword_share_grows_as_coverage_falls_from_the_share_to_pure_keyword() -> None:
    assert coverage_share(0.3, 1.0) == 0.3 and coverage_share(0.3, 0.0) == 1.0
    assert coverage_share(0.2, 0.5) == pytest.approx(0.6)
    assert coverage_share(0.2, 1.5) == 0.2 and coverage_share(0.2, -1.0) == 1.0  # clamped


# -- a real library, embedded part-way ----------------------------------------------------------------

CANONICAL = """# Install the Collector with Helm

## Kubernetes

Install the collector on Kubernetes with the Helm chart: `helm install my-collector open-telemetry/opentelemetry-collector`.
"""

BLOG = """# Our year with observability

## Looking back

We moved every cluster to Kubernetes this year and wrote about observability, dashboards, the collector and Kubernetes.
"""


def write_vault(root: Path) -> Path:
    (root / "blog").mkdir(parents=True)
    (root / "docs").mkdir()
    for i in range(3):
        (root / "blog" / f"2022-{i}.md").write_text(BLOG.replace("this year", f"in 2022, part {i}"))
    (root / "docs" / "install.md").write_text(CANONICAL)
    (root / "docs" / "tracing.md").write_text("# Tracing\n\n## Spans\n\nA span is one unit of work in a trace.\n")
    # The worker embeds the most recently modified documents first: the blog posts are the newest here,
    # so an interrupted run has embedded them and not the docs (the case the review hit).
    old = time.time() - 3600
    for doc in (root / "docs").iterdir():
        os.utime(doc, (old, old))
    return root


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> EmbeddingsServer:
    monkeypatch.setenv("EMB_KEY", FAKE_KEY)
    with EmbeddingsServer() as srv:
        yield srv


def embed_part_way(lib: Library, chunks: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """An `index` run interrupted (Ctrl-C) once `chunks` section chunks have vectors, committed so far: every
    document's own vector is embedded before any section's, so those are all in."""
    assert lib.vectors is not None
    monkeypatch.setattr(worker_mod, "EMBED_BATCH", 1)
    vectors = lib.vectors

    def interrupt(done: int, total: int) -> None:
        if vectors.embedded_chunks() >= chunks and done:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        lib.embedding.build(progress=interrupt)


QUERY = "install the collector on Kubernetes with Helm"


def test_part_way_embedded_hybrid_keeps_the_keyword_winner_and_says_how_far(
    tmp_path: Path, server: EmbeddingsServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    vault = write_vault(tmp_path / "vault")
    with Library(endpoint_settings(vault, tmp_path / "idx", server)) as lib:
        lib.sync()
        embed_part_way(lib, 3, monkeypatch)  # the three blog posts, not the docs
        assert lib.vectors is not None
        assert lib.vectors.embedded_chunks() == 3 and lib.vectors.pending() == 2
        keyword = lib.search(QUERY, mode="keyword")
        assert keyword.results[0].id == "docs/install.md" and keyword.note is None
        hybrid = lib.search(QUERY, mode="hybrid")
        assert hybrid.mode_used == "hybrid"
        assert [r.id for r in hybrid.results][:1] == ["docs/install.md"]
        assert hybrid.note == (
            "Document vectors ready for all 5 documents; sections 60 %: a document whose sections are not embedded "
            "yet is ranked by keyword and document vectors."
        )
        semantic = lib.search(QUERY, mode="semantic")
        assert "sections 60 %" in (semantic.note or "") and "document's vector" in (semantic.note or "")
        # the docs have no section vectors yet: semantic search finds them by their own vector, at their first section
        found = {r.id: r for r in semantic.results}
        assert "docs/install.md" in found and found["docs/install.md"].sections[0].heading == "Kubernetes"
        lib.embedding.build()  # the rest: no note any more
        done = lib.search(QUERY, mode="hybrid")
        assert done.note is None and done.results[0].id == "docs/install.md"


def test_an_embedding_failure_part_way_is_named_in_the_note_and_keyword_order_holds(
    tmp_path: Path, server: EmbeddingsServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    vault = write_vault(tmp_path / "vault")
    with Library(endpoint_settings(vault, tmp_path / "idx", server)) as lib:
        lib.sync()
        embed_part_way(lib, 3, monkeypatch)
        assert lib.vectors is not None
        server.fail_with = 500  # the endpoint now refuses passages (a model that broke, a rejected chunk)
        lib.start_embedding()
        deadline = time.monotonic() + 30
        while not lib.vectors.status()["error"] and time.monotonic() < deadline:
            time.sleep(0.05)
        assert lib.vectors.status()["error"]
        lib.embedding.stop()
        server.fail_with = None  # queries get through again
        hybrid = lib.search(QUERY, mode="hybrid")
        assert hybrid.results[0].id == "docs/install.md"
        note = hybrid.note or ""
        assert note.startswith("Document vectors ready for all 5 documents; sections 60 % (") and "keyword" in note
        server.fail_with = 500  # and when the query cannot be embedded either: keyword results, with the reason
        lib.vectors._query_cache.clear()
        down = lib.search("collector helm chart", mode="hybrid")
        assert down.mode_used == "keyword" and "failed" in (down.note or "") and down.results[0].id == "docs/install.md"


def test_pending_embeddings_counts_chunks_before_and_after_chunking(tmp_path: Path, server: EmbeddingsServer) -> None:
    """One unit from start to end: documents not chunked yet count as the chunks they will likely make."""
    vault = tmp_path / "vault"
    vault.mkdir()

    def write(i: int) -> None:
        (vault / f"n{i}.md").write_text(f"# Note {i}\n\n## Alpha\n\nalpha text {i}\n\n## Beta\n\nbeta text {i}\n")

    for i in range(4):
        write(i)
    with Library(endpoint_settings(vault, tmp_path / "idx", server)) as lib:
        lib.sync()
        assert lib.vectors is not None
        lib.embedding.build()
        per_document = lib.vectors.status()["chunks"] // 4
        assert per_document > 1 and lib.index_info().pending_embeddings == 0
        for i in range(4, 10):
            write(i)
        lib.sync()
        # not chunked yet, counted in chunks, and each document's own unit (embedded first)
        assert lib.index_info().pending_embeddings == 6 * (per_document + 1)
        lib.embedding.chunk_dirty()
        assert lib.vectors.pending_sections() == 6 * per_document and lib.vectors.pending_documents() == 6
        assert lib.index_info().pending_embeddings == 6 * (per_document + 1)


def test_barely_embedded_hybrid_keeps_the_keyword_order_of_documents(
    tmp_path: Path, server: EmbeddingsServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One document of twelve has vectors: the vector side's best hit is only the best of that one, scaled to 1
    like a best of all. At a flat keyword list's share it would lift that document over better keyword hits;
    the keyword share grows as coverage falls (`coverage_share`), so the keyword order holds."""
    vault = tmp_path / "vault"
    vault.mkdir()
    old = time.time() - 3600
    for i in range(12):  # the query's words less and less often, in notes of the same length: a flat BM25 list
        words = ["collector pipeline"] * (12 - i) + [f"filler{i}x{j}" for j in range(2 * i)]
        note = vault / f"n{i:02d}.md"
        note.write_text(f"# Note {i}\n\n## Body\n\n{' '.join(words)}\n")
        if i != 5:  # the worker embeds the newest document first: n05 only
            os.utime(note, (old, old))
    with Library(endpoint_settings(vault, tmp_path / "idx", server)) as lib:
        lib.sync()
        embed_part_way(lib, 1, monkeypatch)
        assert lib.vectors is not None and lib.vectors.embedded_chunks() == 1
        keyword = [r.id for r in lib.search("collector pipeline", mode="keyword", max_results=10).results]
        hybrid = lib.search("collector pipeline", mode="hybrid", max_results=10)
        assert hybrid.mode_used == "hybrid" and "sections 8 %" in (hybrid.note or "")
        assert [r.id for r in hybrid.results] == keyword


def test_each_embedder_sets_how_far_its_cosines_may_reorder_the_keyword_hits(
    tmp_path: Path, server: EmbeddingsServer
) -> None:
    """A flat BM25 list (ten short notes alike) and one long note that says the query's word six times: BM25
    discounts it for its length, the cosine likes the repetition. The embedder's `keyword_share_base` decides
    (e5 0.25, MiniLM and endpoints 0.2; benchmarks/REPORT.md, "Fusion constants per embedder")."""
    vault = tmp_path / "vault"
    vault.mkdir()
    for i in range(10):
        (vault / f"short{i}.md").write_text(f"collector note{i} word{i} term{i}\n")
    (vault / "long.md").write_text("collector " * 6 + " ".join(f"filler{j}" for j in range(60)) + "\n")
    with Library(endpoint_settings(vault, tmp_path / "idx", server)) as lib:
        lib.sync()
        lib.embedding.build()
        assert lib.vectors is not None
        assert lib.search("collector", mode="keyword").results[0].id == "short0.md"
        assert lib.vectors.embedder.keyword_share_base == SHARE_BASE
        assert lib.search("collector", mode="hybrid").results[0].id == "long.md"
        lib.vectors.embedder.keyword_share_base = 0.9  # a model whose cosines are trusted less
        assert lib.search("collector", mode="hybrid").results[0].id == "short0.md"


def test_while_embedding_fills_in_the_first_answer_is_keywords_and_the_vectors_order_the_rest(
    tmp_path: Path, server: EmbeddingsServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The vault of the test above, all embedded but one unrelated old note: the vectors would already put the
    long note first (they do once everything is embedded), but part-way keyword's first answer stays first."""
    vault = tmp_path / "vault"
    vault.mkdir()
    for i in range(10):
        (vault / f"short{i}.md").write_text(f"collector note{i} word{i} term{i}\n")
    (vault / "long.md").write_text("collector " * 6 + " ".join(f"filler{j}" for j in range(60)) + "\n")
    unrelated = vault / "zz-unrelated.md"
    # two sibling sections: its own document unit is not the text of a chunk, so they wait after the document phase
    unrelated.write_text("# Unrelated\n\n## First\n\nnothing about the query here\n\n## Second\n\nstill nothing\n")
    old = time.time() - 3600
    os.utime(unrelated, (old, old))  # the worker embeds the newest documents first: this one last
    with Library(endpoint_settings(vault, tmp_path / "idx", server)) as lib:
        lib.sync()
        embed_part_way(lib, 11, monkeypatch)
        assert lib.vectors is not None and lib.vectors.pending() == 2  # its two section chunks
        keyword = lib.search("collector", mode="keyword")
        part_way = lib.search("collector", mode="hybrid")
        assert part_way.mode_used == "hybrid" and "all 12 documents; sections 84 %" in (part_way.note or "")
        assert [r.id for r in part_way.results][:1] == [keyword.results[0].id] == ["short0.md"]
        assert "long.md" in [r.id for r in part_way.results]  # the vectors still bring it in below
        assert part_way.results[0].score >= part_way.results[1].score
        lib.embedding.build()
        assert lib.search("collector", mode="hybrid").results[0].id == "long.md"


def test_a_section_with_no_text_of_its_own_is_scored_by_its_keyword_score_alone() -> None:
    heading_only = RankedSection("g.md", 1, "g.md", "Terms", "Glossary > Terms", 5, 5, "  \n", ())
    with_text = RankedSection("g.md", 2, "g.md", "Span", "Glossary > Terms > Span", 7, 9, "A span is...", ())
    assert without_text([(heading_only, 3.0), (with_text, 4.0)]) == {("g.md", 1)}


def test_a_heading_over_matching_subsections_leads_them_in_hybrid_as_in_keyword_search(
    tmp_path: Path, server: EmbeddingsServer
) -> None:
    """A glossary: "Terms" has no text of its own, so no vector; its twenty terms each have one. Scored at the
    keyword share alone it fell below its subsections and out of the document's shown sections (OTel otel-052)."""
    terms = "".join(f"### Word{i}\n\nA word{i} is one of the building blocks of telemetry.\n\n" for i in range(20))
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "glossary.md").write_text(f"# Glossary\n\nWords used across these docs.\n\n## Terms\n\n{terms}")
    for i in range(8):
        (vault / f"note{i}.md").write_text(f"# Note {i}\n\nThe service {i} sends telemetry terms to the backend.\n")
    with Library(endpoint_settings(vault, tmp_path / "idx", server)) as lib:
        lib.sync()
        lib.embedding.build()
        for mode in ("keyword", "hybrid"):
            first = lib.search("glossary of terms", mode=mode).results[0]
            assert first.id == "glossary.md"
            assert first.sections[0].heading_path == "Glossary > Terms", mode
