"""`mcp-docs` on a real terminal (a pseudo-terminal) prints headings, snippets, file names and links from hostile
notes without the escape sequences in them: no fake OSC 8 link, no screen clear, no C1 CSI, no bidi override.
The same sanitiser as docs-agent's (mcp_docs/terminal.py)."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mcp_docs.library import Library
from mcp_docs.settings import Settings
from mcp_docs.terminal import json_text_safe, terminal_safe
from tests.server_fixtures import child_env

# What a terminal acts on instead of showing. Rich's own styling (bold, colours: ESC [ ... m) is allowed.
HOSTILE = ("\x1b]8;", "\x1b[2J", "\x1b]0;", "\x9b", "\u202e", "\x07")
LINK = "\x1b]8;;https://evil.example/\x1b\\click me\x1b]8;;\x1b\\"
NAME = "report\u202egnp.md"  # shows as 'reportdm.png'


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    base = tmp_path_factory.mktemp("terminal")
    root, index = base / "vault", base / "index"
    root.mkdir()
    (root / NAME).write_text(
        f"# Quarterly {LINK} report\x1b]0;owned\x07\n\n## Wombat \x1b[2J figures\n\n"
        "The wombat numbers \x9b2J grew. See [[missing \x1b[2J note]].\n",
        encoding="utf-8",
    )
    (root / "clean.md").write_text("# Clean\n\nNothing to see, wombat.\n", encoding="utf-8")
    (root / "bad\x1b[2J.md").write_bytes(b"# Bin\x00\x01\x02\n")  # skipped (binary): its name is listed
    with Library(Settings.load(root, index, embeddings="none")) as library:
        library.sync()
    return root, index


def on_a_terminal(*args: str) -> str:
    """`mcp-docs ARGS` with stdout and stderr on a pseudo-terminal, as a user sees it; everything it printed."""
    leader, follower = pty.openpty()
    env = child_env(TERM="xterm-256color", COLUMNS="200", MCP_DOCS_EMBEDDINGS="none")
    proc = subprocess.Popen(
        [sys.executable, "-m", "mcp_docs", *args], stdin=subprocess.DEVNULL, stdout=follower, stderr=follower, env=env
    )
    os.close(follower)
    out = bytearray()
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        ready, _, _ = select.select([leader], [], [], 0.2)
        if ready:
            try:
                block = os.read(leader, 65536)
            except OSError:  # the child closed its side: everything is read
                break
            if not block:
                break
            out += block
        elif proc.poll() is not None:
            break
    os.close(leader)
    assert proc.wait(10) == 0, out.decode(errors="replace")
    return out.decode("utf-8", errors="replace")


def assert_harmless(text: str) -> None:
    found = [h for h in HOSTILE if h in text]
    assert not found, (found, text[:2000])


@pytest.mark.parametrize(
    "command",
    [
        ["search", "wombat", "--mode", "keyword"],
        ["read", NAME],
        ["read", NAME, "--section", "Wombat"],
        ["status"],
        ["index"],
    ],
    ids=["search", "read", "read-section", "status", "index"],
)
def test_the_cli_on_a_terminal_shows_hostile_text_without_acting_on_it(
    hostile: tuple[Path, Path], command: list[str]
) -> None:
    root, index = hostile
    out = on_a_terminal(*command, "--root", str(root), "--index-dir", str(index))
    assert_harmless(out)
    if command[0] in ("search", "read"):
        assert "Wombat  figures" in out  # the text itself is still there, its escape gone
    if command in (["search", "wombat", "--mode", "keyword"], ["read", NAME]):
        assert "click me" in out
    if command[0] == "status":
        # the skipped file, its escape shown as text (a name is escaped, not cut: the user can find the file)
        assert "bad\\x1b[2J.md" in out.replace("\n", "")


def test_json_output_escapes_what_a_terminal_would_act_on(hostile: tuple[Path, Path]) -> None:
    root, index = hostile
    common = ["--root", str(root), "--index-dir", str(index)]
    for command, exact in (
        (["search", "wombat", "--mode", "keyword", "--json"], NAME),
        (["status", "--json"], "bad\x1b[2J.md"),  # the skipped file
    ):
        out = on_a_terminal(*command, *common)
        assert_harmless(out)
        data = json.loads(out[out.index("{") :])
        assert exact in _strings(data)  # the exact name, once decoded


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        value = list(value.values())
    return [s for v in value for s in _strings(v)] if isinstance(value, list) else []


def test_a_pipe_gets_the_document_exactly(hostile: tuple[Path, Path]) -> None:
    root, index = hostile
    done = subprocess.run(
        [sys.executable, "-m", "mcp_docs", "read", NAME, "--root", str(root), "--index-dir", str(index)],
        capture_output=True,
        text=True,
        env=child_env(),
        timeout=120,
    )
    assert done.returncode == 0 and LINK in done.stdout  # `> file` copies the note as it is


def test_the_one_sanitiser() -> None:
    from agent_client import text

    assert text.terminal_safe is terminal_safe  # docs-agent and mcp-docs share it
    assert terminal_safe(f"a{LINK}b\x1b[2Jc\x9b2Jd\u202ee\u2028f") == "aclick mebc2Jde\nf"
    assert json_text_safe(json.dumps({"n": "x\u202e\x9by"}, ensure_ascii=False)) == '{"n": "x\\u202e\\u009by"}'
