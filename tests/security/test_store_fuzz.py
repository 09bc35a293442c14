"""Fuzzing (hypothesis) of what enters both stores (issue 26): NULs, other control characters, lone-surrogate and
line-separator escapes in front matter titles, tags, aliases and keys, in headings and file names, and in every
tool argument. The same files go into the embedded store and a real PostgreSQL (tests/store/postgres/conftest.py); each
sync must succeed, the two stores must agree on what they hold, nothing they hold may keep a NUL, and a real MCP
client's calls on either store end in a result or a tool error that names the problem, never an internal error."""

from __future__ import annotations

import contextlib
import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from anyio.from_thread import BlockingPortal, start_blocking_portal
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp import Client
from mcp.shared.exceptions import MCPError

from mcp_docs.library import Library, open_library
from mcp_docs.mcp.server import build_server
from mcp_docs.settings import Settings
from mcp_docs.store.postgres.dsn import redact, scrub
from tests.store.postgres.conftest import new_database, pg_server  # noqa: F401  (the fixture, for this module too)

psycopg = pytest.importorskip(
    "psycopg", reason="psycopg is not installed: pip install -e '.[test]' to run the PostgreSQL store tests"
)

FUZZ = settings(
    max_examples=25,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)

CONTROLS = [chr(c) for c in range(0x20)] + ["\x7f", "\x85", "\u2028", "\u2029", "\ufeff", "\u200b", "\u202e"]
# How YAML's double-quoted scalars write them: the escapes put a NUL or a lone surrogate into a value that the
# file itself (a NUL byte makes it binary, invalid UTF-8 is refused) cannot hold.
ESCAPES = ["\\0", "\\x00", "\\u0000", "\\x01", "\\e", "\\x1b[31m", "\\x7f", "\\N", "\\L", "\\P", "\\udce9", "\\ud800"]

words = st.text(alphabet=st.sampled_from(["a", "b", "z", " ", "-", "é", "#"]), min_size=1, max_size=6)
hostile = st.lists(st.one_of(words, st.sampled_from(CONTROLS)), min_size=1, max_size=6).map("".join)
escaped = st.lists(st.one_of(words, st.sampled_from(ESCAPES)), min_size=1, max_size=6).map("".join)


def quoted(escaped_text: str) -> str:
    """A YAML double-quoted scalar: its escapes stay escapes, its quotes and stray backslashes are escaped."""
    return '"' + escaped_text.replace('"', '\\"') + '"'


@st.composite
def notes(draw: Any) -> tuple[str, str]:
    """(file name, text): hostile front matter values (escaped), a hostile heading (raw), a hostile file name."""
    title, tag, alias, key = (draw(escaped) for _ in range(4))
    heading = draw(hostile).replace("\n", " ").replace("\r", " ").replace("\x00", "")  # raw NUL: a binary file
    name = draw(hostile).replace("/", "_").replace("\x00", "_").strip(".") or "n"
    text = (
        f"---\ntitle: {quoted(title)}\ntags: [{quoted(tag)}, plain]\naliases: [{quoted(alias)}]\n"
        f"{quoted(key)}: {quoted(title)}\n---\n# {heading}\n\nThe okapi grazes. {heading}\n"
    )
    return f"{name[:60]}.md", text


tool_text = st.one_of(hostile, escaped, st.sampled_from(["\x00", "okapi\x00", "a\x00b", "\ud800", "plain"]))
CALLS = st.one_of(
    st.builds(
        lambda q, t: ("search_documents", {"query": q, "tags": t, "mode": "keyword"}),
        tool_text,
        st.lists(tool_text, max_size=3),
    ),
    st.builds(lambda q: ("search_documents", {"query": "okapi " + q, "mode": "keyword"}), tool_text),
    st.builds(lambda f: ("search_documents", {"query": "okapi", "folder": f, "mode": "keyword"}), tool_text),
    st.builds(lambda t, f: ("list_documents", {"tag": t, "folder": f}), tool_text, st.one_of(st.just(""), tool_text)),
    st.builds(lambda i: ("read_document", {"id": i}), tool_text),
    st.builds(lambda s: ("read_section", {"id": "good.md", "section": s}), tool_text),
)


class Stores:
    """One root, indexed into both stores by writers kept open; a reader library and an MCP client of each."""

    def __init__(self, base: Path, database: str, portal: BlockingPortal) -> None:
        self.root = base / "vault"
        self.root.mkdir()
        self.embedded = Library(Settings.load(self.root, base / "index", embeddings="none", environ={}))
        pg = Settings.load(root=self.root, store="postgres", database_url=database, embeddings="none", environ={})
        self.pg = open_library(pg)
        self.portal = portal
        self.clients: dict[str, Client] = {}
        self.exits = contextlib.ExitStack()

    def client(self, store: str) -> Client:
        if store not in self.clients:
            library = self.embedded if store == "embedded" else self.pg
            manager = Client(build_server(library), raise_exceptions=False)
            self.clients[store] = self.exits.enter_context(self.portal.wrap_async_context_manager(manager))
        return self.clients[store]

    def replace_files(self, files: list[tuple[str, str]]) -> None:
        for child in self.root.iterdir():
            shutil.rmtree(child) if child.is_dir() else child.unlink()
        (self.root / "good.md").write_text("# Good\n\nThe okapi is shy.\n\n## Habitat\n\nRainforest.\n")
        for name, text in files:
            (self.root / name).write_text(text, encoding="utf-8")


@pytest.fixture(scope="module")
def stores(pg_server: tuple[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stores]:
    with start_blocking_portal() as portal:
        both = Stores(tmp_path_factory.mktemp("storefuzz"), new_database(pg_server[0]), portal)
        try:
            yield both
        finally:
            both.exits.close()
            both.embedded.close()
            both.pg.close()


def _held(library: Library) -> dict[str, dict[str, Any]]:
    catalog = library.catalog
    out = {}
    for doc_id in catalog.ids():
        doc = catalog.document(doc_id)
        assert doc is not None
        out[doc_id] = {"title": doc.title, "tags": list(doc.tags), "aliases": list(doc.aliases), "fm": doc.front_matter}
    return out


def test_fuzz_hostile_characters_in_files_index_alike_in_both_stores(stores: Stores) -> None:
    @FUZZ
    @given(files=st.lists(notes(), min_size=1, max_size=4, unique_by=lambda f: f[0].lower()))
    def run(files: list[tuple[str, str]]) -> None:
        stores.replace_files(files)
        embedded_report = stores.embedded.sync()
        pg_report = stores.pg.sync()  # was: psycopg.DataError for a NUL, and the whole batch rolled back
        held = _held(stores.embedded)
        assert held == _held(stores.pg)
        assert "good.md" in held
        skipped = {p.path for p in embedded_report.skipped}
        assert skipped == {p.path for p in pg_report.skipped}
        on_disk = {p.name for p in stores.root.iterdir()}
        assert set(held) | skipped == on_disk
        dumped = json.dumps(held, ensure_ascii=False)
        assert "\\u0000" not in dumped and not any(0xD800 <= ord(ch) <= 0xDFFF for ch in dumped)
        for store in ("embedded", "pg"):
            library = stores.embedded if store == "embedded" else stores.pg
            assert [r.id for r in library.search("okapi shy", 5, "keyword").results][:1] == ["good.md"]

    run()


def test_fuzz_hostile_tool_arguments_on_both_stores(stores: Stores) -> None:
    stores.replace_files([("t.md", '---\ntitle: "T\\0itle"\ntags: ["wi\\0ld"]\n---\n# T\n\nokapi\n')])
    stores.embedded.sync()
    stores.pg.sync()

    @FUZZ
    @given(call=CALLS)
    def run(call: tuple[str, dict[str, Any]]) -> None:
        name, args = call
        for store in ("embedded", "pg"):
            try:
                result = stores.portal.call(stores.client(store).call_tool, name, args)
            except MCPError as exc:  # a protocol-level refusal (the SDK's schema check) is fine; a crash is not
                assert "Traceback" not in str(exc) and "nternal" not in str(exc), (store, name, args, str(exc))
                continue
            text = " ".join(getattr(c, "text", "") for c in result.content)
            assert "Traceback" not in text and "nternal error" not in text and "DataError" not in text, (
                store,
                name,
                args,
                text,
            )
            if result.is_error:
                assert 0 < len(text) < 4000
            strings = [v for v in _strings({k: v for k, v in args.items() if k != "mode"}) if v]
            # Only when every string given holds a NUL: with another bad argument beside it ('\\0' as a folder
            # is an absolute path), the refusal may rightly name that one.
            if (
                result.is_error
                and strings
                and all("\x00" in v for v in strings)
                and name in ("list_documents", "read_document")
            ):
                assert "NUL" in text or "not valid" in text or "must be" in text, (store, name, args, text)

    run()


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


# -- connection strings: no credential survives redaction, whatever it holds ------------------------------------

secret_text = st.text(min_size=1, max_size=30).map(lambda t: f"Zq{t}Zq")  # a marker no other part holds


@st.composite
def connection_strings(draw: Any) -> tuple[str, list[str]]:
    """A libpq connection string in one of its forms with one or two secrets (as a user would write them)."""
    first, second = draw(secret_text), draw(secret_text)
    hosts = draw(st.sampled_from(["db.example.org", "h1:5432,h2:5433", "[::1]:5432", ""]))
    key = draw(st.sampled_from(["password", "sslpassword", "passfile", "pass%77ord", "passwrod"]))
    kv_key = key.replace("%77", "w")
    quote_kv = first.replace("\\", "\\\\").replace("'", "\\'")
    form = draw(st.integers(0, 4))
    if form == 0:
        return f"postgresql://u:{quote(first, safe='')}@{hosts}/db", [first, quote(first, safe="")]
    if form == 1:
        return f"postgresql://u@{hosts}/db?sslmode=require&{key}={quote(first, safe='')}", [
            first,
            quote(first, safe=""),
        ]
    if form == 2:
        both = f"postgres://u:{quote(first, safe='')}@{hosts}/db?{key}={quote(second, safe='')}"
        return both, [first, second, quote(first, safe=""), quote(second, safe="")]
    if form == 3:
        return f"host=h dbname=db {kv_key} = '{quote_kv}' user=u", [first]
    plain = "".join(ch for ch in second if not ch.isspace() and ch not in "'\\") or "Zq1Zq"
    return f"host=h {kv_key}={plain} dbname=db", [plain]


@settings(max_examples=300, deadline=None, database=None)
@given(case=connection_strings())
def test_fuzz_no_credential_survives_redaction_or_scrubbing(case: tuple[str, list[str]]) -> None:
    dsn, secrets = case
    shown = redact(dsn)
    scrubbed = scrub(f'could not connect with "{dsn}": {" ".join(secrets)}', dsn)
    for secret in secrets:
        assert secret not in shown, (dsn, shown)
        assert secret not in scrubbed, (dsn, scrubbed)
