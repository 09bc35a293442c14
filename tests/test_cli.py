"""The mcp-docs command line, run as a user would: its stdout, stderr and exit code (in this process through the
console script's entry point; in a subprocess where only a real process shows the behaviour)."""

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from .cli_runner import CliResult, run_cli


def run(*args: str, env_extra: dict[str, str] | None = None) -> CliResult:
    return run_cli(*args, env={**os.environ, "MCP_DOCS_EMBEDDINGS": "none", **(env_extra or {})})


@pytest.fixture
def index_dir(tmp_path: Path) -> Path:
    return tmp_path / "cli-index"


def test_index_then_search_json_contract(vault: Path, index_dir: Path) -> None:
    out = run("index", "--root", str(vault), "--index-dir", str(index_dir))
    assert out.returncode == 0, out.stderr
    assert "9 documents indexed" in out.stdout
    assert "huge.md" in out.stdout and "too_large" in out.stdout  # skips are reported, not silent

    out = run(
        "search", "restore drill", "--root", str(vault), "--index-dir", str(index_dir), "--json", "--mode", "keyword"
    )
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert set(data) >= {"query", "mode_used", "results", "index"}
    assert data["query"] == "restore drill" and data["mode_used"] == "keyword"
    assert data["index"] == {"documents": 9, "pending_embeddings": 0}
    first = data["results"][0]
    assert first["id"] == "notes/meeting-2026-01.md"
    assert set(first) >= {"id", "title", "score", "tags", "sections"}
    assert set(first["sections"][0]) >= {"heading", "heading_path", "line_start", "line_end", "snippet"}


def test_search_without_prior_index_builds_it(vault: Path, index_dir: Path) -> None:
    out = run("search", "Homebrew", "--root", str(vault), "--index-dir", str(index_dir))
    assert out.returncode == 0, out.stderr
    assert "guides/setup/install.md" in out.stdout


def test_env_settings_and_max_results(vault: Path, index_dir: Path) -> None:
    out = run(
        "search",
        "the",
        "--json",
        "--max-results",
        "2",
        env_extra={"MCP_DOCS_ROOT": str(vault), "MCP_DOCS_INDEX_DIR": str(index_dir)},
    )
    assert out.returncode == 0, out.stderr
    assert len(json.loads(out.stdout)["results"]) <= 2


def test_status_reports_skips_and_warnings(vault: Path, index_dir: Path) -> None:
    run("index", "--root", str(vault), "--index-dir", str(index_dir))
    out = run("status", "--root", str(vault), "--index-dir", str(index_dir), "--json")
    assert out.returncode == 0, out.stderr
    status = json.loads(out.stdout)
    assert status["documents"] == 9
    kinds = {s["path"]: s["kind"] for s in status["skipped"]}
    assert kinds["binary.md"] == "binary" and kinds["leak.md"] == "outside_root"
    assert any(w["path"] == "latin1.md" for w in status["warnings"])
    human = run("status", "--root", str(vault), "--index-dir", str(index_dir))
    assert "skipped" in human.stdout and "dangling" in human.stdout


def test_bad_root_and_language_are_clear_errors(tmp_path: Path) -> None:
    out = run("search", "x", "--root", str(tmp_path / "nope"))
    assert out.returncode == 2
    assert "does not exist" in out.stderr and "Traceback" not in out.stderr
    (tmp_path / "docs").mkdir()
    out = run("index", "--root", str(tmp_path / "docs"), "--index-dir", str(tmp_path / "i"), "--language", "klingon")
    assert out.returncode == 2 and "Unsupported language" in out.stderr
    out = run("search", "x", "--json")
    assert out.returncode == 2 and "error" in json.loads(out.stdout)


def test_read_modes_and_section(vault: Path, index_dir: Path) -> None:
    base = ["--root", str(vault), "--index-dir", str(index_dir)]
    out = run("read", "guides/setup/install.md", "--mode", "outline", *base)
    assert out.returncode == 0, out.stderr
    assert "Linux" in out.stdout and "Build" in out.stdout
    out = run("read", "guides/setup/install.md", "--section", "Build > Linux", *base)
    assert out.returncode == 0, out.stderr
    assert "GCC 12" in out.stdout and "apt install" not in out.stdout
    out = run("read", "guides/setup/instal.md", *base)  # a typo, before any explicit index
    assert out.returncode == 2 and "guides/setup/install.md" in out.stderr
    out = run("read", "../outside/secret.md", *base)
    assert out.returncode == 2 and "outsidemarker" not in out.stdout + out.stderr


def test_one_shot_search_embeds_a_small_vault_and_answers_hybrid(tmp_path: Path) -> None:
    root = tmp_path / "small"
    root.mkdir()
    (root / "a.md").write_text("# Cats\n\nCats are small domestic felines that purr.\n")
    (root / "b.md").write_text("# Databases\n\nPostgreSQL stores rows in tables.\n")
    out = run(
        "search",
        "kitten",
        "--root",
        str(root),
        "--index-dir",
        str(tmp_path / "i"),
        "--json",
        env_extra={"MCP_DOCS_EMBEDDINGS": "local"},
    )
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["mode_used"] == "hybrid"
    assert data["index"]["pending_embeddings"] == 0
    assert data["results"][0]["id"] == "a.md"  # no keyword overlap: found by meaning


def _closed_reader(*args: str) -> subprocess.CompletedProcess[str]:
    """The command with its stdout read by nobody, as `mcp-docs … | head -1` once head has exited."""
    env = {**os.environ, "MCP_DOCS_EMBEDDINGS": "none"}
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "mcp_docs", *args],
            stdout=write_end,
            stderr=subprocess.PIPE,
            check=False,
            text=True,
            env=env,
            timeout=120,
        )
    finally:
        os.close(write_end)
    return proc


@pytest.mark.parametrize("json_flag", [[], ["--json"]])
def test_a_reader_that_stops_early_is_no_error(vault: Path, index_dir: Path, json_flag: list[str]) -> None:
    out = _closed_reader("search", "install", "--root", str(vault), "--index-dir", str(index_dir), *json_flag)
    assert out.returncode == 0 and out.stderr == ""


def test_terminal_output_counts_in_words_and_suggests_the_read_command(tmp_path: Path) -> None:
    root = tmp_path / "one"
    root.mkdir()
    (root / "only.md").write_text("# Only\n\nA lone marmot note.\n")
    base = ["--root", str(root), "--index-dir", str(tmp_path / "i")]
    out = run("index", *base)
    assert out.returncode == 0 and "1 document indexed" in out.stdout
    out = run("status", *base)
    assert "(1 section)" in out.stdout
    out = run("search", "marmot", *base)
    assert out.stdout.startswith("1 document for")
    assert "Next: mcp-docs read only.md --section Only" in out.stdout and "read_section(" not in out.stdout


def test_a_root_without_markdown_says_so_everywhere(tmp_path: Path) -> None:
    root = tmp_path / "plain"
    root.mkdir()
    (root / "readme.txt").write_text("not markdown\n")
    base = ["--root", str(root), "--index-dir", str(tmp_path / "i")]
    plainly = "holds no Markdown files (the files read end in .md, .markdown)"
    for command in (["index"], ["status"], ["search", "anything"]):
        out = run(*command, *base, env_extra={"MCP_DOCS_EMBEDDINGS": "local"})
        assert out.returncode == 0, out.stderr
        assert plainly in " ".join(out.stdout.split()), command  # rich may wrap the long line
        assert "not built" not in out.stdout and "No match" not in out.stdout
    note = json.loads(run("search", "anything", *base, "--json").stdout)["note"]
    assert plainly in note


def test_status_before_the_first_index_says_not_indexed_yet_not_no_markdown(tmp_path: Path) -> None:
    root = tmp_path / "notes"
    (root / "deep" / "er").mkdir(parents=True)
    (root / "deep" / "er" / "note.md").write_text("# Note\n\nText.\n")
    (root / "node_modules").mkdir()
    (root / "node_modules" / "pkg.md").write_text("# Not served\n")
    base = ["--root", str(root), "--index-dir", str(tmp_path / "i")]
    out = " ".join(run("status", *base, env_extra={"MCP_DOCS_EMBEDDINGS": "local"}).stdout.split())
    assert "No document is indexed yet" in out and "holds no Markdown files" not in out
    assert "0 of 0" not in out and "(100.0%)" not in out and "embeds the 0 documents" not in out
    assert "vectors none yet (no document indexed)" in out
    # only files the rules exclude: the folder holds nothing to index, as before
    (root / "deep" / "er" / "note.md").unlink()
    out = " ".join(run("status", *base).stdout.split())
    assert "holds no Markdown files" in out and "indexed yet" not in out


def test_a_large_folder_without_markdown_is_not_said_to_hold_some_after_it_was_indexed(tmp_path: Path) -> None:
    """20,500 text files and no note: the look for a first note stops at 20,000 entries, and took the folder to
    hold Markdown, so `mcp-docs index` itself ended with 'holds Markdown files, but no sync has committed any
    (`mcp-docs index` builds the index…)', as did status and search after it."""
    root = tmp_path / "texts"
    for i in range(205):
        folder = root / f"d{i:03d}"
        folder.mkdir(parents=True)
        for j in range(100):
            (folder / f"f{j}.txt").touch()
    base = ["--root", str(root), "--index-dir", str(tmp_path / "i")]
    out = " ".join(run("index", *base).stdout.split())
    assert "holds no Markdown files" in out and "holds Markdown files" not in out, out  # the sync looked at all
    out = " ".join(run("search", "anything", *base).stdout.split())  # it syncs first: it looked at all too
    assert "holds no Markdown files" in out and "holds Markdown files" not in out, out
    out = " ".join(run("status", *base).stdout.split())  # only the first 20,000 entries: it says so
    assert "holds Markdown files" not in out and "indexed yet" not in out, out
    assert "the first 20,000 entries of" in out and "hold no Markdown file" in out, out


def test_snippet_emphasis_is_bold_on_a_terminal_and_plain_when_piped(tmp_path: Path) -> None:
    root = tmp_path / "one"
    root.mkdir()
    (root / "note.md").write_text("# Note\n\nThe quokka [smiles] *a lot*.\n")
    base = ["search", "quokka", "--root", str(root), "--index-dir", str(tmp_path / "i")]
    piped = run(*base)
    assert "**quokka**" in piped.stdout
    terminal = run(*base, env_extra={"FORCE_COLOR": "1", "TERM": "xterm", "COLUMNS": "200"})
    assert "**" not in terminal.stdout and "\x1b[1mquokka\x1b[0m" in terminal.stdout
    assert "[smiles] *a lot*" in terminal.stdout  # nothing else is taken as markup


def test_the_suggested_read_command_works_when_pasted_into_a_shell(tmp_path: Path) -> None:
    # Spaces in names are the rule in note vaults; a heading may hold '$' or '`', an id may begin with '-'.
    root = tmp_path / "v"
    (root / "my notes").mkdir(parents=True)
    (root / "my notes" / "a b.md").write_text("# Costs in $HOME `today`\n\nwombatword\n")
    (root / "-rf.md").write_text("# Dash\n\nquokkaword\n")
    base = ["--root", str(root), "--index-dir", str(tmp_path / "i")]
    for word, expected in (("wombatword", "wombatword"), ("quokkaword", "quokkaword")):
        out = run("search", word, *base)
        command = out.stdout.split("Next: ", 1)[1].split(" for the text", 1)[0]
        argv = shlex.split(command)  # as a POSIX shell splits it ('mcp-docs read my notes/a b.md' was 4 words)
        assert argv[:2] == ["mcp-docs", "read"]
        read = run(*argv[1:], *base)
        assert read.returncode == 0 and expected in read.stdout, (command, read.stderr)


def test_status_keeps_each_table_short_and_ends_with_the_gist(tmp_path: Path) -> None:
    """105 skipped files printed 105 rows (and broken links up to 100 more) after the embedding progress, which a
    new user then had to scroll back for: each table shows 100 rows, and the gist comes again at the end."""
    root = tmp_path / "vault"
    root.mkdir()
    (root / "note.md").write_text("# Note\n\nhello\n")
    for i in range(105):
        (root / f"bin{i:03}.md").write_bytes(b"\x00binary\x00")
    base = ["--root", str(root), "--index-dir", str(tmp_path / "idx")]
    assert run("index", *base).returncode == 0
    out = run("status", *base)
    assert out.returncode == 0, out.stderr
    assert "… and 5 more" in out.stdout and "bin104.md" not in out.stdout
    gist = " ".join(out.stdout[out.stdout.rindex("summary") :].split())  # the terminal may wrap it
    assert out.stdout.rindex("summary") > out.stdout.index("… and 5 more")
    assert gist.startswith("summary 1 document;") and "105 files skipped" in gist
    assert len(json.loads(run("status", *base, "--json").stdout)["skipped"]) == 105
