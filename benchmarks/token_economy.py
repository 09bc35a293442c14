"""Token economy on the OpenTelemetry questions: the search → outline → read_section strategy against
reading whole matching files; outline and summary sizes of long documents.

    python -m benchmarks.token_economy [--docs DIR] [--index-dir DIR] [--mode keyword|hybrid] [--max-results N]
    # hybrid needs an embedded index: --embeddings local --index-dir DIR (e.g. semantic_eval's OTel index)

Uses the tool functions (mcp_docs.tools.DocsTools) and the server's text renderings (mcp_docs.render),
i.e. exactly what an MCP client receives as text content. Tokens are estimated the way the server does
(mcp_docs.tokens.estimate_tokens, ~4 bytes per token); the structured content (JSON) is reported too,
since some clients pass it to the model as well.

Strategies per question (one search per question, keyword mode and max_results=5 unless told):
- section first (what the server's instructions teach): read_section of the top document's first listed
  section alone (include_subsections=False); if that is not the answer, the first listed section of the next
  document, up to 2 (or 3) documents (an agent stops reading once it has the answer; the simulation stops at the
  expected section). Hit = one of the sections read is exactly the expected one (no credit for a parent).
- outline+section: search, outline of the top document, read_section of its best section
  (hit = the section read is the expected one or contains it).
- top doc, its sections: search, read_section of each section (up to 3) the search returned for the top document.
- sections top-3: search, read_section of the best section of each of the top 3 documents.
- whole top-1 file: search, read the whole top document (hit = document hit@1).
- whole top-3 files: search, read the 3 top documents whole (hit = document in top 3).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from .common import CACHE, SHARED_BENCH, require, run_script, table, write_results
from .otel_quality import load_questions, norm_heading


def _contains(read_path: str, expected: str) -> bool:
    r, e = norm_heading(read_path), norm_heading(expected)
    return e == r or e.startswith(r + " > ")


def main(argv: list[str] | None = None) -> dict[str, object]:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--docs", type=Path, default=SHARED_BENCH / "otel-docs")
    ap.add_argument("--index-dir", type=Path, default=CACHE / "otel-index-none")
    ap.add_argument("--mode", choices=("keyword", "hybrid"), default="keyword")
    ap.add_argument("--embeddings", choices=("none", "local"), default="none")
    ap.add_argument("--max-results", type=int, default=5)
    args = ap.parse_args(argv)
    require(args.docs / "en", "OpenTelemetry docs")

    from mcp_docs.library import Library
    from mcp_docs.render import render_read_document, render_read_section, render_search
    from mcp_docs.settings import Settings
    from mcp_docs.tokens import estimate_tokens as tok
    from mcp_docs.tools import DocsTools

    lib = Library(Settings.load(args.docs, args.index_dir, embeddings=args.embeddings))
    lib.sync()
    tools = DocsTools(lib)
    big = 10_000_000

    def full_tokens(doc_id: str) -> int:
        # The whole file as a filesystem read returns it (read_document pages long files at max_chars).
        return tok((args.docs / doc_id).read_text(encoding="utf-8", errors="replace"))

    questions = load_questions()
    acc = {
        k: {"tokens": 0, "json_tokens": 0, "hits": 0}
        for k in (
            "section first, ≤ 2 documents",
            "section first, ≤ 3 documents",
            "outline+section",
            "top doc, its sections",
            "sections top-3",
            "whole top-1 file",
            "whole top-3 files",
        )
    }
    per_q = []
    for q in questions:
        res = tools.search_documents(q["question"], max_results=args.max_results, mode=args.mode)
        search_text = render_search(res)
        s_text = tok(search_text)
        s_json = tok(json.dumps(res.model_dump(mode="json"), ensure_ascii=False))
        row = {
            "id": q["id"],
            "search": s_text,
            "search_chars": len(search_text),
            "search_json_chars": len(json.dumps(res.model_dump(mode="json"), ensure_ascii=False)),
        }
        if not res.results:
            for k in acc:
                acc[k]["tokens"] += s_text
                acc[k]["json_tokens"] += s_json
            per_q.append(row)
            continue
        top = res.results[0]
        # section first: the first listed section alone, document after document until the answer
        first = {}
        for depth in (2, 3):
            tf, jf, hitf = s_text, s_json, 0
            for r in res.results[:depth]:
                if not r.sections:
                    continue
                x = tools.read_section(r.id, r.sections[0].heading_path, include_subsections=False)
                tf += tok(render_read_section(x))
                jf += tok(x.model_dump_json())
                if r.id == q["doc"] and norm_heading(x.heading_path) == norm_heading(q["section"]):
                    hitf = 1
                    break
            first[depth] = (tf, jf, hitf)
        # outline + best section of the top document
        o = tools.read_document(top.id, mode="outline", max_chars=big)
        sec = top.sections[0].heading_path if top.sections else ""
        rs = tools.read_section(top.id, sec) if sec else None
        t1 = s_text + tok(render_read_document(o)) + (tok(render_read_section(rs)) if rs else 0)
        j1 = s_json + tok(o.model_dump_json()) + (tok(rs.model_dump_json()) if rs else 0)
        hit1 = int(top.id == q["doc"] and rs is not None and _contains(rs.heading_path, q["section"]))
        # best section of each of the top 3 documents
        t3, j3, hit3 = s_text, s_json, 0
        for r in res.results[:3]:
            if not r.sections:
                continue
            x = tools.read_section(r.id, r.sections[0].heading_path)
            t3 += tok(render_read_section(x))
            j3 += tok(x.model_dump_json())
            hit3 |= int(r.id == q["doc"] and _contains(x.heading_path, q["section"]))
        # every returned section (up to 3) of the top document
        tt, jt, hitt = s_text, s_json, 0
        for sm in top.sections:
            x = tools.read_section(top.id, sm.heading_path)
            tt += tok(render_read_section(x))
            jt += tok(x.model_dump_json())
            hitt |= int(top.id == q["doc"] and _contains(x.heading_path, q["section"]))
        w1 = s_text + full_tokens(top.id)
        w3 = s_text + sum(full_tokens(r.id) for r in res.results[:3])
        ids3 = [r.id for r in res.results[:3]]
        for key, t, j, h in (
            ("section first, ≤ 2 documents", *first[2]),
            ("section first, ≤ 3 documents", *first[3]),
            ("outline+section", t1, j1, hit1),
            ("top doc, its sections", tt, jt, hitt),
            ("sections top-3", t3, j3, hit3),
            ("whole top-1 file", w1, w1 + s_json - s_text, int(top.id == q["doc"])),
            ("whole top-3 files", w3, w3 + s_json - s_text, int(q["doc"] in ids3)),
        ):
            acc[key]["tokens"] += t
            acc[key]["json_tokens"] += j
            acc[key]["hits"] += h
        row.update(
            {
                "section first": first[2][0],
                "section first hit": first[2][2],
                "outline+section": t1,
                "hit": hit1,
                "whole_top1": w1,
                "outline": tok(render_read_document(o)),
                "section": tok(render_read_section(rs)) if rs else 0,
            }
        )
        per_q.append(row)

    n = len(questions)
    parts = {
        k: round(sum(r.get(k, 0) for r in per_q) / n)
        for k in ("search", "outline", "section", "search_chars", "search_json_chars")
    }
    print(
        f"mean tokens per call: search {parts['search']}, outline {parts['outline']}, section {parts['section']}; "
        f"search result {parts['search_chars']} characters of text, {parts['search_json_chars']} of JSON"
    )
    rows = []
    base = acc["whole top-1 file"]["tokens"] / n
    for k, v in acc.items():
        mean = v["tokens"] / n
        rows.append([k, round(mean), round(v["json_tokens"] / n), round(v["hits"] / n, 3), round(base / mean, 2)])
    table(
        [
            "strategy",
            "tokens/question (text)",
            "tokens incl. structured JSON",
            "section hit rate",
            "whole-top-1 / this",
        ],
        rows,
        title=f"Token economy, OpenTelemetry questions ({n}, {args.mode} mode, max_results={args.max_results})",
    )

    # Outline and summary sizes of the longest documents.
    longest = sorted(lib.catalog.fingerprints().items(), key=lambda kv: -kv[1].size)[:10]
    size_rows = []
    for doc_id, fp in longest:
        full = full_tokens(doc_id)
        outline_t = tok(render_read_document(tools.read_document(doc_id, mode="outline", max_chars=big)))
        summary_t = tok(render_read_document(tools.read_document(doc_id, mode="summary", max_chars=big)))
        default_summary = tools.read_document(doc_id, mode="summary")
        size_rows.append(
            [
                doc_id,
                fp.size,
                full,
                outline_t,
                summary_t,
                default_summary.estimated_tokens,
                round(full / max(outline_t, 1), 1),
            ]
        )
    table(
        [
            "document",
            "bytes",
            "full tokens",
            "outline tokens",
            "summary tokens (all)",
            "summary tokens (default max_chars)",
            "full / outline",
        ],
        size_rows,
        title="Outline and summary sizes of the 10 longest documents",
    )
    lib.close()
    payload = {
        "questions": n,
        "mode": args.mode,
        "max_results": args.max_results,
        "strategies": {
            k: {
                "tokens_per_question": round(v["tokens"] / n, 1),
                "tokens_incl_json_per_question": round(v["json_tokens"] / n, 1),
                "section_hit_rate": round(v["hits"] / n, 3),
            }
            for k, v in acc.items()
        },
        "long_documents": [
            dict(zip(["id", "bytes", "full", "outline", "summary_all", "summary_default", "ratio"], r, strict=False))
            for r in size_rows
        ],
        "per_question": per_q,
        "mean_tokens_per_call": parts,
        "note": "tokens estimated as the server does (~4 bytes/token); DocsTools + mcp_docs.render",
    }
    write_results("token_economy", payload)
    return payload


if __name__ == "__main__":
    run_script(main)
