"""`mcp-docs read` given a link to a heading as its ID, through the command line. Found reviewing the Obsidian help
vault: `mcp-docs read "[[Internal links#Link to a block in a note]]"` printed the whole note from its front matter,
though the README says a link target works wherever an id does and read_section reads that heading."""

from __future__ import annotations

from pathlib import Path

from .server_fixtures import write
from .test_cli import run

NOTE = (
    "---\naliases: [Setup]\n---\n# Quokka setup\n\nIntro.\n\n## Linux\n\nUse apt.\n\n## Windows\n\nUse the installer.\n"
)


def test_read_a_link_to_a_heading_prints_that_section(tmp_path: Path) -> None:
    root, index = tmp_path / "vault", tmp_path / "index"
    write(root, "guides/Quokka setup.md", NOTE)
    where = ["--root", str(root), "--index-dir", str(index)]
    for link in ("[[Quokka setup#Windows]]", "[[Setup#windows|label]]", "guides/Quokka setup.md#windows"):
        out = run("read", link, *where)
        assert out.returncode == 0, out.stderr
        assert out.stdout == "## Windows\n\nUse the installer.\n", link
    # without a heading, or with an explicit --mode, the document as before
    assert run("read", "[[Quokka setup]]", *where).stdout == NOTE
    assert run("read", "[[Quokka setup#Windows]]", "--mode", "full", *where).stdout == NOTE
    outline = run("read", "[[Quokka setup#Windows]]", "--mode", "outline", *where).stdout
    assert "## Linux" in outline and "## Windows" in outline
    missing = run("read", "[[Quokka setup#Nowhere]]", *where)
    assert (
        missing.returncode == 2
        and "No section 'Nowhere'" in missing.stderr
        and "'Quokka setup > Windows'" in missing.stderr
    )
