"""Crash safety (requirement 10): `kill -9` at random points of indexing and of embedding.

Each trial edits, adds and deletes files of one root, starts indexing in a child process (a new process group,
so worker processes die with it), kills the whole group with SIGKILL after a random delay, then checks that:

- the index opens without manual repair (no exception, SQLite `integrity_check` is ok, the writer lock left by
  the killed process does not block the next writer);
- it holds a committed state: every catalog entry is the old or the new version of its file, never anything
  else, and every catalogued document is searchable;
- the next sync completes it: the catalog matches the disk exactly, no section is duplicated.

Embedding trials (when `mcp_docs/index/embedding_worker.py` exists) kill `EmbeddingWorker.build()` with a deterministic fake
embedder, then check the vector store reopens, passes `integrity_check`, and the next build leaves nothing pending.

Run: `python -m tests.security.crash_trials --trials 30` (exit 1 on any failed trial). The pytest suite runs a
few trials of each kind (tests/security/test_crash.py).
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
GREEK_LETTERS = [
    "alpha",
    "beta",
    "gamma",
    "delta",
    "epsilon",
    "zeta",
    "eta",
    "theta",
    "iota",
    "kappa",
    "lambda",
    "mu",
    "nu",
    "xi",
    "omicron",
    "pi",
    "rho",
    "sigma",
    "tau",
    "upsilon",
    "phi",
    "chi",
    "psi",
    "omega",
]
WORDS = [
    *GREEK_LETTERS,
    "collector",
    "pipeline",
    "exporter",
    "receiver",
    "sampling",
]


# -- the documents ----------------------------------------------------------------------------------


def doc_text(i: int, version: int, rng: random.Random) -> str:
    body = " ".join(rng.choice(WORDS) for _ in range(rng.randrange(20, 120)))
    sections = "".join(f"\n## Part {k}\n\n{body} crashcommon\n" for k in range(rng.randrange(1, 5)))
    return f"# Doc {i}\n\nuniq{i}x v{version} crashcommon {body}\n{sections}"


def digest(text: str) -> str:
    # the catalog's content hash (blake2b-128 of the bytes)
    return hashlib.blake2b(text.encode(), digest_size=16).hexdigest()


@dataclass
class Vault:
    root: Path
    index: Path
    rng: random.Random
    next_id: int = 0
    version: int = 0

    def doc_path(self, i: int) -> Path:
        return self.root / f"f{i % 7}" / f"doc{i:05}.md"

    def state(self) -> dict[str, str]:
        out = {}
        for p in self.root.rglob("*.md"):
            out[p.relative_to(self.root).as_posix()] = digest(p.read_text())
        return out

    def create(self, n: int) -> None:
        for _ in range(n):
            self.write(self.next_id)
            self.next_id += 1

    def write(self, i: int) -> None:
        path = self.doc_path(i)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(doc_text(i, self.version, self.rng))

    def mutate(self) -> None:
        """Edit, add and delete a random share of the files (sometimes all of them)."""
        self.version += 1
        existing = sorted(self.root.rglob("*.md"))
        share = self.rng.choice([0.1, 0.3, 0.6, 1.0])
        for p in existing:
            roll = self.rng.random()
            if roll < share * 0.1:
                p.unlink()
            elif roll < share:
                i = int(p.stem[3:])
                self.write(i)
        self.create(self.rng.randrange(0, 60))


# -- the child processes ----------------------------------------------------------------------------

CHILD_INDEX = """
import os
import sys
import mcp_docs.store.embedded.sync as sync
sync.BATCH_DOCUMENTS = int(sys.argv[3])  # many commits, so kills land between and inside them
from mcp_docs.library import Library
from mcp_docs.settings import Settings
workers = {k: v for k, v in os.environ.items() if k == "MCP_DOCS_PARSE_WORKERS"}  # the only setting a trial sets
lib = Library(Settings.load(sys.argv[1], sys.argv[2], embeddings="none", environ=workers))
print("OPEN", flush=True)
lib.sync()
print("DONE", flush=True)
"""

CHILD_EMBED = """
import sys
from tests.security.crash_trials import open_vectors
from mcp_docs.library import Library
from mcp_docs.settings import Settings
lib = Library(Settings.load(sys.argv[1], sys.argv[2], embeddings="none", environ={}))
lib.sync()
worker = open_vectors(lib)
print("OPEN", flush=True)
worker.build()
print("DONE", flush=True)
"""


class FakeEmbedder:
    """Deterministic, dependency-free vectors (hash of the text), a little slow so kills land mid-build."""

    kind = "fake"
    model_id = "fake-hash-32"
    dim = 32
    max_chars = 600
    batch_size = 16

    def load(self) -> None:
        pass

    def close(self) -> None:
        pass

    def _one(self, text: str) -> Any:
        import numpy as np

        raw = np.frombuffer(hashlib.sha256(text.encode()).digest(), dtype=np.uint8)[: self.dim].astype(np.float32) + 1.0
        return raw / np.linalg.norm(raw)

    def embed_passages(self, texts: Sequence[str]) -> Any:
        import numpy as np

        time.sleep(0.002 * len(texts))
        return np.stack([self._one(t) for t in texts])

    def embed_query(self, text: str) -> Any:
        return self._one(text)


def open_vectors(library: Any) -> Any:
    """An embedding worker over the library's vector store, with the fake embedder."""
    from mcp_docs.index.embedding_worker import EmbeddingWorker
    from mcp_docs.store.embedded.vector_store import VectorStore

    settings = library.settings
    store = VectorStore(settings.index_dir / "vectors.sqlite", library.catalog, FakeEmbedder())
    return EmbeddingWorker(store, library.jail, settings)


def vectors_available() -> bool:
    try:
        import mcp_docs.index.embedding_worker  # noqa: F401
    except Exception:
        return False
    return True


def _killpg(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError):  # the whole group already exited
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(30)


def run_child(
    code: str,
    vault: Vault,
    extra: list[str],
    kill_after: float | None,
    *,
    after_open: bool = True,
    timeout: float = 180,
) -> tuple[str, float, float]:
    """Run a child; with `kill_after`, SIGKILL its process group that many seconds after it opened the index
    (or after it started, with after_open=False). Returns what happened, the start-up and the work durations."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MCP_DOCS_")}
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    spawned = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-c", code, str(vault.root), str(vault.index), *extra],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    assert proc.stdout is not None
    opened = spawned
    try:
        if kill_after is not None and not after_open:
            time.sleep(kill_after)
            finished = proc.poll() is not None
            _killpg(proc)
            return ("finished before the kill" if finished else f"killed {kill_after:.2f}s after start"), 0.0, 0.0
        line = proc.stdout.readline()
        opened = time.perf_counter()
        if line.strip() != b"OPEN":
            proc.wait(30)
            raise AssertionError(f"child could not open the index (exit {proc.returncode})")
        if kill_after is None:
            rest = proc.stdout.read()
            proc.wait(timeout)
            if proc.returncode != 0 or b"DONE" not in rest:
                raise AssertionError(f"child failed (exit {proc.returncode})")
            return "completed", opened - spawned, time.perf_counter() - opened
        time.sleep(kill_after)
        finished = proc.poll() is not None
        _killpg(proc)
        return ("finished before the kill" if finished else f"killed {kill_after:.2f}s into the work"), 0.0, 0.0
    finally:
        if proc.poll() is None:
            _killpg(proc)
        proc.stdout.close()


# -- the checks ---------------------------------------------------------------------------------------


def integrity_ok(path: Path) -> None:
    if not path.exists():
        return
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=30)
    try:
        (result,) = conn.execute("pragma integrity_check").fetchone()
    finally:
        conn.close()
    assert result == "ok", f"{path.name}: {result}"


def check_index(vault: Vault, before: dict[str, str], after: dict[str, str]) -> str:
    from mcp_docs.library import Library
    from mcp_docs.settings import Settings

    integrity_ok(vault.index / "catalog.sqlite")
    lib = Library(Settings.load(vault.root, vault.index, embeddings="none", environ={}))  # opens: no manual repair
    try:
        fingerprints = lib.catalog.fingerprints()
        for doc_id, fp in fingerprints.items():
            assert fp.hash in (before.get(doc_id), after.get(doc_id)), f"{doc_id}: a hash of neither version"
        # A sample of the documents still on disk stays searchable. One deleted on disk stays catalogued only
        # while the full-text index still holds it too (a kill before its commit); a kill between the full-text
        # commit and the catalog's (seed 1795418377) is completed when the index is opened (store/embedded/sync.py,
        # recover_interrupted_batch). The next sync deletes what is left, which the checks below assert.
        present = [d for d in fingerprints if d in after]
        for doc_id in present[:: max(1, len(present) // 25)]:
            i = int(doc_id.rsplit("doc", 1)[1][:5])
            hits = [r.id for r in lib.search(f"uniq{i}x", 5, "keyword").results]
            assert doc_id in hits, f"{doc_id} is catalogued but not searchable"
        committed = len(fingerprints)
        report = lib.sync()  # the next sync completes what was interrupted (the stale writer lock does not block)
        fingerprints = lib.catalog.fingerprints()
        assert set(fingerprints) == set(after), "catalog differs from the disk after the next sync"
        assert all(fp.hash == after[d] for d, fp in fingerprints.items()), "stale hash after the next sync"
        assert lib.store.fulltext.num_sections() == lib.catalog.section_total(), "duplicated or missing sections"
        hits = lib.search("crashcommon", 20, "keyword").results
        assert len(hits) == min(20, len(after))
        return f"{committed} committed, next sync +{report.added} ~{report.updated} -{report.deleted}"
    finally:
        lib.close()


def check_vectors(vault: Vault) -> str:
    from mcp_docs.library import Library
    from mcp_docs.settings import Settings

    path = vault.index / "vectors.sqlite"
    integrity_ok(path)
    lib = Library(Settings.load(vault.root, vault.index, embeddings="none", environ={}))
    try:
        worker = open_vectors(lib)
        store = worker.store
        try:
            before = store.embedded_chunks()
            worker.build()
            assert store.pending() == 0, f"{store.pending()} still pending after a full build"
            total = store.embedded_chunks()
            chunks = int(store._conn().execute("select count(*) from chunks").fetchone()[0])
            vecs = int(store._conn().execute("select count(*) from vec").fetchone()[0])
            assert total == chunks == vecs, f"chunks {chunks}, embedded {total}, vectors {vecs}"
            docs = {d for (d,) in store._conn().execute("select doc_id from docs")}
            assert docs == set(lib.catalog.ids()), "vector store documents differ from the catalog"
            assert store.knn(FakeEmbedder().embed_query("uniq1x crashcommon"), 5), "no vector hit"
            return f"{before} embedded before the kill, {total} after the next build"
        finally:
            store.close()
    finally:
        lib.close()


# -- trials ---------------------------------------------------------------------------------------------


def run_trials(
    trials: int, seed: int, workdir: Path, *, docs: int = 500, embed: bool = True, log: Any = print
) -> list[str]:
    """Runs `trials` index trials (and as many embedding trials when possible); returns the failures."""
    rng = random.Random(seed)
    vault = Vault(workdir / "docs", workdir / "index", rng)
    vault.root.mkdir(parents=True)
    vault.create(docs)
    failures: list[str] = []
    before: dict[str, str] = {}
    # A first uninterrupted run tells how long a full index takes on this machine.
    _, startup, full = run_child(CHILD_INDEX, vault, ["40"], None)
    full = max(0.3, full)
    before = vault.state()
    log(f"full index of {docs} documents: {full:.2f}s (child start-up {startup:.2f}s)")
    with_vectors = embed and vectors_available()
    if embed and not with_vectors:
        log("embedding trials skipped: mcp_docs.index.embedding_worker is not importable")
    # Kill windows adapt: a run that finished before the kill shrinks its window, a killed one widens it.
    window = {"index": full, "embed": full * 2}
    for t in range(trials):
        kinds = ["index", "embed"] if with_vectors else ["index"]
        for kind in kinds:
            vault.mutate()
            after = vault.state()
            early = rng.random() < 0.1  # sometimes while the child is still opening the index
            kill_at = rng.uniform(0.0, startup if early else window[kind])
            try:
                if kind == "index":
                    what, _, _ = run_child(
                        CHILD_INDEX, vault, [str(rng.choice([10, 40, 200, 2000]))], kill_at, after_open=not early
                    )
                    result = check_index(vault, before, after)
                else:
                    what, _, _ = run_child(CHILD_EMBED, vault, [], kill_at, after_open=not early)
                    integrity_ok(vault.index / "vectors.sqlite")
                    check_index(vault, before, after)  # the child syncs first: the kill may land there too
                    result = check_vectors(vault)
                if not early:
                    window[kind] *= 0.6 if what.startswith("finished") else 1.15
                log(f"trial {t + 1:>3} {kind:5} {what}: ok ({result})")
            except Exception as exc:
                failures.append(f"trial {t + 1} {kind} (seed {seed}): {type(exc).__name__}: {exc}")
                log(f"trial {t + 1:>3} {kind:5}: FAILED {type(exc).__name__}: {exc}")
                # resynchronise so the following trials start from a known state
                try:
                    shutil.rmtree(vault.index, ignore_errors=True)
                    run_child(CHILD_INDEX, vault, ["2000"], None)
                except Exception:
                    pass
            before = after
    return failures


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=30)
    parser.add_argument("--seed", type=int, default=int(time.time()))
    parser.add_argument("--docs", type=int, default=500)
    parser.add_argument("--no-embed", action="store_true", help="index trials only")
    parser.add_argument("--keep", action="store_true", help="keep the work folder")
    args = parser.parse_args(argv)
    workdir = Path(tempfile.mkdtemp(prefix="mcp-docs-crash-"))
    print(f"seed {args.seed}, work folder {workdir}")
    try:
        failures = run_trials(args.trials, args.seed, workdir, docs=args.docs, embed=not args.no_embed)
    finally:
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)
    print(f"{len(failures)} failed trial(s)" if failures else "all trials passed")
    for f in failures:
        print("  " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
