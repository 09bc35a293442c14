"""Folder links inside the root, through `mcp-docs status`. Found reviewing a vault with `loop -> .` and
`docs -> ../elsewhere`: the link leading out was listed as skipped, the loop and a link to a folder of the root
were skipped in silence, so a user who linked a folder in to have it indexed never learned why it was not."""

from __future__ import annotations

import json
import os
from pathlib import Path

from .cli_runner import run_cli
from .server_fixtures import write


def test_status_names_every_folder_link_it_did_not_follow_and_why(tmp_path: Path) -> None:
    root, index, elsewhere = tmp_path / "vault", tmp_path / "index", tmp_path / "elsewhere"
    write(root, "guides/setup.md", "# Setup\n\nInstall it.\n")
    write(elsewhere, "secret.md", "# Secret\n\nnot for the index\n")
    (root / "loop").symlink_to(".")
    (root / "docs").symlink_to(elsewhere)
    (root / "setup-guides").symlink_to("guides")
    (root / "guides" / "up").symlink_to("..")
    where = ["--root", str(root), "--index-dir", str(index)]
    assert run_cli("index", *where, "--embeddings", "none").returncode == 0
    out = run_cli("status", *where, "--json")
    assert out.returncode == 0, out.stderr
    status = json.loads(out.stdout)
    skipped = {p["path"]: (p["kind"], p["detail"]) for p in status["skipped"]}
    assert skipped == {
        "docs": ("outside_root", "folder link leads outside the root: not followed"),
        "loop": ("folder_link", "folder link to the root, a folder it sits in (a loop): not followed"),
        "guides/up": ("folder_link", "folder link to the root, a folder it sits in (a loop): not followed"),
        "setup-guides": ("folder_link", "folder link to guides, indexed there: not followed"),
    }
    assert status["documents"] == 1  # guides/setup.md once, at its real place; nothing from outside
    text = run_cli("status", *where, env={**os.environ, "COLUMNS": "200"})
    assert "loop" in text.stdout and "a loop" in text.stdout and "setup-guides" in text.stdout
