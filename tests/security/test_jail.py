"""Requirements 1-3: the root jail, attacked through a real in-process MCP client.

1. `../` in every encoding and separator style, absolute paths and NUL bytes are refused with a clear tool
   error by read_document, read_section, list_documents (and search's folder filter); nothing outside the
   root is opened (every `open` of the process is audited while the attacks run).
2. With root `/x/vault`, nothing under the sibling `/x/vault_evil/` is reachable (by `..`, by a link, by prefix).
3. File and folder links leading out, dangling links and link loops are never listed, indexed, searched or
   read — including a link swapped in while requests run.
4. Links never get around the serving rules (the ignore file, dot-files and dot-folders, node_modules, the
   extension list, the size limit, binary): not a file link, a folder link, a link in an included folder into
   an excluded one, a chain of links, nor an excluded file inside a folder reached by a link. Through every entry
   point (tools, `docs://`, `mcp-docs read/search/status`, the watcher) such a link reads exactly like an unknown
   id, and the target's text is never indexed; `mcp-docs status` lists each one.
5. Link targets (`[[../../etc/passwd]]`, `[x](/etc/passwd)`, a symlink out, an excluded folder), in a note or
   given as an id, resolve only to served documents inside the root, and open nothing else.
"""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp import Client
from mcp.shared.exceptions import MCPError

from mcp_docs.errors import PathOutsideRoot, ToolInputError
from mcp_docs.library import Library
from mcp_docs.mcp.server import build_server
from mcp_docs.paths import Jail
from mcp_docs.settings import Settings
from mcp_docs.tools import DocsTools
from tests.cli_runner import CliResult, run_cli
from tests.conftest import OUTSIDE_MARKER

from .common import TRAVERSALS, OpenAudit, assert_clean, child_env, forbidden_dirs, opened_outside, result_text

pytestmark = pytest.mark.anyio

# Ids no tool may ever serve (links out, dangling, through a folder link out, in the sibling folder).
NEVER_SERVED = (
    "leak.md",
    "dangling.md",
    "evil-link.md",
    "outside-folder/",
    "up/",
    "evil-folder/",
    "loop/",
    "guides/deep/nested-out/",
    "secret.md",
    "evil.md",
    "big50.md",
    "binary.md",
    "binary2.md",
)

# Inputs that are harmless (they name the root itself or nothing) and may legitimately list the root.
ROOT_LIKE = {".", "", " "}


def _clear(text: str) -> bool:
    """A clear, bounded, one-message tool error."""
    return 0 < len(text) < 2000 and "\n" not in text.strip()


@pytest.mark.parametrize("tool", ["read_document", "read_section", "list_documents", "search_documents"])
async def test_r1_traversal_absolute_nul_are_refused_and_nothing_outside_is_opened(
    client: Client, tool: str, attack_base: Path
) -> None:
    failures = []
    with OpenAudit.recording() as opened:
        for attack in TRAVERSALS:
            args = {
                "read_document": {"id": attack},
                "read_section": {"id": attack, "section": "Secret"},
                "list_documents": {"folder": attack},
                "search_documents": {"query": "secret marker evil", "folder": attack, "mode": "keyword"},
            }[tool]
            r = await client.call_tool(tool, args)
            text = assert_clean(r)
            if tool.startswith("read_"):
                if not r.is_error or not _clear(text):
                    failures.append((attack, text[:200]))
            elif attack.strip() in ROOT_LIKE or attack.strip() in ("/",):
                pass  # the root itself: allowed, and the marker check above still applies
            elif not r.is_error:
                failures.append((attack, text[:200]))
            elif not _clear(text):
                failures.append((attack, "unclear: " + text[:200]))
            # the message says *why* for the main attack classes
            if r.is_error and ("\x00" in attack or "%00" in attack):
                assert "NUL" in text, (attack, text)
            elif r.is_error and attack.startswith(("/", "C:", "c:", "\\\\")):
                assert "absolute" in text, (attack, text)
            elif r.is_error and (attack.startswith("..") or "/../" in attack.replace("\\", "/")):
                assert "outside" in text, (attack, text)
    assert not failures, failures
    assert not opened_outside(opened, forbidden_dirs(attack_base))


async def test_r1_resource_template_is_jailed_too(client: Client, attack_base: Path) -> None:
    with OpenAudit.recording() as opened:
        for attack in TRAVERSALS:
            if not attack.strip():
                continue
            try:
                r = await client.read_resource(f"docs://{attack}")
            except MCPError as exc:
                assert OUTSIDE_MARKER not in str(exc)
                assert "Traceback" not in str(exc)
                continue
            text = " ".join(getattr(c, "text", "") for c in r.contents)
            assert OUTSIDE_MARKER not in text, attack
    assert not opened_outside(opened, forbidden_dirs(attack_base))


async def test_r1_a_normal_read_still_works(client: Client) -> None:
    r = await client.call_tool("read_document", {"id": "guides/writing.md"})
    assert not r.is_error
    assert r.structured_content["id"] == "guides/writing.md"


async def test_r2_sibling_folder_sharing_the_roots_prefix_is_unreachable(
    client: Client, attack_base: Path, attack_vault: Path
) -> None:
    evil = attack_base / "vault_evil"
    assert str(evil).startswith(str(attack_vault))  # the attack: a string prefix match would admit it
    jail = Jail(attack_vault)
    assert not jail.contains(evil / "evil.md")
    assert not jail.contains(attack_vault / "evil-link.md")
    assert not jail._inside(str(evil / "evil.md"))
    for attack in (
        "../vault_evil/evil.md",
        "..%2fvault_evil%2fevil.md",
        "evil-link.md",
        "evil-folder/evil.md",
        "up/vault_evil/evil.md",
        str(evil / "evil.md"),
        "../vault_evil",
        "evil-folder",
    ):
        with pytest.raises((PathOutsideRoot, FileNotFoundError)):
            jail.resolve_id(attack)
    with pytest.raises(PathOutsideRoot):
        jail.read_bytes(evil / "evil.md", 1 << 20)
    with pytest.raises(PathOutsideRoot):
        jail.read_bytes(attack_vault / "evil-link.md", 1 << 20)
    with OpenAudit.recording() as opened:
        for args in ({"id": "evil-link.md"}, {"id": "evil-folder/evil.md"}, {"id": "../vault_evil/evil.md"}):
            r = await client.call_tool("read_document", args)
            assert r.is_error
            assert_clean(r)
        for folder in ("evil-folder", "../vault_evil", "up/vault_evil"):
            r = await client.call_tool("list_documents", {"folder": folder})
            assert r.is_error
            assert_clean(r)
        r = await client.call_tool(
            "search_documents", {"query": "sibling folder evil", "mode": "keyword", "max_results": 20}
        )
        assert_clean(r)
        assert all("evil" not in hit["id"] for hit in r.structured_content["results"])
    assert not opened_outside(opened, forbidden_dirs(attack_base))


async def _all_listed(client: Client) -> list[str]:
    ids: list[str] = []
    cursor = None
    for _ in range(50):
        args: dict = {"folder": "", "limit": 200}
        if cursor:
            args["cursor"] = cursor
        r = await client.call_tool("list_documents", args)
        assert not r.is_error
        assert_clean(r)
        ids += [d["id"] for d in r.structured_content["documents"]]
        ids += [f["path"] + "/" for f in r.structured_content["folders"]]
        cursor = r.structured_content["next_cursor"]
        if not cursor:
            break
    return ids


async def test_r3_links_out_dangling_and_loops_are_never_listed_indexed_searched_or_read(
    client: Client, attack_library: Library, attack_base: Path
) -> None:
    with OpenAudit.recording() as opened:
        listed = await _all_listed(client)
        for bad in NEVER_SERVED:
            assert not any(i == bad or i.startswith(bad) or i.endswith("/" + bad) for i in listed), (bad, listed)
        indexed = set(attack_library.catalog.ids())
        for bad in NEVER_SERVED:
            assert not any(i == bad or i.startswith(bad) or i.endswith("/" + bad) for i in indexed), bad
        kinds = {p.path: p.kind for p in attack_library.catalog.problems()}
        assert kinds["leak.md"] == "outside_root"
        assert kinds["dangling.md"] == "dangling_link"
        assert kinds["evil-link.md"] == "outside_root"
        assert kinds["outside-folder"] == "outside_root"
        for query in (OUTSIDE_MARKER, "secret must never be served", "sibling folder", "evil"):
            for mode in ("keyword", "hybrid"):
                r = await client.call_tool("search_documents", {"query": query, "mode": mode, "max_results": 20})
                assert not r.is_error
                assert OUTSIDE_MARKER not in json.dumps(r.structured_content["results"])  # the query itself is echoed
                assert not any(
                    h["id"].startswith(("leak", "up/", "outside", "evil", "loop/"))
                    for h in r.structured_content["results"]
                )
        for doc_id in (
            "leak.md",
            "dangling.md",
            "outside-folder/secret.md",
            "up/outside/secret.md",
            "loop/leak.md",
            "loop/up/outside/secret.md",
            "guides/deep/nested-out/secret.md",
        ):
            for tool, args in (
                ("read_document", {"id": doc_id}),
                ("read_section", {"id": doc_id, "section": "Secret"}),
            ):
                r = await client.call_tool(tool, args)
                assert r.is_error, (tool, doc_id)
                assert _clear(assert_clean(r))
    assert not opened_outside(opened, forbidden_dirs(attack_base))


async def test_r3_link_swapped_in_while_requests_run_never_leaks(tmp_path: Path) -> None:
    """A file and a folder flip between real content and links out, as fast as possible, during reads."""
    root = tmp_path / "docs"
    outside = tmp_path / "outside"
    (root / "box").mkdir(parents=True)
    outside.mkdir()
    (outside / "race.md").write_text(f"# Race\n\n{OUTSIDE_MARKER} from outside.\n")
    (outside / "inner.md").write_text(f"# Inner\n\n{OUTSIDE_MARKER} via a folder link.\n")
    safe_file = "# Race\n\nsafe content inside the root.\n"
    (root / "race.md").write_text(safe_file)
    (root / "box" / "inner.md").write_text("# Inner\n\nsafe inner content.\n")
    (root / "index.md").write_text("# Index\n\nhello\n")
    lib = Library(Settings.load(root, tmp_path / "idx", embeddings="none", environ={}))
    lib.sync()
    stop = threading.Event()
    swaps = [0]

    def flipper() -> None:
        real_box = tmp_path / "box-real"
        (root / "box").rename(real_box)
        os.symlink(real_box, root / "box")
        while not stop.is_set():
            # file: an atomic rename of a link over the real file, then back
            os.symlink(outside / "race.md", root / ".race-link")
            os.replace(root / ".race-link", root / "race.md")
            (root / ".race-tmp").write_text(safe_file)
            os.replace(root / ".race-tmp", root / "race.md")
            # folder: the in-root link to a real folder inside, swapped for a link outside, then back
            os.symlink(outside, root / ".box-link")
            os.replace(root / ".box-link", root / "box")
            os.symlink(real_box, root / ".box-link")
            os.replace(root / ".box-link", root / "box")
            swaps[0] += 1

    thread = threading.Thread(target=flipper, daemon=True)
    served = 0
    try:
        async with Client(build_server(lib), raise_exceptions=False) as c:
            thread.start()
            for _ in range(150):
                for tool, args in (
                    ("read_document", {"id": "race.md"}),
                    ("read_section", {"id": "race.md", "section": "Race"}),
                    ("read_document", {"id": "box/inner.md"}),
                ):
                    r = await c.call_tool(tool, args)
                    assert OUTSIDE_MARKER not in result_text(r)
                    served += 0 if r.is_error else 1
    finally:
        stop.set()
        thread.join(5)
        lib.close()
    assert swaps[0] > 10
    assert served > 0  # the real file was served while it was real


def wait_for_canary(lib: Library, root: Path) -> None:
    """Write a canary note and wait until the watcher has indexed it: proof that it synced meanwhile."""
    (root / "canary.md").write_text("# Canary\n\ncanaryword\n")
    deadline = time.monotonic() + 15
    while "canary.md" not in lib.catalog.ids() and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(0.5)
    lib.wait_idle()
    assert "canary.md" in lib.catalog.ids()


def test_r3_links_created_while_the_watcher_runs_are_never_indexed(tmp_path: Path) -> None:
    from mcp_docs.watch import Watcher

    root = tmp_path / "docs"
    outside = tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (outside / "secret.md").write_text(f"# Secret\n\n{OUTSIDE_MARKER} latecomer\n")
    (root / "index.md").write_text("# Index\n\nhello\n")
    lib = Library(Settings.load(root, tmp_path / "idx", embeddings="none", environ={}))
    lib.sync()
    watcher = Watcher(lib, debounce_ms=100, step_ms=50)
    watcher.start()
    try:
        assert watcher.ready.wait(10)
        os.symlink(outside / "secret.md", root / "late-leak.md")
        os.symlink(outside, root / "late-dir")
        wait_for_canary(lib, root)
        assert not any(i.startswith("late") for i in lib.catalog.ids())
        assert lib.search("latecomer", 10, "keyword").results == []
    finally:
        watcher.stop()
        lib.close()


def test_r3_changes_outside_seen_through_a_folder_link_are_never_indexed(tmp_path: Path) -> None:
    """Files changed behind a folder link out of the root are never indexed: the watcher does not watch
    through links, and even an event with an in-root path like `ext/new.md` would be refused by the jail."""
    from mcp_docs.watch import Watcher

    root = tmp_path / "docs"
    outside = tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (root / "index.md").write_text("# Index\n\nhello\n")
    os.symlink(outside, root / "ext")
    lib = Library(Settings.load(root, tmp_path / "idx", embeddings="none", environ={}))
    lib.sync()
    watcher = Watcher(lib, debounce_ms=100, step_ms=50)
    watcher.start()
    try:
        assert watcher.ready.wait(10)
        (outside / "new.md").write_text(f"# New\n\n{OUTSIDE_MARKER} throughlink\n")
        (outside / "sub").mkdir()
        (outside / "sub" / "deep.md").write_text(f"# Deep\n\n{OUTSIDE_MARKER} throughlink\n")
        time.sleep(0.3)
        wait_for_canary(lib, root)
        assert not any(i.startswith("ext") for i in lib.catalog.ids())
        assert lib.search("throughlink", 10, "keyword").results == []
    finally:
        watcher.stop()
        lib.close()


# -- 4. links and the serving rules ---------------------------------------------------------------------------

LINK_SECRET = "linksecret-5b1e"  # in every file the rules exclude; must never be served, indexed or searched
LINK_MAX_BYTES = 4096

# name -> target (relative to the link's folder, or absolute when it starts with '/' after formatting)
RULE_LINKS = {
    "public-diary.md": "secretstuff/diary.md",  # into an ignored folder
    "private-link.md": "private.md",  # to an ignored file
    "env.md": ".env",  # to a dot-file with the wrong extension
    "hidden-link.md": ".hidden.md",  # to a dot-file
    "txt-link.md": "notes.txt",  # to the wrong extension
    "abs-diary.md": "{root}/secretstuff/diary.md",  # absolute, into an ignored folder
    "ghost.md": "secretstuff/missing.md",  # dangling, into an ignored folder: must not differ from a present target
    "trashlink": ".trash",  # folder link to a dot-folder
    "nm-link": "node_modules/pkg",  # folder link into node_modules
    "secret-dir": "secretstuff",  # folder link to an ignored folder
    "guides/inner.md": "../secretstuff/diary.md",  # in an included folder, into an excluded one
    "guides/hop.md": "../secretstuff/diary.md",
    "chain.md": "guides/hop.md",  # a chain ending in an ignored folder
    "chain-through.md": "secretstuff/relay.md",  # a chain passing through an ignored folder
    "secretstuff/relay.md": "../public.md",
    "guides-link": "guides",  # folder link to an included folder, holding excluded files
    "good-link.md": "public.md",
    "big-link.md": "big.md",  # to a file over the size limit
    "blob-link.md": "blob.md",  # to a binary file
}
# Links whose target is not served: reported as excluded_link, and unknown to every tool.
EXCLUDED_LINKS = (
    "public-diary.md",
    "private-link.md",
    "env.md",
    "hidden-link.md",
    "txt-link.md",
    "abs-diary.md",
    "ghost.md",
    "trashlink",
    "nm-link",
    "secret-dir",
    "guides/inner.md",
    "guides/hop.md",
    "chain.md",
    "chain-through.md",
)
# Every one of these ids answers exactly as an unknown id does.
UNSERVED_IDS = (
    *EXCLUDED_LINKS,
    "trashlink/old.md",
    "nm-link/readme.md",
    "secret-dir/diary.md",
    "guides-link/.secret.md",
    "guides-link/private/plan.md",
    "secretstuff/diary.md",
    "secretstuff/relay.md",
    "private.md",
    ".env",
    ".hidden.md",
    "notes.txt",
    ".trash/old.md",
    "node_modules/pkg/readme.md",
    "guides/private/plan.md",
)


def make_rule_link_vault(base: Path) -> Path:
    """A root whose excluded files all hold LINK_SECRET, reached by every kind of link."""
    root = base / "docs"
    files = {
        ".mcpdocsignore": "secretstuff/\nprivate.md\n/guides/private/\n",
        "public.md": "# Public\n\npublic words\n",
        "guides/ok.md": "# Ok\n\nguide words\n",
        "secretstuff/diary.md": f"# Diary\n\nAPI_KEY={LINK_SECRET}\n",
        "private.md": f"# Private\n\n{LINK_SECRET}\n",
        ".env": f"API_KEY={LINK_SECRET}\n",
        ".hidden.md": f"# Hidden\n\n{LINK_SECRET}\n",
        "notes.txt": f"{LINK_SECRET}\n",
        ".trash/old.md": f"# Old\n\n{LINK_SECRET}\n",
        "node_modules/pkg/readme.md": f"# Pkg\n\n{LINK_SECRET}\n",
        "guides/.secret.md": f"# Secret\n\n{LINK_SECRET}\n",
        "guides/private/plan.md": f"# Plan\n\n{LINK_SECRET}\n",
        "big.md": "# Big\n\n" + "padding words\n" * 400 + LINK_SECRET + "\n",
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    (root / "blob.md").write_bytes(b"# Blob\n\x00\x01" + LINK_SECRET.encode())
    for name, target in RULE_LINKS.items():
        os.symlink(target.format(root=root), root / name)
    return root


@pytest.fixture(scope="module")
def rule_base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("rules")
    make_rule_link_vault(base)
    return base


@pytest.fixture(scope="module")
def rule_library(rule_base: Path):
    lib = Library(
        Settings.load(
            rule_base / "docs", rule_base / "index", embeddings="none", environ={}, max_file_bytes=LINK_MAX_BYTES
        )
    )
    lib.sync()
    yield lib
    lib.close()


@pytest.fixture
async def rule_client(rule_library: Library):
    async with Client(build_server(rule_library), raise_exceptions=False) as c:
        yield c


def _unknown(doc_id: str, text: str) -> bool:
    """The unknown-id answer: names the id, maybe suggests served ids, says nothing else."""
    return text.startswith(f"No document '{doc_id}'.") and LINK_SECRET not in text and "\n" not in text


async def test_r4_links_to_excluded_places_read_like_unknown_ids(rule_client: Client) -> None:
    for doc_id in UNSERVED_IDS:
        for tool, args in (
            ("read_document", {"id": doc_id}),
            ("read_document", {"id": doc_id, "mode": "outline"}),
            ("read_section", {"id": doc_id, "section": "Diary"}),
        ):
            r = await rule_client.call_tool(tool, args)
            assert r.is_error and _unknown(doc_id, result_text(r)), (tool, doc_id, result_text(r)[:300])
        with pytest.raises(MCPError) as exc:
            await rule_client.read_resource(f"docs://{doc_id}")
        assert LINK_SECRET not in str(exc.value) and "No document" in str(exc.value), (doc_id, str(exc.value))
    # a folder reached through an excluded link, or excluded itself, is no folder either
    for folder in ("trashlink", "secret-dir", "nm-link", ".trash", "secretstuff", "guides-link/private"):
        for tool, args in (
            ("list_documents", {"folder": folder}),
            ("search_documents", {"query": "words", "folder": folder, "mode": "keyword"}),
        ):
            r = await rule_client.call_tool(tool, args)
            assert r.is_error and result_text(r).startswith(f"No folder '{folder}'."), (tool, folder, result_text(r))


async def test_r4_size_limit_and_binary_apply_to_link_targets(rule_client: Client) -> None:
    for doc_id, why in (("big-link.md", "too large"), ("blob-link.md", "binary")):
        for tool, args in (("read_document", {"id": doc_id}), ("read_section", {"id": doc_id, "section": "Big"})):
            r = await rule_client.call_tool(tool, args)
            text = result_text(r)
            assert r.is_error and why in text and LINK_SECRET not in text, (tool, doc_id, text[:300])


async def test_r4_links_to_served_places_still_work(rule_client: Client) -> None:
    for doc_id, words in (
        ("good-link.md", "public words"),
        ("guides-link/ok.md", "guide words"),
        ("public.md", "public words"),
    ):
        r = await rule_client.call_tool("read_document", {"id": doc_id})
        assert not r.is_error and words in r.structured_content["content"], (doc_id, result_text(r)[:300])
        resource = await rule_client.read_resource(f"docs://{doc_id}")
        assert words in resource.contents[0].text


async def test_r4_excluded_targets_are_never_indexed_or_searched_and_status_lists_them(
    rule_client: Client, rule_library: Library
) -> None:
    assert sorted(rule_library.catalog.ids()) == ["guides/ok.md", "public.md"]
    for query in (LINK_SECRET, "linksecret", "API_KEY", "diary", "padding words", "old pkg plan hidden private"):
        for mode in ("keyword", "hybrid"):
            r = await rule_client.call_tool("search_documents", {"query": query, "mode": mode, "max_results": 20})
            assert not r.is_error
            assert LINK_SECRET not in json.dumps(r.structured_content["results"]), query
            assert {h["id"] for h in r.structured_content["results"]} <= {"guides/ok.md", "public.md"}
    kinds = {p.path: p.kind for p in rule_library.catalog.problems()}
    for link in EXCLUDED_LINKS:
        assert kinds.get(link) == "excluded_link", (link, kinds)
    assert kinds["good-link.md"] == kinds["big-link.md"] == kinds["blob-link.md"] == "duplicate_link"
    assert kinds["big.md"] == "too_large" and kinds["blob.md"] == "binary"
    assert all(LINK_SECRET not in p.detail for p in rule_library.catalog.problems())


def _cli(*args: str) -> CliResult:
    return run_cli(*args, env=child_env(MCP_DOCS_EMBEDDINGS="none", MCP_DOCS_MAX_FILE_BYTES=str(LINK_MAX_BYTES)))


def test_r4_cli_read_search_and_status(rule_base: Path, tmp_path: Path) -> None:
    where = ("--root", str(rule_base / "docs"), "--index-dir", str(tmp_path / "cli-index"))
    out = _cli("search", f"{LINK_SECRET} API_KEY diary", *where, "--json", "--mode", "keyword")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["results"] == [] and LINK_SECRET not in out.stderr  # the query itself is echoed
    out = _cli("search", "linksecret API_KEY diary old plan", *where, "--mode", "keyword")
    assert out.returncode == 0 and LINK_SECRET not in out.stdout + out.stderr, out.stdout
    for doc_id in ("public-diary.md", "env.md", "trashlink/old.md", "chain.md", "guides-link/.secret.md", "ghost.md"):
        out = _cli("read", doc_id, *where)
        assert out.returncode != 0 and LINK_SECRET not in out.stdout + out.stderr, (doc_id, out.stdout, out.stderr)
        assert f"No document '{doc_id}'." in out.stderr and "Traceback" not in out.stderr, (doc_id, out.stderr)
    out = _cli("read", "good-link.md", *where)
    assert out.returncode == 0 and "public words" in out.stdout, out.stderr
    status = _cli("status", *where, "--json")
    assert status.returncode == 0, status.stderr
    kinds = {s["path"]: s["kind"] for s in json.loads(status.stdout)["skipped"]}
    assert {link for link in EXCLUDED_LINKS if kinds.get(link) == "excluded_link"} == set(EXCLUDED_LINKS), kinds
    assert LINK_SECRET not in status.stdout


def test_r4_links_to_excluded_places_created_while_the_watcher_runs_are_never_indexed(tmp_path: Path) -> None:
    from mcp_docs.watch import Watcher

    root = make_rule_link_vault(tmp_path)
    for name in RULE_LINKS:  # start without links: they all appear while the watcher runs
        os.unlink(root / name)
    lib = Library(Settings.load(root, tmp_path / "idx", embeddings="none", environ={}, max_file_bytes=LINK_MAX_BYTES))
    lib.sync()
    watcher = Watcher(lib, debounce_ms=100, step_ms=50)
    watcher.start()
    try:
        assert watcher.ready.wait(10)
        for name, target in RULE_LINKS.items():
            os.symlink(target.format(root=root), root / name)
        os.symlink(".trash", root / "guides" / "late-trash")  # a folder link created inside a watched folder
        wait_for_canary(lib, root)
        assert sorted(lib.catalog.ids()) == ["canary.md", "guides/ok.md", "public.md"]
        assert lib.search(LINK_SECRET, 10, "keyword").results == []
        assert lib.search("API_KEY diary", 10, "keyword").results == []
        kinds = {p.path: p.kind for p in lib.catalog.problems()}
        assert all(kinds.get(link) == "excluded_link" for link in EXCLUDED_LINKS), kinds
    finally:
        watcher.stop()
        lib.close()


# Random link layouts (hypothesis): links anywhere, with any name, to any place or to each other (chains, loops).
FUZZ_SERVED = {"pub.md": "# Pub\n\npublic text\n", "guides/g.md": "# G\n\nguide text\n"}
FUZZ_EXCLUDED = {
    "secretstuff/s.md": LINK_SECRET,
    ".hid.md": LINK_SECRET,
    ".trash/t.md": LINK_SECRET,
    "node_modules/n.md": LINK_SECRET,
    "x.txt": LINK_SECRET,
    "guides/.gs.md": LINK_SECRET,
    "priv.md": LINK_SECRET,
}
FUZZ_FOLDERS = ["", "guides", "secretstuff", ".trash"]
FUZZ_PLACES = [*FUZZ_SERVED, *FUZZ_EXCLUDED, "guides", "secretstuff", ".trash", "node_modules", "nowhere.md"]


@st.composite
def link_layouts(draw: st.DrawFn) -> list[tuple[str, str, bool]]:
    """(link path, target path, absolute?) triples; targets may be other links, so chains and loops occur."""
    count = draw(st.integers(1, 6))
    names = [
        f"{draw(st.sampled_from(FUZZ_FOLDERS))}/{draw(st.sampled_from(['l{}.md', '.l{}.md', 'l{}.txt', 'l{}']))}".format(
            i
        ).lstrip("/")
        for i in range(count)
    ]
    return [(name, draw(st.sampled_from(FUZZ_PLACES + names)), draw(st.booleans())) for name in names]


def test_r4_random_link_layouts_never_serve_or_index_an_excluded_file(tmp_path: Path) -> None:
    root = tmp_path / "docs"
    for rel, text in {**FUZZ_SERVED, **FUZZ_EXCLUDED, ".mcpdocsignore": "secretstuff/\npriv.md\n"}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    lib = Library(Settings.load(root, tmp_path / "idx", embeddings="none", environ={}))
    tools = DocsTools(lib)
    ran = [0]

    @settings(
        max_examples=25, deadline=None, database=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
    )
    @given(layout=link_layouts())
    def run(layout: list[tuple[str, str, bool]]) -> None:
        made = []
        try:
            for name, target, absolute in layout:
                link = root / name
                if os.path.lexists(link):
                    continue
                dest = str(root / target) if absolute else os.path.relpath(root / target, link.parent)
                os.symlink(dest, link)
                made.append(name)
            lib.sync()
            assert set(lib.catalog.ids()) <= set(FUZZ_SERVED)
            assert lib.search(LINK_SECRET, 20, "keyword").results == []
            listed = {p.path for p in lib.catalog.problems()}
            rules = lib.jail.rules
            for name in made:
                if not rules.excludes(name) and not os.path.isdir(root / name):
                    assert name in listed, (name, layout, listed)  # nothing silent: a file link with a document's name
                for doc_id in (name, f"{name}/s.md", f"{name}/t.md", f"{name}/n.md", f"{name}/.gs.md", f"{name}/g.md"):
                    try:
                        content = tools.read_document(doc_id).content
                    except ToolInputError as exc:
                        assert LINK_SECRET not in str(exc)
                        continue
                    assert content in FUZZ_SERVED.values(), (doc_id, layout)
            # not every link is refused: one with a document's name straight to a served file is read
            for name, target, _ in layout:
                if name in made and target in FUZZ_SERVED and not rules.excludes(name):
                    assert tools.read_document(name).content == FUZZ_SERVED[target], (name, layout)
            ran[0] += 1
        finally:
            for name in made:
                os.unlink(root / name)

    try:
        run()
    finally:
        lib.close()
    assert ran[0] >= 20


def test_r4_a_partial_sync_judges_new_links_as_the_full_scan_does(tmp_path: Path) -> None:
    """The watcher's path: sync(paths=[...]) of just the new links lists each excluded one, indexes none."""
    root = make_rule_link_vault(tmp_path)
    lib = Library(Settings.load(root, tmp_path / "idx", embeddings="none", environ={}, max_file_bytes=LINK_MAX_BYTES))
    try:
        full = {p.path: p.kind for p in lib.sync().skipped}
        for name in RULE_LINKS:
            os.unlink(root / name)
        lib.sync()
        for name, target in RULE_LINKS.items():
            os.symlink(target.format(root=root), root / name)
        partial = {p.path: p.kind for p in lib.sync(paths=list(RULE_LINKS)).skipped}
        assert partial == {k: v for k, v in full.items() if k in RULE_LINKS}
        assert sorted(lib.catalog.ids()) == ["guides/ok.md", "public.md"]
    finally:
        lib.close()


# Link-shaped attacks (issue 15): a note's links and an agent's link targets resolve only to served documents.
LINK_SEGMENTS = ["..", ".", "", "etc", "passwd", "escape", "esc-dir", "secretstuff", "diary", ".trash", "old"]
LINK_SEGMENTS += ["public", "attacks", "%2e%2e", "%252e%252e", "C:", "~", "..\\..", "\\\\host", "outside"]
LINK_ATTACKS = (
    "../../etc/passwd",
    "/etc/passwd",
    "%2e%2e/%2e%2e/etc/passwd",
    "C:\\Windows\\win.ini",
    "../outside/escape.md",
    "escape",
    "esc-dir/escape",
    "secretstuff/diary",
    "diary",
    ".trash/old",
    "old",
    "file:///etc/passwd",
)


async def test_r5_link_targets_out_of_the_root_or_excluded_resolve_to_nothing(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    secrets = {".mcpdocsignore": "secretstuff/\n", "secretstuff/diary.md": "", ".trash/old.md": ""}
    for rel in secrets:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(secrets[rel] or f"# Secret\n\n{LINK_SECRET}\n")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "escape.md").write_text(f"# Escape\n\n{OUTSIDE_MARKER}\n")
    os.symlink(tmp_path / "outside" / "escape.md", root / "escape.md")
    os.symlink(tmp_path / "outside", root / "esc-dir")
    body = "\n".join(f"[[{t}]] [m]({t}) [a]({t}.md)" for t in LINK_ATTACKS)
    (root / "attacks.md").write_text(f"# Attacks\n\n{body}\n\n[[public]]\n")
    (root / "public.md").write_text("# Public\n\npublic words\n")
    with Library(Settings.load(root, tmp_path / "index", embeddings="none", environ={})) as lib:
        lib.sync()
        async with Client(build_server(lib), raise_exceptions=False) as client:
            with OpenAudit.recording() as opened:
                for attack in LINK_ATTACKS:
                    for target in (attack, f"[[{attack}#Secret]]"):
                        for tool, args in (
                            ("read_document", {"id": target}),
                            ("read_section", {"id": target, "section": "Secret"}),
                            ("list_documents", {"linked_to": target}),
                        ):
                            r = await client.call_tool(tool, args)
                            text = result_text(r)
                            assert r.is_error and _clear(text), (tool, target, text[:200])
                            assert LINK_SECRET not in text and OUTSIDE_MARKER not in text
                        with pytest.raises(MCPError):
                            await client.read_resource(f"docs://{target}")
                r = await client.call_tool("read_document", {"id": "attacks.md", "mode": "outline"})
                outline = result_text(r)
                assert "Links to (" in outline and "public.md" in outline and outline.count("(unresolved)") >= 20
                assert LINK_SECRET not in outline and OUTSIDE_MARKER not in outline
            assert not opened_outside(opened, [(tmp_path / "outside").resolve()])
            assert not [p for p in opened if "secretstuff" in p or ".trash" in p]
        tools = DocsTools(lib)

        @settings(max_examples=60, deadline=None, database=None)
        @given(
            parts=st.lists(st.sampled_from(LINK_SEGMENTS), min_size=1, max_size=6),
            fragment=st.sampled_from(["", "#Secret", "#x|label", "|label"]),
            form=st.sampled_from(["{}", "[[{}]]", "/{}", "[[/{}]]", "{}.md"]),
        )
        def run(parts: list[str], fragment: str, form: str) -> None:
            target = form.format("/".join(parts) + fragment)
            try:
                doc_id, path, _ = tools.locate(target)
            except ToolInputError as exc:
                assert LINK_SECRET not in str(exc) and OUTSIDE_MARKER not in str(exc)
                return
            assert doc_id in ("public.md", "attacks.md"), (target, doc_id)
            assert os.path.realpath(path).startswith(str(lib.jail.root) + os.sep)

        run()
