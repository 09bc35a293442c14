import os
from pathlib import Path

import pytest

from mcp_docs.paths import FileTooLarge, Jail, PathOutsideRoot

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
