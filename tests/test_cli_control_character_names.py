"""File names holding a newline, a tab or an escape, through `mcp-docs search` and `status` text output. Found by
the outside review: `bad<newline>name.md` split the result line that listed it into two lines, the second
looking like a line of its own; the text output shows such names escaped ('bad\\nname.md'), the JSON exact."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from .cli_runner import run_cli
from .server_fixtures import write

NEWLINE_NAME = "bad\nname.md"


def test_a_name_with_a_newline_stays_on_its_line_escaped_and_exact_in_json(tmp_path: Path) -> None:
    root, index, outside = tmp_path / "vault", tmp_path / "index", tmp_path / "outside"
    write(root, NEWLINE_NAME, "# Wombat\n\nwombat burrows\n")
    write(root, "tab\tfolder/esc\x1b[2J.md", "# Wombat too\n\nanother wombat\n")
    write(outside, "x.md", "# X\n")
    (root / "out\nlink.md").symlink_to(outside / "x.md")
    where = ["--root", str(root), "--index-dir", str(index)]
    assert run_cli("index", *where, "--embeddings", "none").returncode == 0

    text = run_cli("search", "wombat", *where, "--mode", "keyword").stdout
    lines = text.splitlines()
    assert "1. bad\\nname.md — Wombat" in lines, text
    assert "2. tab\\tfolder/esc\\x1b[2J.md — Wombat too" in lines, text
    # every line is the header, a ranked document, its sections, or the next step: none is a name's tail
    assert all(line.startswith(("2 documents", "1. ", "2. ", "   ", "Next: ")) for line in lines), text
    # the next step quotes the id for bash on one line, as a command the user can paste
    next_step = lines[-1]
    assert next_step.startswith("Next: mcp-docs read $'bad\\nname.md' --section Wombat"), text
    word = next_step.split()[3]
    pasted = subprocess.run(["bash", "-c", f"printf %s {word}"], capture_output=True, text=True, check=True)
    assert pasted.stdout == NEWLINE_NAME  # bash reads the quoted word back as the id
    found = json.loads(run_cli("search", "wombat", *where, "--mode", "keyword", "--json").stdout)
    assert [r["id"] for r in found["results"]] == [NEWLINE_NAME, "tab\tfolder/esc\x1b[2J.md"]

    status = run_cli("status", *where, env={**os.environ, "COLUMNS": "200"}).stdout
    row = next(line for line in status.splitlines() if "outside_root" in line)
    assert "out\\nlink.md" in row, status
    skipped = json.loads(run_cli("status", *where, "--json").stdout)["skipped"]
    assert [p["path"] for p in skipped] == ["out\nlink.md"]
