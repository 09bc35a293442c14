import errno
import os
from pathlib import Path

import pathspec
import pytest

from mcp_docs.errors import FileTooLarge, NotServed, PathOutsideRoot
from mcp_docs.paths import Jail, ServeRules

ATTACKS = [
    "../../etc/passwd",
    "..\\..\\windows\\win.ini",
    "guides/../../outside/secret.md",
    "%2e%2e/%2e%2e/etc/passwd",
    "%252e%252e%252fetc%252fpasswd",
    "/etc/passwd",
    "C:\\Windows\\win.ini",
    "//server/share/x.md",
    "index.md\x00.txt",
    "index%00.md",
    "",
]


@pytest.mark.parametrize("attack", ATTACKS)
def test_jail_refuses_escapes(vault: Path, attack: str) -> None:
    jail = Jail(vault)
    with pytest.raises((PathOutsideRoot, FileNotFoundError)):
        jail.resolve_id(attack)


def test_jail_refuses_sibling_with_same_prefix(vault: Path) -> None:
    jail = Jail(vault)
    sibling = vault.parent / "vault_evil" / "evil.md"
    assert not jail.contains(sibling)
    with pytest.raises(PathOutsideRoot):
        jail.read_bytes(sibling, 1_000_000)


def test_jail_follows_links_only_inside(vault: Path) -> None:
    jail = Jail(vault)
    assert jail.resolve_id("writing-link.md") == vault / "writing-link.md"
    with pytest.raises(PathOutsideRoot, match="outside"):
        jail.resolve_id("leak.md")
    with pytest.raises(PathOutsideRoot, match="outside"):
        jail.resolve_id("outside-folder/secret.md")
    with pytest.raises(PathOutsideRoot, match="dangling"):
        jail.resolve_id("dangling.md")
    with pytest.raises(PathOutsideRoot):
        jail.read_bytes(vault / "leak.md", 1_000_000)


def test_jail_resolves_normal_ids(vault: Path) -> None:
    jail = Jail(vault)
    assert jail.resolve_id("guides/setup/install.md") == vault / "guides" / "setup" / "install.md"
    assert jail.resolve_id("./guides//writing.md") == vault / "guides" / "writing.md"
    with pytest.raises(FileNotFoundError):
        jail.resolve_id("guides/nope.md")


def test_read_bytes_enforces_size_limit(vault: Path) -> None:
    jail = Jail(vault)
    with pytest.raises(FileTooLarge, match="limit"):
        jail.read_bytes(vault / "huge.md", 5 * 1024 * 1024)
    assert jail.read_bytes(vault / "index.md", 5 * 1024 * 1024).startswith(b"---")


def test_read_bytes_refuses_a_link_swapped_in(vault: Path, tmp_path: Path) -> None:
    jail = Jail(vault)
    target = vault / "notes" / "swap.md"
    target.write_text("# fine\n")
    assert jail.read_bytes(target, 1000) == b"# fine\n"
    target.unlink()
    os.symlink(tmp_path / "outside" / "secret.md", target)
    with pytest.raises(PathOutsideRoot):
        jail.read_bytes(target, 1000)


def test_relative_folder(vault: Path) -> None:
    jail = Jail(vault)
    assert jail.relative_folder("") == ""
    assert jail.relative_folder("guides/setup/") == "guides/setup"
    with pytest.raises(PathOutsideRoot):
        jail.relative_folder("../outside")


# -- what may be served: the rules, judged on every name a path goes by ------------------------------------

RULES = ServeRules((".md",), pathspec.GitIgnoreSpec.from_lines(["secret/", "/top/private.md", "!keep.md"]))


@pytest.mark.parametrize(
    ("rel", "is_dir", "excluded"),
    [
        ("", True, False),  # the root itself
        ("a.md", False, False),
        ("a.txt", False, True),
        (".a.md", False, True),
        ("docs/.git", True, True),
        ("node_modules/x/a.md", False, True),
        ("secret", True, True),
        ("deep/secret/a.md", False, True),  # an ignored folder at any depth
        ("top/private.md", False, True),
        ("sub/top/private.md", False, False),  # anchored pattern
        ("secret/keep.md", False, True),  # a file in an ignored folder cannot be re-included (gitignore)
        ("docs", True, False),
    ],
)
def test_rules_excludes(rel: str, is_dir: bool, excluded: bool) -> None:
    assert RULES.excludes(rel, is_dir) is excluded


@pytest.fixture
def rules_root(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    for rel in (
        "ok.md",
        "secret/s.md",
        "secret/relay-target.md",
        ".hidden/h.md",
        "dir/inner.md",
        "dir/.dot.md",
        "notes.txt",
        "top/private.md",
    ):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(rel)
    (tmp_path / "outside.md").write_text("outside")
    links = {
        "to-ok.md": "ok.md",
        "to-secret.md": "secret/s.md",
        "to-txt.md": "notes.txt",
        "to-hidden": ".hidden",
        "hop.md": "to-secret.md",
        "chain.md": "hop.md",
        "via-secret.md": "secret/relay.md",
        "secret/relay.md": "../ok.md",
        "dir-link": "dir",
        "ghost.md": "secret/none.md",
        "gone.md": "none.md",
        "out.md": "../outside.md",
        "loop-a.md": "loop-b.md",
        "loop-b.md": "loop-a.md",
        "up-and-in.md": "../root/secret/s.md",
        "dot-named-hop.md": ".dot-link.md",
        ".dot-link.md": "ok.md",
        "top-link": "top",
        "txt-hop.md": "hop.txt",
        "hop.txt": "ok.md",
        "dir/back.md": "../secret/../ok.md",
    }
    for name, target in links.items():
        os.symlink(target, root / name)
    return root


@pytest.mark.parametrize(
    "rel",
    [
        "to-secret.md",
        "to-txt.md",
        "to-hidden/h.md",
        "to-hidden",
        "hop.md",
        "chain.md",
        "via-secret.md",
        "dir-link/.dot.md",
        "ghost.md",
        "up-and-in.md",
        "dot-named-hop.md",
        "top-link/private.md",
        "txt-hop.md",
        "dir/back.md",
        "secret/relay.md",
        "notes.txt",
        ".hidden/h.md",
    ],
)
def test_check_servable_refuses_every_way_to_an_excluded_place(rules_root: Path, rel: str) -> None:
    jail = Jail(rules_root, RULES)
    with pytest.raises(NotServed):
        jail.check_servable(rules_root / rel)
    with pytest.raises(NotServed):  # and as an id, exactly like a missing one (NotServed is a FileNotFoundError)
        jail.resolve_id(rel)
    if not rel.startswith(("to-hidden", "ghost")):
        with pytest.raises(FileNotFoundError):
            jail.read_bytes(rules_root / rel, 1000)


def test_check_servable_serves_links_that_stay_in_served_places(rules_root: Path) -> None:
    jail = Jail(rules_root, RULES)
    assert jail.check_servable(rules_root / "to-ok.md") == str(rules_root / "ok.md")
    assert jail.check_servable(rules_root / "dir-link" / "inner.md") == str(rules_root / "dir" / "inner.md")
    assert jail.check_servable(rules_root / "dir-link", folder=True) == str(rules_root / "dir")
    assert jail.read_bytes(rules_root / "dir-link" / "inner.md", 1000) == b"dir/inner.md"
    assert jail.resolve_id("to-ok.md") == rules_root / "to-ok.md"


def test_check_servable_tells_missing_outside_and_loops_apart(rules_root: Path) -> None:
    jail = Jail(rules_root, RULES)
    with pytest.raises(FileNotFoundError) as missing:
        jail.check_servable(rules_root / "gone.md")
    assert not isinstance(missing.value, NotServed)
    with pytest.raises(PathOutsideRoot):
        jail.check_servable(rules_root / "out.md")
    with pytest.raises(OSError) as loop:
        jail.check_servable(rules_root / "loop-a.md")
    assert loop.value.errno == errno.ELOOP
    with pytest.raises(PathOutsideRoot, match="dangling"):
        jail.resolve_id("loop-a.md")
    with pytest.raises(PathOutsideRoot):  # a lexical '..' in a path handed to the jail is never followed
        jail.check_servable(str(rules_root) + "/dir/../ok.md")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_read_bytes_refuses_a_fifo_without_hanging(vault: Path) -> None:
    jail = Jail(vault)
    os.mkfifo(vault / "pipe.md")
    os.symlink("pipe.md", vault / "to-pipe.md")
    for name in ("pipe.md", "to-pipe.md"):  # no writer ever comes: a blocking open would wait forever
        with pytest.raises(IsADirectoryError):
            jail.read_bytes(vault / name, 1000)


@pytest.mark.skipif(os.sep != "/", reason="a backslash is a separator on Windows")
def test_ids_with_backslashes_or_percent_escapes_in_file_names_resolve_to_those_files(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    (root / "notes").mkdir(parents=True)
    odd = [r"notes\draft.md", "50%25 done.md", "a%2fb.md"]
    for name in odd:
        (root / name).write_text("# Odd\n\nan odd name\n")
    jail = Jail(root)
    for name in odd:
        assert jail.resolve_id(name) == root / name
    # the decoded form still decides what is refused: a literal file cannot open a way out
    (root / "%2e%2e").mkdir()
    for attack in ("%2e%2e/%2e%2e/etc/passwd", "..\\..\\etc\\passwd", "notes\\..\\..\\x.md"):
        with pytest.raises(PathOutsideRoot):
            jail.resolve_id(attack)


@pytest.mark.skipif(os.sep != "/", reason="a backslash is a separator on Windows")
def test_a_note_with_a_backslash_in_its_name_is_read_and_embedded(tmp_path: Path) -> None:
    from mcp_docs.library import Library
    from mcp_docs.settings import Settings
    from mcp_docs.tools import DocsTools

    root = tmp_path / "vault"
    root.mkdir()
    (root / r"deploy\prod.md").write_text("# Deploy\n\nRun kubectl apply on the cluster.\n")
    (root / "plain.md").write_text("# Plain\n\nNothing odd here.\n")
    with Library(Settings.load(root, tmp_path / "index", embeddings="local", environ={})) as lib:
        lib.sync()
        assert lib.embedding is not None and lib.vectors is not None
        lib.embedding.build()
        assert lib.vectors.coverage() == 1.0
        tools = DocsTools(lib)  # before: listed and searchable, but "No document" when read, and never embedded
        assert [r.id for r in tools.search_documents("kubectl", mode="keyword").results] == [r"deploy\prod.md"]
        assert "kubectl apply" in tools.read_document(r"deploy\prod.md").content
    with Library(Settings.load(root, tmp_path / "index", embeddings="local", environ={})) as lib:
        assert lib.vectors is not None and lib.vectors.status()["pending"] == 0  # as `mcp-docs status` sees it
