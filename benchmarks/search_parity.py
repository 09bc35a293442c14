"""Byte-for-byte parity of `search_documents`: dump the JSON of ~100 varied searches, before and after a change
that must not change behaviour (issue 28's search restructure), then compare the two files.

    python -m benchmarks.search_parity dump OUT.jsonl [--cache DIR]
    python -m benchmarks.search_parity compare BEFORE.jsonl AFTER.jsonl

The searches go through the tool (`DocsTools.search_documents`, as an agent calls it) over real indexes built
once in the cache folder (kept, so both runs read the same stored vectors):
- the OpenTelemetry docs (en + fr, ../shared/bench/otel-docs), embeddings off: keyword questions in both
  languages, identifiers, folder filters, max_results at and beyond its limits, hybrid and semantic asked for
  (the "embeddings are off" note);
- the test fixture vault with MiniLM vectors, fully embedded: hybrid, semantic and keyword, folder and tags
  filters; a loopback reranker (tests/rerank/fake_server.py) on the same index;
- the same vault embedded part-way (the coverage notes, keyword's first answer while embedding fills in);
- a multilingual vault (Obsidian help pages in English, French and German that declare their translations by
  `permalink`, /work/data/obsidian-help) with MiniLM vectors: translations shown once, the query's language;
- the OTel docs' concept pages in English and French with MiniLM vectors (translations by mirrored paths): the
  questions about them, hybrid and semantic;
- an empty folder.
Each line is one search: its arguments and the result's JSON. Nothing of the data is written into the repo.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from .common import CACHE, DATA_DIR, REPO, SHARED_BENCH

OBSIDIAN_HELP = Path(os.environ.get("MCP_DOCS_OBSIDIAN_HELP", "/work/data/obsidian-help"))
FIXTURE_VAULT = REPO / "tests" / "fixtures" / "vault"
MINILM = "all-MiniLM-L6-v2"

OTEL_EXTRA: list[dict[str, Any]] = [
    {"query": "OTEL_PYTHON_EXCLUDED_URLS"},
    {"query": "collector", "folder": "en/docs/collector"},
    {"query": "sampling", "folder": "fr"},
    {"query": "échantillonnage des traces", "max_results": 10},
    {"query": "the and of"},
    {"query": "span links", "max_results": 20},
    {"query": "span links", "max_results": 0},
    {"query": "span links", "max_results": 50},
    {"query": "exporter", "mode": "hybrid"},
    {"query": "exporter", "mode": "semantic"},
    {"query": "zzzzqqq nothing matches this"},
    {"query": "baggage", "tags": ["nosuchtag"]},
    {"query": "Kubernetes operator auto-instrumentation", "max_results": 1},
    {"query": "qu'est-ce qu'OpenTelemetry"},
]

FIXTURE_QUERIES: list[dict[str, Any]] = [
    {"query": "writing guide"},
    {"query": "release notes"},
    {"query": "élèves"},
    {"query": "how do I write a good note", "max_results": 10},
    {"query": "project", "tags": ["project"]},
    {"query": "writing style", "tags": ["guide"]},
    {"query": "welcome handbook", "tags": ["#onboarding", "handbook"], "max_results": 2},
    {"query": "notes", "folder": "notes"},
    {"query": "guide", "folder": "guides", "max_results": 3},
    {"query": "crlfmarker"},
    {"query": "Café crème"},
    {"query": "nothing at all matches qqqzzz"},
]

MULTILINGUAL_QUERIES: list[dict[str, Any]] = [
    {"query": "how do I create a canvas"},
    {"query": "comment créer un canevas"},
    {"query": "wie erstelle ich eine Notiz"},
    {"query": "keyboard shortcuts hotkeys"},
    {"query": "raccourcis clavier"},
    {"query": "plugins", "max_results": 10},
    {"query": "sync your notes across devices"},
    {"query": "Obsidian Publish"},
    {"query": "graph view", "folder": "fr"},
    {"query": "links", "folder": "en"},
]


def otel_queries() -> list[dict[str, Any]]:
    lines = (DATA_DIR / "otel_questions.jsonl").read_text(encoding="utf-8").splitlines()
    questions = [json.loads(line)["question"] for line in lines if line.strip()]
    french = (DATA_DIR / "otel_crosslingual_fr.jsonl").read_text(encoding="utf-8").splitlines()
    fr = [json.loads(line)["question"] for line in french if line.strip()]
    return [{"query": q} for q in questions[::3]] + [{"query": q} for q in fr[::5]] + OTEL_EXTRA


def otel_concepts(target: Path) -> Path:
    """The OTel docs' concept pages in English and French (translations told by their mirrored paths)."""
    if not target.exists():
        for lang in ("en", "fr"):
            shutil.copytree(
                SHARED_BENCH / "otel-docs" / lang / "docs" / "concepts", target / lang / "docs" / "concepts"
            )
    return target


def concept_queries() -> list[dict[str, Any]]:
    found = []
    for name in ("otel_questions.jsonl", "otel_crosslingual_fr.jsonl"):
        for line in (DATA_DIR / name).read_text(encoding="utf-8").splitlines():
            if line.strip() and "/docs/concepts/" in json.loads(line)["doc"]:
                found.append({"query": json.loads(line)["question"]})
    return found


def multilingual_vault(target: Path) -> Path:
    """The first English help pages with a permalink, and their French and German versions (by permalink)."""
    if target.exists():
        return target
    by_permalink: dict[str, dict[str, Path]] = {}
    for lang in ("en", "fr", "de"):
        for path in sorted((OBSIDIAN_HELP / lang).rglob("*.md")):
            head = path.read_text(encoding="utf-8", errors="replace")[:600]
            for line in head.splitlines():
                if line.startswith("permalink:"):
                    by_permalink.setdefault(line.split(":", 1)[1].strip(), {})[lang] = path
                    break
    chosen = [versions for _, versions in sorted(by_permalink.items()) if "en" in versions][:40]
    for versions in chosen:
        for path in versions.values():
            out = target / path.relative_to(OBSIDIAN_HELP)
            out.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, out)
    return target


@contextmanager
def opened(root: Path, index: Path, embeddings: str = "none", **env: str) -> Iterator[Any]:
    from mcp_docs.library import Library
    from mcp_docs.settings import Settings
    from mcp_docs.tools import DocsTools

    environ = {"MCP_DOCS_EMBEDDINGS_MODEL": MINILM, **env}
    library = Library(Settings.load(root, index, embeddings=embeddings, environ=environ))
    try:
        library.sync()
        yield library, DocsTools(library)
    finally:
        library.close()


def embed(library: Any, chunks: int | None = None) -> None:
    """Fill the vectors in the foreground; `chunks`: stop once that many section chunks have theirs."""
    from mcp_docs.index import embedding_worker

    if chunks is None:
        library.embedding.build()
        return
    embedding_worker.EMBED_BATCH = 1

    def interrupt(done: int, total: int) -> None:
        if library.vectors.embedded_chunks() >= chunks and done:
            raise KeyboardInterrupt

    with suppress(KeyboardInterrupt):  # the interrupt above: what was embedded so far is committed
        library.embedding.build(progress=interrupt)


def run(tools: Any, scenario: str, searches: list[dict[str, Any]], modes: tuple[str, ...]) -> Iterator[str]:
    for args in searches:
        for mode in (args["mode"],) if "mode" in args else modes:
            call = {**args, "mode": mode}
            try:
                answer = tools.search_documents(**call).model_dump_json()
            except Exception as exc:  # an error is an answer too, and must stay the same
                answer = json.dumps({"error": type(exc).__name__, "message": str(exc)})
            yield json.dumps({"scenario": scenario, "args": call}, ensure_ascii=False) + "\t" + answer


def dump(out: Path, cache: Path) -> int:
    cache.mkdir(parents=True, exist_ok=True)
    lines: list[str] = []
    with opened(SHARED_BENCH / "otel-docs", cache / "otel-keyword") as (_, tools):
        lines += run(tools, "otel, embeddings off", otel_queries(), ("keyword",))
    fixture = cache / "fixture-vault"
    if not fixture.exists():
        shutil.copytree(FIXTURE_VAULT, fixture, symlinks=True)
    built = cache / "fixture-minilm"
    fresh = not built.exists()
    with opened(fixture, built, embeddings="local") as (library, tools):
        if fresh:
            embed(library)
        lines += run(tools, "fixture, MiniLM", FIXTURE_QUERIES, ("hybrid", "semantic", "keyword"))
    sys.path.insert(0, str(REPO))
    from tests.rerank.fake_server import FAKE_KEY, RerankServer

    with RerankServer("tei", key=FAKE_KEY) as reranker:
        env = {"RERANK_KEY": FAKE_KEY, "MCP_DOCS_RERANK_API_KEY_ENV": "RERANK_KEY", "MCP_DOCS_RERANK_URL": reranker.url}
        with opened(fixture, built, embeddings="local", **env) as (_, tools):
            lines += run(tools, "fixture, MiniLM, reranked", FIXTURE_QUERIES[:6], ("hybrid", "keyword"))
    part = cache / "fixture-part-way"
    fresh = not part.exists()
    with opened(fixture, part, embeddings="local") as (library, tools):
        if fresh:
            embed(library, chunks=4)
        lines += run(tools, "fixture, MiniLM part-way", FIXTURE_QUERIES, ("hybrid", "semantic"))
    vault = multilingual_vault(cache / "obsidian-en-fr-de")
    built = cache / "obsidian-minilm"
    fresh = not built.exists()
    with opened(vault, built, embeddings="local") as (library, tools):
        if fresh:
            embed(library)
        lines += run(tools, "obsidian en/fr/de, MiniLM", MULTILINGUAL_QUERIES, ("hybrid", "semantic", "keyword"))
    concepts = otel_concepts(cache / "otel-concepts")
    built = cache / "otel-concepts-minilm"
    fresh = not built.exists()
    with opened(concepts, built, embeddings="local") as (library, tools):
        if fresh:
            embed(library)
        lines += run(tools, "otel concepts en/fr, MiniLM", concept_queries(), ("hybrid", "semantic"))
    empty = cache / "empty"
    empty.mkdir(exist_ok=True)
    with opened(empty, cache / "empty-index") as (_, tools):
        lines += run(tools, "empty folder", [{"query": "anything"}], ("keyword", "hybrid"))
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return len(lines)


def compare(before: Path, after: Path) -> int:
    a = before.read_text(encoding="utf-8").splitlines()
    b = after.read_text(encoding="utf-8").splitlines()
    differ = [i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y]
    for i in differ[:10]:
        print(
            f"differs: {a[i].split(chr(9))[0]}\n  before {a[i].split(chr(9))[1][:400]}\n  after  {b[i].split(chr(9))[1][:400]}"
        )
    if len(a) != len(b):
        print(f"{len(a)} searches before, {len(b)} after")
    print(f"{len(a) - len(differ)} of {len(a)} searches identical, {len(differ)} differ")
    return 1 if differ or len(a) != len(b) else 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    d = sub.add_parser("dump")
    d.add_argument("out", type=Path)
    d.add_argument("--cache", type=Path, default=CACHE / "search-parity")
    c = sub.add_parser("compare")
    c.add_argument("before", type=Path)
    c.add_argument("after", type=Path)
    args = parser.parse_args()
    if args.command == "dump":
        print(f"{dump(args.out, args.cache)} searches written to {args.out}")
    else:
        sys.exit(compare(args.before, args.after))


if __name__ == "__main__":
    main()
