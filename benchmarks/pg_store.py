"""SciFact on the PostgreSQL store vs the embedded store (Tantivy + sqlite-vec), side by side in one run.

    python -m benchmarks.pg_store [--database-url URL] [--steps keyword,variants,hybrid]
    python -m benchmarks.pg_store --steps synthetic --synthetic 10000,100000   # cold keyword indexing, both stores
    python -m benchmarks.pg_store --steps throughput                           # 16 clients, 1 embedded vs 2 PG
    python -m benchmarks.pg_store --steps profile     # where a keyword search's time goes: statements, backend CPU
    python -m benchmarks.pg_store --steps languages --vectors-from OBSIDIAN_E5_INDEX   # 36 languages, per search

Without --database-url, a PostgreSQL with pgvector is started from the `pgserver` package in the bench cache.
keyword: cold index time (embeddings off) and the 300 test queries through `Library.search` on both stores
(nDCG@10, recall, query p50/p95). variants: PostgreSQL's ranking choices (ts_rank vs ts_rank_cd, length
normalisation, OR vs AND). hybrid: both stores with the local MiniLM vectors (index time includes embedding).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import time
import warnings
from pathlib import Path
from typing import Any

from .common import CACHE, SHARED_BENCH, Timer, run_script, table, write_results
from .scifact import evaluate, load_beir, write_markdown

MD = CACHE / "scifact-md"


def start_postgres() -> Any:
    """A PostgreSQL with pgvector in the bench cache (stopped at the end of the run)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import pgserver
    base = CACHE / "pg"
    base.mkdir(parents=True, exist_ok=True)
    base.chmod(0o755)  # PostgreSQL runs as the user `pgserver`, which must reach its data folder
    return pgserver.get_server(base / "data", cleanup_mode="stop")


def fresh_database(admin: str, name: str) -> str:
    import psycopg

    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f"drop database if exists {name}")
        conn.execute(f"create database {name}")
    return _database_url(admin, name)


def kept_database(admin: str, name: str) -> tuple[str, bool]:
    """The database `name` on the server at `admin`, created when missing: (its URL, whether it was created)."""
    import psycopg

    with psycopg.connect(admin, autocommit=True) as conn:
        created = conn.execute("select 1 from pg_database where datname = %s", (name,)).fetchone() is None
        if created:
            conn.execute(f"create database {name}")
    return _database_url(admin, name), created


def _database_url(admin: str, name: str) -> str:
    return (
        admin.replace("/postgres?", f"/{name}?", 1) if "/postgres?" in admin else admin.rsplit("/", 1)[0] + f"/{name}"
    )


def seed_vectors(url: str, vectors: Path) -> int:
    """Copy an embedded store's vectors into the PostgreSQL chunks with the same text (by chunk hash): the same
    model on the same text gives the same vector, so the embedding work is not done twice on a busy machine."""
    import apsw
    import numpy as np
    import psycopg
    import sqlite_vec

    from mcp_docs.store.postgres.database import Database
    from mcp_docs.store.postgres.sync import vector_text

    conn = apsw.Connection(str(vectors), flags=apsw.SQLITE_OPEN_READONLY)
    conn.enable_load_extension(True)
    conn.load_extension(sqlite_vec.loadable_path())
    rows = conn.execute("select c.hash, v.embedding from chunks c join vec v on v.chunk_id = c.id").fetchall()
    # the documents' own units too, when the index has them (their vectors are the same model's on the same text)
    units = (
        conn.execute("select name from sqlite_master where name = 'doc_vec'").fetchall()
        and conn.execute("select u.hash, v.embedding from doc_chunks u join doc_vec v on v.chunk_id = u.id").fetchall()
    )
    conn.close()
    by_hash = {h: vector_text(np.frombuffer(blob, dtype=np.float32)) for h, blob in [*rows, *(units or [])]}
    with psycopg.connect(url) as pg, pg.cursor() as cur:
        for table in ("mcp_docs_chunks", "mcp_docs_doc_chunks"):  # both have an index on `hash`
            cur.executemany(
                f"update {table} set embedding = %s::vector where hash = %s and embedding is null",
                list((v, h) for h, v in by_hash.items()),
            )
    db = Database(url, read_only=False)
    db.set_dim(len(rows[0][1]) // 4)  # what the writer does after its first batch: record it, build the HNSW index
    db.close()
    return len(by_hash)


def pg_index(url: str, embeddings: str, root: Path = MD, embed: bool = True) -> dict[str, float]:
    """A cold `mcp-docs index --store postgres`: sync, then embedding when on."""
    from mcp_docs.library import open_library
    from mcp_docs.settings import Settings

    settings = Settings.load(root, store="postgres", database_url=url, embeddings=embeddings)
    with open_library(settings) as lib:
        with Timer() as t_sync:
            lib.sync()
        with Timer() as t_embed:
            done = lib.embed() if embed else 0
    return {"sync_s": round(t_sync.seconds, 2), "embed_s": round(t_embed.seconds, 2), "chunks_embedded": done}


def queries_through(lib: Any, queries: dict[str, str], mode: str) -> tuple[dict[str, list[str]], dict[str, float]]:
    run: dict[str, list[str]] = {}
    lat = []
    for qid, text in queries.items():
        t0 = time.perf_counter()
        res = lib.search(text, max_results=100, mode=mode)
        lat.append((time.perf_counter() - t0) * 1000)
        run[qid] = [r.id.removesuffix(".md") for r in res.results]
    lat.sort()
    return run, {"query_p50_ms": round(lat[len(lat) // 2], 2), "query_p95_ms": round(lat[int(len(lat) * 0.95)], 2)}


def sections_through(lib: Any, queries: dict[str, str]) -> tuple[dict[str, list[str]], dict[str, float]]:
    """The keyword side alone (no grouping, no snippets): documents in the order of their best section."""
    run: dict[str, list[str]] = {}
    lat = []
    for qid, text in queries.items():
        t0 = time.perf_counter()
        hits = lib.keyword_sections(text, 400)
        lat.append((time.perf_counter() - t0) * 1000)
        run[qid] = list(dict.fromkeys(s.doc_id.removesuffix(".md") for s, _ in hits))[:100]
    lat.sort()
    return run, {"query_p50_ms": round(lat[len(lat) // 2], 2), "query_p95_ms": round(lat[int(len(lat) * 0.95)], 2)}


def pg_reader(url: str, embeddings: str) -> Any:
    from mcp_docs.library import open_library
    from mcp_docs.settings import Settings

    return open_library(
        Settings.load(store="postgres", database_url=url, embeddings=embeddings, reader=True), read_only=True
    )


def languages_latency(admin: str, args: argparse.Namespace) -> dict[str, object]:
    """Per-search latency of semantic and hybrid search in a collection of many languages through a PostgreSQL
    reader: the Obsidian help vault (--obsidian, 36 languages) in the database `obsidian_local`, synced once with the
    e5 vectors of an embedded index of it copied in (--vectors-from, whose every chunk is embedded), then opened by
    this version's writer (its schema; nothing to embed). The multilingual questions once to warm up, then --rounds
    passes timed, per mode: p50 and mean ms per search."""
    import json

    from .common import DATA_DIR

    url, created = kept_database(admin, "obsidian_local")
    if created:
        if args.vectors_from is None:
            raise SystemExit("--steps languages needs --vectors-from: a fully embedded (e5) index of the vault")
        pg_index(url, "local", args.obsidian, embed=False)
        seed_vectors(url, args.vectors_from / "vectors.sqlite")
    pg_index(url, "local", args.obsidian)
    lines = (DATA_DIR / "obsidian_multilingual.jsonl").read_text().splitlines()
    questions = [json.loads(line)["question"] for line in lines if line.strip()]
    payload: dict[str, object] = {"questions": len(questions), "rounds": args.rounds}
    with pg_reader(url, "local") as lib:
        for mode in ("semantic", "hybrid"):
            for q in questions:
                lib.search(q, mode=mode)
            spent = []
            for _ in range(args.rounds):
                for q in questions:
                    start = time.perf_counter()
                    lib.search(q, mode=mode)
                    spent.append(1000 * (time.perf_counter() - start))
            spent.sort()
            payload[mode] = {"p50_ms": round(spent[len(spent) // 2], 1), "mean_ms": round(sum(spent) / len(spent), 1)}
            print(f"{mode}: {payload[mode]}", flush=True)
    write_results("pg_languages", payload)
    return payload


def embedded_library(index_dir: Path, embeddings: str, fresh: bool) -> tuple[Any, dict[str, float]]:
    import shutil

    from mcp_docs.library import Library
    from mcp_docs.settings import Settings

    if fresh and index_dir.exists():
        shutil.rmtree(index_dir)
    lib = Library(Settings.load(MD, index_dir, embeddings=embeddings))
    with Timer() as t_sync:
        lib.sync()
    spent = {"sync_s": round(t_sync.seconds, 2), "embed_s": 0.0}
    if embeddings != "none":
        assert lib.embedding is not None
        with Timer() as t_embed:
            lib.embedding.build()
        spent["embed_s"] = round(t_embed.seconds, 2)
    return lib, spent


def main(argv: list[str] | None = None) -> dict[str, object]:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=SHARED_BENCH / "scifact")
    ap.add_argument("--database-url", default=os.environ.get("MCP_DOCS_DATABASE_URL"))
    ap.add_argument("--steps", default="keyword,variants,hybrid")
    ap.add_argument("--otel", type=Path, default=SHARED_BENCH / "otel-docs" / "en", help="docs for the throughput step")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--vectors-from", type=Path, help="an embedded SciFact index whose vectors both stores reuse")
    ap.add_argument("--reuse", action="store_true", help="keep indexes built by an earlier run (no index times)")
    ap.add_argument("--synthetic", default="10000", help="vault sizes for the synthetic step, e.g. 10000,100000")
    ap.add_argument("--obsidian", type=Path, default=Path("/work/data/obsidian-help"), help="for the languages step")
    args = ap.parse_args(argv)
    steps = {s.strip() for s in args.steps.split(",")}
    if steps == {"languages"}:  # the Obsidian help vault alone, not SciFact
        server = None if args.database_url else start_postgres()
        try:
            return languages_latency(args.database_url or str(server.get_uri()), args)
        finally:
            if server is not None:
                server.cleanup()
    corpus, queries, qrels = load_beir(args.data)
    write_markdown(corpus, MD)
    server = None if args.database_url else start_postgres()
    try:
        return run_steps(args, steps, args.database_url or str(server.get_uri()), corpus, queries, qrels)
    finally:
        if server is not None:
            server.cleanup()


def run_steps(
    args: argparse.Namespace,
    steps: set[str],
    admin: str,
    corpus: list[dict],
    queries: dict[str, str],
    qrels: dict[str, dict[str, int]],
) -> dict[str, object]:
    payload: dict[str, Any] = {"documents": len(corpus), "queries": len(queries), "systems": {}, "variants": []}
    rows: list[list[object]] = []

    def record(name: str, mode: str, run: dict[str, list[str]], times: dict[str, float]) -> None:
        metrics = evaluate(run, qrels)
        payload["systems"][f"{name} {mode}"] = {**metrics, **times}
        print(f"{name} {mode}: {metrics} {times}", flush=True)
        rows.append(
            [
                name,
                mode,
                metrics["ndcg@10"],
                metrics["recall@100"],
                times.get("index_s", "-"),
                times["query_p50_ms"],
                times["query_p95_ms"],
            ]
        )

    if "keyword" in steps or "variants" in steps:
        if "keyword" in steps:
            lib, spent = embedded_library(CACHE / "pg-bench-embedded-none", "none", fresh=not args.reuse)
            run, times = queries_through(lib, queries, "keyword")
            record("embedded (Tantivy BM25)", "keyword", run, {"index_s": spent["sync_s"], **times})
            if "variants" in steps:
                run, times = sections_through(lib, queries)
                payload["variants"].append(
                    {"rank": "Tantivy BM25", "normalization": "-", "query": "OR"} | {**evaluate(run, qrels), **times}
                )
            lib.close()
        url = admin.replace("/postgres?", "/scifact_kw?", 1) if args.reuse else fresh_database(admin, "scifact_kw")
        spent = pg_index(url, "none") if not args.reuse else {"sync_s": 0.0}
        with pg_reader(url, "none") as reader:
            if "keyword" in steps:
                run, times = queries_through(reader, queries, "keyword")
                record("PostgreSQL (BM25 in SQL)", "keyword", run, {"index_s": spent["sync_s"], **times})
            if "variants" in steps:
                from mcp_docs.store.postgres import store as pgl

                default = (
                    pgl.RANK_FUNCTION,
                    pgl.RANK_NORMALIZATION,
                    pgl.QUERY_OPERATOR,
                    pgl.IDF_WEIGHTING,
                    pgl.LENGTH_K,
                    pgl.HEAD_TF,
                )
                for function, norm, operator, idf, length_k, head_tf in [
                    ("ts_rank_cd", 0, " or ", False, None, 1.0),
                    ("ts_rank_cd", 1, " or ", False, None, 1.0),
                    ("ts_rank", 1, " or ", False, None, 1.0),
                    ("ts_rank_cd", 1, " ", False, None, 1.0),
                    ("ts_rank_cd", 1, " or ", True, None, 1.0),
                    ("ts_rank", 0, " or ", True, None, 1.0),
                    ("ts_rank", 1, " or ", True, None, 1.0),
                    ("ts_rank", 0, " or ", True, 1.2, 1.0),  # BM25's length normalisation over ts_rank
                    ("bm25", 0, " or ", True, 1.2, 1.0),  # BM25 in SQL (k1 1.2, b 0.75), head counted once
                    ("bm25", 0, " or ", True, 1.2, 2.0),  # head counted twice (kept)
                    ("bm25", 0, " or ", True, 1.2, 3.0),
                ]:
                    pgl.RANK_FUNCTION, pgl.RANK_NORMALIZATION = function, norm
                    pgl.QUERY_OPERATOR, pgl.IDF_WEIGHTING = operator, idf
                    pgl.LENGTH_K, pgl.HEAD_TF = length_k, head_tf
                    run, times = sections_through(reader, queries)
                    metrics = evaluate(run, qrels)
                    query = "per word, IDF-weighted" if idf else ("OR" if "or" in operator else "AND")
                    if length_k is not None:
                        query += f", k1 {length_k} b {pgl.LENGTH_B}, head x{head_tf:g}"
                    payload["variants"].append(
                        {"rank": function, "normalization": norm, "query": query} | {**metrics, **times}
                    )
                (
                    pgl.RANK_FUNCTION,
                    pgl.RANK_NORMALIZATION,
                    pgl.QUERY_OPERATOR,
                    pgl.IDF_WEIGHTING,
                    pgl.LENGTH_K,
                    pgl.HEAD_TF,
                ) = default
                table(
                    ["rank", "norm", "query", "nDCG@10", "R@100", "empty", "p50 ms"],
                    [
                        [
                            v["rank"],
                            v["normalization"],
                            v["query"],
                            v["ndcg@10"],
                            v["recall@100"],
                            v["empty_queries"],
                            v["query_p50_ms"],
                        ]
                        for v in payload["variants"]
                    ],
                    title="PostgreSQL keyword ranking variants (SciFact)",
                )

    if "hybrid" in steps:
        vec_index = CACHE / "pg-bench-embedded-local"
        if args.vectors_from and "embedded" in steps:  # an embedded SciFact index (same model, same chunk texts)
            import shutil

            if vec_index.exists():
                shutil.rmtree(vec_index)
            shutil.copytree(args.vectors_from, vec_index)
        if "embedded" in steps or not args.vectors_from:
            lib, spent = embedded_library(vec_index, "local", fresh=not args.reuse and not args.vectors_from)
            for mode in ("semantic", "hybrid"):
                run, times = queries_through(lib, queries, mode)
                record(
                    "embedded (Tantivy + sqlite-vec)",
                    mode,
                    run,
                    {"index_s": spent["sync_s"] + spent["embed_s"], **times},
                )
            lib.close()
            payload["embedded_build"] = spent
        url = admin.replace("/postgres?", "/scifact_vec?", 1) if args.reuse else fresh_database(admin, "scifact_vec")
        if args.reuse:
            built = {"sync_s": 0.0, "embed_s": 0.0}
        elif args.vectors_from:
            built = pg_index(url, "local", embed=False)
            seeded = seed_vectors(url, args.vectors_from / "vectors.sqlite")
            rest = pg_index(url, "local")  # an incremental run: nothing to sync, embeds what was not seeded
            built |= {"embed_s": rest["embed_s"], "chunks_embedded": rest["chunks_embedded"], "seeded_chunks": seeded}
        else:
            built = pg_index(url, "local")
        payload["pg_build"] = built
        print(f"PostgreSQL build: {built}", flush=True)
        with pg_reader(url, "local") as reader:
            for mode in ("semantic", "hybrid"):
                run, times = queries_through(reader, queries, mode)
                record(
                    "PostgreSQL (pgvector HNSW)", mode, run, {"index_s": built["sync_s"] + built["embed_s"], **times}
                )

    if "throughput" in steps:
        payload["throughput"] = throughput(admin, args)

    if "profile" in steps:
        payload["profile"] = profile(admin, args)

    if "synthetic" in steps:
        payload["synthetic"] = synthetic(admin, args)

    table(
        ["store", "mode", "nDCG@10", "R@100", "index s", "p50 ms", "p95 ms"],
        rows,
        title=f"SciFact test ({len(queries)} queries), PostgreSQL vs embedded",
    )
    write_results("pg_store", payload)
    return payload


def profile(admin: str, args: argparse.Namespace) -> dict[str, Any]:
    """Where a keyword search's time goes (the OTel questions, `max_results` 5, through a reader in this process):
    milliseconds per search in `Library.search` and in each kind of statement, statements per search, and the
    database server's CPU per ranking statement (its backend's /proc ticks; a local server only)."""
    import json
    from collections import defaultdict

    import psycopg

    from .http_throughput import QUESTIONS

    url = fresh_database(admin, "otel_profile")
    pg_index(url, "none", args.otel)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("vacuum analyze")
    questions = [json.loads(line)["question"] for line in QUESTIONS.read_text().splitlines() if line.strip()]
    with pg_reader(url, "none") as lib:
        db = lib.store.db
        rows = db.rows
        spent: dict[str, list[float]] = defaultdict(list)

        def timed(sql: str, params: Any = ()) -> Any:
            start = time.perf_counter()
            try:
                return rows(sql, params)
            finally:
                spent[" ".join(sql.split())[:70]].append(time.perf_counter() - start)

        db.rows = timed
        for question in questions:  # warm: connection, dictionaries, prepared statements
            lib.search(question, mode="keyword")
        spent.clear()
        pid = int(rows("select pg_backend_pid()")[0][0])
        ticks = _backend_ticks(pid)
        started = time.perf_counter()
        for question in questions:
            lib.search(question, mode="keyword")
        wall = time.perf_counter() - started
        cpu = _backend_ticks(pid) - ticks
    n = len(questions)
    result = {
        "search_ms": round(1000 * wall / n, 2),
        "statements_per_search": round(sum(len(v) for v in spent.values()) / n, 2),
        "statement_ms_per_search": {k: round(1000 * sum(v) / n, 2) for k, v in spent.items()},
        "backend_cpu_ms_per_search": round(10 * cpu / n, 2) if cpu >= 0 else None,
    }
    print(json.dumps(result, indent=1), flush=True)
    return result


def _backend_ticks(pid: int) -> int:
    """User + system clock ticks (1/100 s) of a local PostgreSQL backend; -1 when it cannot be read."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return -1
    return int(fields[11]) + int(fields[12])


def synthetic(admin: str, args: argparse.Namespace) -> list[dict[str, Any]]:
    """Cold keyword indexing (embeddings off) of synthetic vaults (benchmarks.synth): the embedded store vs
    `index --store postgres`, alternating (embedded, postgres, embedded, …), `--rounds` times for vaults under
    50,000 files, once above. The embedded sync parses in worker processes; the PostgreSQL writer in its own
    process, with the database server working beside it (both on the same host here)."""
    import shutil

    from mcp_docs.library import Library
    from mcp_docs.settings import Settings

    from .indexing import prepare_corpus

    out = []
    for n in [int(x) for x in args.synthetic.split(",") if x]:
        root = prepare_corpus(f"synth-{n}")
        for _ in range(args.rounds if n < 50_000 else 1):
            index_dir = CACHE / f"pg-bench-synth-{n}-embedded"
            shutil.rmtree(index_dir, ignore_errors=True)
            load = os.getloadavg()[0]
            with Timer() as t_embedded, Library(Settings.load(root, index_dir, embeddings="none")) as lib:
                lib.sync()
            embedded_mb = sum(p.stat().st_size for p in index_dir.rglob("*") if p.is_file()) / 1e6
            url = fresh_database(admin, f"synth_{n}")
            spent = pg_index(url, "none", root, embed=False)
            pg_mb = _database_mb(url)
            row = {
                "files": n,
                "load_at_start": round(load, 1),
                "embedded_s": round(t_embedded.seconds, 1),
                "postgres_s": spent["sync_s"],
                "embedded_mb": round(embedded_mb),
                "postgres_mb": round(pg_mb),
                "load_at_end": round(os.getloadavg()[0], 1),
            }
            print(row, flush=True)
            out.append(row)
    return out


def _database_mb(url: str) -> float:
    import psycopg

    with psycopg.connect(url) as conn:
        row = conn.execute("select pg_database_size(current_database())").fetchone()
    return float(row[0]) / 1e6 if row else 0.0


def throughput(admin: str, args: argparse.Namespace) -> list[dict[str, Any]]:
    """16 concurrent clients (keyword searches, OpenTelemetry questions): one embedded server vs two stateless
    servers over one PostgreSQL database (8 clients each, every client in the load processes), rounds alternating."""
    import json
    import subprocess
    import sys

    from .http_sessions import free_port
    from .http_throughput import REPO, _env, _serve

    url = fresh_database(admin, "otel_tp")
    pg_index(url, "none", args.otel)
    index = CACHE / "pg-bench-otel-index"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "mcp_docs",
            "index",
            "--root",
            str(args.otel),
            "--index-dir",
            str(index),
            "--embeddings",
            "none",
        ],
        env=_env(REPO),
        check=True,
        capture_output=True,
    )

    def load(urls: list[str], clients: int) -> dict[str, Any]:
        procs = [
            subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "benchmarks.http_throughput",
                    "load",
                    u,
                    "--clients",
                    str(clients),
                    "--seconds",
                    "15",
                ],
                env=_env(REPO),
                stdout=subprocess.PIPE,
                text=True,
            )
            for u in urls
        ]
        parts = [json.loads(p.communicate()[0]) for p in procs]
        return {
            "per_second": round(sum(p["per_second"] for p in parts), 1),
            "p50_ms": max(p["p50_ms"] for p in parts),
            "p95_ms": max(p["p95_ms"] for p in parts),
            "errors": sum(p["errors"] for p in parts),
        }

    rounds = []
    for _ in range(args.rounds):
        proc, embedded_url = _serve(REPO, args.otel, index, [], 1)
        try:
            time.sleep(2)
            embedded = load([embedded_url], 16)
        finally:
            proc.terminate()
            proc.wait(30)
        env = _env(REPO) | {"MCP_DOCS_DATABASE_URL": url, "XDG_CACHE_HOME": str(CACHE / "pg-reader-cache")}
        ports = [free_port(), free_port()]
        servers = [
            subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "mcp_docs",
                    "serve",
                    "--store",
                    "postgres",
                    "--stateless",
                    "--transport",
                    "http",
                    "--port",
                    str(port),
                    "--embeddings",
                    "none",
                ],
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            for port in ports
        ]
        try:
            import httpx2

            for port in ports:
                for _ in range(600):
                    with contextlib.suppress(httpx2.HTTPError):
                        if httpx2.get(f"http://127.0.0.1:{port}/health", timeout=2).status_code == 200:
                            break
                    time.sleep(0.2)
            time.sleep(2)
            pg = load([f"http://127.0.0.1:{p}/mcp" for p in ports], 8)
        finally:
            for server in servers:
                server.terminate()
                server.wait(30)
        rounds.append({"embedded_1_server": embedded, "postgres_2_servers": pg})
        print(json.dumps(rounds[-1]), flush=True)
    return rounds


if __name__ == "__main__":
    run_script(main)
