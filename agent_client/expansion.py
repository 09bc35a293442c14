"""`--expand`: 2-3 reformulations of the question, searched together with it, fused client-side.

Fusion is reciprocal rank fusion by document id (score = sum of 1 / (k + rank) over the searches), so a
document that several phrasings find rises above one that a single phrasing ranks first."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, Field, field_validator

from .hits import search_hits

RRF_K = 60
MAX_REFORMULATIONS = 3

EXPAND_PROMPT = f"""\
You rewrite a question into search queries for a documentation search engine (keyword and semantic).
Reply with one JSON object and nothing else: {{"queries": ["...", "..."]}} with 2 to {MAX_REFORMULATIONS} \
reformulations: use synonyms and the terms documentation would use; if the question is not in English, make one \
query in English (documentation is most often English), and if it is, one in the language the user seems to expect. \
Do not answer the question."""


class Reformulations(BaseModel):
    queries: list[str] = Field(min_length=1)

    @field_validator("queries")
    @classmethod
    def _clean(cls, value: list[str]) -> list[str]:
        out = [" ".join(q.split())[:300] for q in value if q.strip()]
        if not out:
            raise ValueError("no non-empty query")
        return out


def distinct_queries(question: str, reformulations: Sequence[str]) -> list[str]:
    """The question first, then up to MAX_REFORMULATIONS reformulations that differ from it and each other."""
    out = [question]
    for q in reformulations:
        if q.lower() not in {o.lower() for o in out}:
            out.append(q)
    return out[: 1 + MAX_REFORMULATIONS]


def fuse(results: Sequence[str], k: int = RRF_K) -> list[tuple[str, float, list[str]]]:
    """(document id, fused score, its lines from every search that returned it, without repeats), best first."""
    scores: dict[str, float] = {}
    lines: dict[str, list[str]] = {}
    for text in results:
        for rank, (doc_id, doc_lines) in enumerate(search_hits(text), start=1):
            scores[doc_id] = scores.get(doc_id, 0.0) + 1.0 / (k + rank)
            known = lines.setdefault(doc_id, [])
            known.extend(line for line in doc_lines if line not in known)
    order = sorted(scores, key=lambda d: -scores[d])
    return [(d, scores[d], lines[d]) for d in order]


def render_fused(queries: Sequence[str], results: Sequence[str], max_results: int = 10) -> str:
    fused = fuse(results)[:max_results]
    head = (
        f"{len(fused)} documents fused from {len(results)} searches ("
        + "; ".join(f'"{q}"' for q in queries)
        + "), best first by reciprocal rank fusion."
    )
    if not fused:
        return head + "\nNo results. Try other words."
    body = [f"{i}. " + "\n".join(doc_lines) for i, (_, _, doc_lines) in enumerate(fused, start=1)]
    return "\n".join(
        [head, *body, "Next: read_section(id, heading) for the text, or read_document(id, mode='outline')."]
    )
