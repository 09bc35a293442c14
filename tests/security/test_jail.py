"""Requirements 1-3: the root jail, attacked through a real in-process MCP client.

1. `../` in every encoding and separator style, absolute paths and NUL bytes are refused with a clear tool
   error by read_document, read_section, list_documents (and search's folder filter); nothing outside the
   root is opened (every `open` of the process is audited while the attacks run).
2. With root `/x/vault`, nothing under the sibling `/x/vault_evil/` is reachable (by `..`, by a link, by prefix).
3. File and folder links leading out, dangling links and link loops are never listed, indexed, searched or
   read — including a link swapped in while requests run.
"""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from mcp_docs.library import Library
from mcp_docs.paths import Jail, PathOutsideRoot
from mcp_docs.server import build_server
from mcp_docs.settings import Settings
from tests.conftest import OUTSIDE_MARKER

from .common import TRAVERSALS, OpenAudit, assert_clean, forbidden_dirs, opened_outside, result_text

pytestmark = pytest.mark.anyio

# Ids no tool may ever serve (links out, dangling, through a folder link out, in the sibling folder).
NEVER_SERVED = ("leak.md", "dangling.md", "evil-link.md", "outside-folder/", "up/", "evil-folder/", "loop/",
                "guides/deep/nested-out/", "secret.md", "evil.md", "big50.md", "binary.md", "binary2.md")

# Inputs that are harmless (they name the root itself or nothing) and may legitimately list the root.
ROOT_LIKE = {".", "", " "}


def _clear(text: str) -> bool:
    """A clear, bounded, one-message tool error."""
    return 0 < len(text) < 2000 and "\n" not in text.strip()


@pytest.fixture
async def client(attack_library: Library):
    async with Client(build_server(attack_library), raise_exceptions=False) as c:
        yield c


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
    for attack in ("../vault_evil/evil.md", "..%2fvault_evil%2fevil.md", "evil-link.md", "evil-folder/evil.md",
                   "up/vault_evil/evil.md", str(evil / "evil.md"), "../vault_evil", "evil-folder"):
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
        r = await client.call_tool("search_documents", {"query": "sibling folder evil", "mode": "keyword", "max_results": 20})
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
                assert not any(h["id"].startswith(("leak", "up/", "outside", "evil", "loop/")) for h in r.structured_content["results"])
        for doc_id in ("leak.md", "dangling.md", "outside-folder/secret.md", "up/outside/secret.md", "loop/leak.md", "loop/up/outside/secret.md",
                       "guides/deep/nested-out/secret.md"):
            for tool, args in (("read_document", {"id": doc_id}), ("read_section", {"id": doc_id, "section": "Secret"})):
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
                for tool, args in (("read_document", {"id": "race.md"}), ("read_section", {"id": "race.md", "section": "Race"}),
                                   ("read_document", {"id": "box/inner.md"})):
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
