"""The documents root and the index folder never contain each other, in either direction, as written or
through links (the index is a cache mcp-docs may delete; the root is never written)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcp_docs.settings import Settings


def _load(root: Path, index: Path) -> Settings:
    return Settings.load(root, index, embeddings="none", environ={})


@pytest.fixture
def base(tmp_path: Path) -> Path:
    (tmp_path / "notes" / "sub").mkdir(parents=True)
    (tmp_path / "elsewhere").mkdir()
    return tmp_path


def test_root_inside_the_index_folder_is_refused(base: Path) -> None:
    with pytest.raises(ValueError, match=r"root .* is inside the index folder"):
        _load(base / "notes" / "sub", base / "notes")
    with pytest.raises(ValueError, match="inside the index folder"):
        _load(base / "notes", base)


def test_same_folder_is_refused(base: Path) -> None:
    with pytest.raises(ValueError, match="inside"):
        _load(base / "notes", base / "notes")


def test_index_reached_through_a_link_into_the_root_is_refused(base: Path) -> None:
    (base / "elsewhere" / "link").symlink_to(base / "notes", target_is_directory=True)
    with pytest.raises(ValueError, match=r"index folder .* is inside the documents root"):
        _load(base / "notes", base / "elsewhere" / "link" / "index")


def test_root_reached_through_a_link_into_the_index_is_refused(base: Path) -> None:
    (base / "elsewhere" / "link").symlink_to(base / "notes", target_is_directory=True)
    with pytest.raises(ValueError, match=r"root .* is inside the index folder"):
        _load(base / "elsewhere" / "link" / "sub", base / "notes")


def test_index_that_is_a_link_to_a_parent_of_the_root_is_refused(base: Path) -> None:
    (base / "elsewhere" / "index").symlink_to(base, target_is_directory=True)
    with pytest.raises(ValueError, match="inside the index folder"):
        _load(base / "notes", base / "elsewhere" / "index")


def test_root_linked_inside_the_index_as_written_is_refused(base: Path) -> None:
    """The root given through a link that lives inside the index folder: resolved, they are apart, as written
    the index folder contains it (rebuilding the index could remove the link the user reaches the notes by)."""
    index = base / "elsewhere"
    (index / "notes-link").symlink_to(base / "notes", target_is_directory=True)
    with pytest.raises(ValueError, match="inside the index folder"):
        _load(index / "notes-link", index)


def test_separate_folders_are_fine(base: Path) -> None:
    settings = _load(base / "notes", base / "elsewhere" / "index")
    assert settings.index_dir == (base / "elsewhere" / "index").resolve()


def test_an_index_beside_the_root_named_with_dot_dot_is_fine(base: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # `cd notes && mcp-docs index --root . --index-dir ../elsewhere/index` was refused: 'notes/../elsewhere'
    # was compared as written, unnormalised, and so looked inside 'notes'.
    monkeypatch.chdir(base / "notes")
    settings = _load(Path("."), Path("../elsewhere/index"))
    assert settings.index_dir == (base / "elsewhere" / "index").resolve()
    assert _load(Path("sub/.."), Path("../elsewhere/index")).root == (base / "notes").resolve()
    with pytest.raises(ValueError, match="inside the documents root"):
        _load(Path("."), Path("../notes/index"))
    with pytest.raises(ValueError, match="inside the index folder"):
        _load(Path("."), Path("sub/../.."))


# -- every environment variable is read here, typed, and a bad value is one sentence naming it -------------


def test_environment_variables_become_typed_fields(base: Path, tmp_path: Path) -> None:
    env = {
        "MCP_DOCS_MAX_FILE_BYTES": "1000",
        "MCP_DOCS_PARSE_WORKERS": "3",
        "MCP_DOCS_PARSE_SECONDS": "1.5",
        "MCP_DOCS_TOKEN": " s3cret-token ",
        "MCP_DOCS_TOKEN_FILE": "~/token.txt",
        "MCP_DOCS_ALLOWED_HOSTS": "Docs.LAN, 10.0.0.5,,docs.lan",
        "MCP_DOCS_ALLOWED_ORIGINS": "https://App.example/",
        "MCP_DOCS_EMBEDDINGS": "openai",
        "MCP_DOCS_EMBEDDINGS_API_KEY_ENV": "MY_KEY",
        "MY_KEY": "sk-test",
        "OPENAI_BASE_URL": "http://127.0.0.1:11434/v1",
    }
    s = Settings.load(base / "notes", base / "elsewhere" / "idx", environ=env)
    assert (s.max_file_bytes, s.parse_workers, s.parse_seconds) == (1000, 3, 1.5)
    assert s.token == "s3cret-token" and s.token_file == Path("~/token.txt").expanduser()
    assert s.allowed_hosts == ("docs.lan", "10.0.0.5") and s.allowed_origins == ("https://app.example",)
    assert s.embeddings == "openai" and s.embeddings_api_key == "sk-test"
    assert s.embeddings_base_url == "http://127.0.0.1:11434/v1"  # the openai package's variable, when ours is unset
    assert "s3cret-token" not in repr(s) and "sk-test" not in repr(s)
    bare = _load(base / "notes", base / "elsewhere" / "idx")
    assert bare.parse_workers is None and bare.token is None and bare.allowed_hosts == ()
    # a flag still beats the variable
    assert (
        Settings.load(
            base / "notes", base / "elsewhere" / "idx", environ=env, embeddings_base_url="http://h/v1"
        ).embeddings_base_url
        == "http://h/v1"
    )


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("MCP_DOCS_MAX_FILE_BYTES", "5MB"),
        ("MCP_DOCS_PARSE_WORKERS", "many"),
        ("MCP_DOCS_PARSE_WORKERS", "-2"),
        ("MCP_DOCS_PARSE_SECONDS", "nan"),
        ("MCP_DOCS_MAX_SESSIONS", "2.5"),
        ("MCP_DOCS_SESSION_IDLE_SECONDS", "0"),
        ("MCP_DOCS_LANGUAGE", "klingon"),
        ("MCP_DOCS_EMBEDDINGS", "magic"),
    ],
)
def test_a_bad_value_is_one_sentence_naming_the_variable(base: Path, name: str, value: str) -> None:
    with pytest.raises(ValueError) as caught:
        Settings.load(base / "notes", base / "elsewhere" / "idx", environ={name: value})
    message = str(caught.value)
    assert name in message and value in message and "\n" not in message and "Traceback" not in message


def test_nothing_else_in_the_package_reads_the_environment() -> None:
    package = Path(__file__).parent.parent / "mcp_docs"
    readers = [
        f"{path.relative_to(package)}:{n}"
        for path in package.rglob("*.py")
        if path.name != "settings.py"
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if any(word in line for word in ("os.environ", "getenv(", "environ.get(")) and not line.lstrip().startswith("#")
    ]
    assert readers == [], "read environment variables in settings.py (Settings) only"
