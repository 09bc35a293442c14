"""Property-based fuzzing (hypothesis) of every tool's arguments through real MCP clients (in-process, then the
stdio subprocess): no crash, no traceback text, results within their budgets and 2 s, and a marker file planted
outside the root (and in the sibling `vault_evil`) never appears; no file outside the root is opened."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from anyio.from_thread import BlockingPortal, start_blocking_portal
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp import Client
from mcp.shared.exceptions import MCPError

from mcp_docs.library import Library
from mcp_docs.mcp.server import build_server
from tests.conftest import OUTSIDE_MARKER
from tests.server_fixtures import stdio_params

from .common import TRAVERSALS, OpenAudit, assert_clean, forbidden_dirs, opened_outside

FUZZ = settings(
    max_examples=50,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)

ATOMS = [
    "..",
    ".",
    "",
    "guides",
    "setup",
    "install.md",
    "index.md",
    "leak.md",
    "dangling.md",
    "outside-folder",
    "up",
    "outside",
    "secret.md",
    "vault_evil",
    "evil.md",
    "evil-link.md",
    "evil-folder",
    "loop",
    "big50.md",
    "binary.md",
    "%2e%2e",
    "%252e%252e",
    "%2e",
    "..%2f",
    "%00",
    "\x00",
    "C:",
    "~",
    "$HOME",
    "\u2024\u2024",
    "..\\",
    "con",
    "*",
    "?",
]
SEPARATORS = ["/", "\\", "%2f", "%5c", "%252f", "//", "/./"]

json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=40),
)
json_values = st.recursive(
    json_scalars, lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=6), c, max_size=3), max_leaves=6
)


@st.composite
def paths(draw: Any) -> str:
    kind = draw(st.integers(0, 3))
    if kind == 0:
        return draw(st.sampled_from(TRAVERSALS))
    if kind == 1:
        return draw(st.text(max_size=200))
    parts = draw(st.lists(st.sampled_from(ATOMS), min_size=1, max_size=7))
    seps = draw(st.lists(st.sampled_from(SEPARATORS), min_size=len(parts), max_size=len(parts)))
    lead = draw(st.sampled_from(["", "/", "\\", "./", "%2f"]))
    return lead + "".join(p + s for p, s in zip(parts, seps, strict=False))[: -len(seps[-1]) or None]


def junk_or(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(strategy, strategy, strategy, json_values)


ints = st.one_of(st.integers(-5, 60_000), st.sampled_from([0, -1, 2**31, 2**63, 10**12, 10**30, -(2**63)]))
queries = st.one_of(
    st.text(max_size=300),
    st.text(alphabet="\"'()[]{}:*~^!+-&|\\/ AND OR NOT", max_size=200),
    st.builds(
        lambda w, n: (w + " ") * n,
        st.sampled_from(["collector", "setup", "secret must never be served", "sibling folder", "x"]),
        st.integers(1, 1500),
    ),
)
sections = st.one_of(
    st.text(max_size=200), st.sampled_from(["Setup", "Secret", "Evil", ">", " > ", "A > B > C", "#", "##"])
)

TOOL_ARGS: dict[str, st.SearchStrategy[dict[str, Any]]] = {
    "search_documents": st.fixed_dictionaries(
        {"query": junk_or(queries)},
        optional={
            "max_results": junk_or(ints),
            "mode": junk_or(st.sampled_from(["hybrid", "keyword", "semantic", "x"])),
            "folder": junk_or(st.one_of(st.none(), paths())),
            "tags": junk_or(st.one_of(st.none(), st.lists(st.text(max_size=30), max_size=30))),
        },
    ),
    "list_documents": st.fixed_dictionaries(
        {},
        optional={
            "folder": junk_or(paths()),
            "tag": junk_or(st.one_of(st.none(), st.text(max_size=50))),
            "limit": junk_or(ints),
            "cursor": junk_or(st.one_of(st.none(), st.text(max_size=120))),
        },
    ),
    "read_document": st.fixed_dictionaries(
        {"id": junk_or(paths())},
        optional={
            "mode": junk_or(st.sampled_from(["full", "outline", "summary", "raw"])),
            "max_chars": junk_or(ints),
            "offset": junk_or(ints),
        },
    ),
    "read_section": st.fixed_dictionaries(
        {"id": junk_or(paths()), "section": junk_or(sections)},
        optional={"max_chars": junk_or(ints), "offset": junk_or(ints), "include_subsections": junk_or(st.booleans())},
    ),
}
ANY_CALL = st.sampled_from(sorted(TOOL_ARGS)).flatmap(lambda name: TOOL_ARGS[name].map(lambda args: (name, args)))


def check(result: Any, name: str, args: dict[str, Any], elapsed: float) -> None:
    assert elapsed < 2.0, f"{name} took {elapsed:.2f}s"
    text = assert_clean(result, max_chars=230_000)
    if result.is_error:
        assert 0 < len(text) < 4000, text[:300]
        return
    s = result.structured_content
    assert s is not None
    if name == "search_documents":
        assert len(s["results"]) <= 20
        assert OUTSIDE_MARKER not in json.dumps(s["results"])
        assert all(len(d["sections"]) <= 3 for d in s["results"])
    elif name == "list_documents":
        assert len(s["documents"]) <= 200 and len(s["folders"]) <= 200
    else:
        assert len(s["content"]) <= 50_000
        assert s["estimated_tokens"] <= 25_000


@pytest.fixture(scope="module")
def inprocess(attack_library: Library) -> Iterator[tuple[BlockingPortal, Client]]:
    with start_blocking_portal() as portal:
        with portal.wrap_async_context_manager(Client(build_server(attack_library), raise_exceptions=False)) as client:
            yield portal, client


CALLS: list[str] = []


def call(portal: BlockingPortal, client: Client, name: str, args: dict[str, Any]) -> None:
    CALLS.append(name)
    started = time.perf_counter()
    try:
        result = portal.call(client.call_tool, name, args)
    except MCPError as exc:  # a protocol-level refusal is fine, a leak or a traceback is not
        assert OUTSIDE_MARKER not in str(exc) and "Traceback" not in str(exc)
        return
    check(result, name, args, time.perf_counter() - started)


@pytest.mark.parametrize("tool", sorted(TOOL_ARGS))
def test_fuzz_tool_arguments_in_process(tool: str, inprocess: tuple[BlockingPortal, Client], attack_base: Path) -> None:
    portal, client = inprocess

    @FUZZ
    @given(args=TOOL_ARGS[tool])
    def run(args: dict[str, Any]) -> None:
        call(portal, client, tool, args)

    before = len(CALLS)
    with OpenAudit.recording() as opened:
        run()
    assert len(CALLS) - before >= 30  # the examples really ran
    assert not opened_outside(opened, forbidden_dirs(attack_base))


def test_fuzz_over_stdio_subprocess(attack_base: Path, attack_vault: Path, tmp_path: Path) -> None:
    params = stdio_params(attack_vault, tmp_path / "idx", "--no-watch")
    with start_blocking_portal() as portal:
        with portal.wrap_async_context_manager(Client(params, raise_exceptions=False)) as client:

            @settings(FUZZ, max_examples=40)
            @given(item=ANY_CALL)
            def run(item: tuple[str, dict[str, Any]]) -> None:
                call(portal, client, *item)

            before = len(CALLS)
            run()
            assert len(CALLS) - before >= 25
            # the server survived everything and still answers
            assert not portal.call(client.call_tool, "list_documents", {}).is_error


@pytest.mark.anyio
async def test_an_internal_error_reaches_the_client_without_traceback(
    library: Library, monkeypatch: pytest.MonkeyPatch
) -> None:
    def boom(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(f"boom in /very/secret/path {OUTSIDE_MARKER}")

    monkeypatch.setattr(library, "search", boom)
    monkeypatch.setattr(library.catalog, "list_documents", boom)
    async with Client(build_server(library), raise_exceptions=False) as c:
        for name, args in (("search_documents", {"query": "setup"}), ("list_documents", {})):
            r = await c.call_tool(name, args)
            text = assert_clean(r)
            assert r.is_error and "boom" not in text and "/very/secret" not in text
