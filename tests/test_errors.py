"""One exception root per package: every exception class mcp_docs defines derives from `McpDocsError`, every one
agent_client defines from `AgentError`, so a caller (the command line, a tool, an embedding program) catches one
class; and the command line turns any of mcp_docs' into its sentence and exit status 2."""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
from pathlib import Path

import pytest

from agent_client.errors import AgentError
from mcp_docs.cli import main
from mcp_docs.errors import DatabaseUnavailable, McpDocsError, SettingsInvalid, ToolCallFailed, ToolInputError

ROOTS = {"mcp_docs": McpDocsError, "agent_client": AgentError}


def _modules(package: str) -> list[str]:
    root = importlib.import_module(package)
    return [package] + [m.name for m in pkgutil.walk_packages(root.__path__, f"{package}.")]


@pytest.mark.parametrize("package", sorted(ROOTS))
def test_every_exception_class_derives_from_its_package_root(package: str) -> None:
    root, seen, strays = ROOTS[package], [], []
    for name in _modules(package):
        module = importlib.import_module(name)
        for cls in vars(module).values():
            if inspect.isclass(cls) and issubclass(cls, BaseException) and cls.__module__ == name:
                seen.append(f"{name}.{cls.__qualname__}")
                if not issubclass(cls, root):
                    strays.append(f"{name}.{cls.__qualname__} ({', '.join(b.__name__ for b in cls.__bases__)})")
    assert seen, f"no exception class found in {package}: the walk is broken"
    assert not strays, f"not derived from {root.__name__}: {strays}"


@pytest.mark.parametrize("package", sorted(ROOTS))
def test_no_exception_class_hides_inside_a_function(package: str) -> None:
    """The walk above sees module-level classes; one defined in a function would escape it."""
    hidden = []
    for path in sorted((Path(__file__).resolve().parents[1] / package).rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for fn in ast.walk(tree):
            if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
                hidden += [f"{path.name}:{c.lineno}" for c in ast.walk(fn) if isinstance(c, ast.ClassDef)]
    exceptions = [h for h in hidden if "Error" in h or "Exception" in h]
    assert not exceptions


def test_the_walk_finds_the_classes_it_must() -> None:
    """A class outside errors.py is seen too (the rerank and embedder errors live beside what raises them)."""
    from mcp_docs.embedders import EmbedderError
    from mcp_docs.rerank.base import RerankError

    assert issubclass(EmbedderError, McpDocsError) and issubclass(EmbedderError, RuntimeError)
    assert issubclass(RerankError, McpDocsError)


def test_an_unreachable_database_is_not_a_wrong_request() -> None:
    """DatabaseUnavailable is the database's failure, not the caller's input; a tool answers both in one sentence."""
    assert not issubclass(DatabaseUnavailable, ToolInputError)
    assert issubclass(DatabaseUnavailable, ToolCallFailed) and issubclass(ToolInputError, ToolCallFailed)


def test_settings_errors_stay_value_errors_for_their_callers() -> None:
    assert issubclass(SettingsInvalid, ValueError) and issubclass(SettingsInvalid, McpDocsError)


def test_the_command_line_reports_a_settings_error_and_a_refusal_the_same_way(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Through the one `except McpDocsError` of `main`: a bad setting and a tool's refusal, exit status 2, one line."""
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("# A\n\ntext\n", encoding="utf-8")
    index = str(tmp_path / "index")
    assert main(["search", "x", "--root", str(tmp_path / "nowhere"), "--index-dir", index]) == 2
    assert capsys.readouterr().err.strip() == (
        f"error: The documents root does not exist or is not a folder: {tmp_path / 'nowhere'}"
    )
    args = ["--root", str(tmp_path / "docs"), "--index-dir", index]
    assert main(["read", "nosuch.md", *args]) == 2
    assert capsys.readouterr().err.startswith("error: No document 'nosuch.md'")


def test_no_module_raises_the_generic_user_error() -> None:
    """`UserError` is only the common base of the start and command-line refusals: each raise names its situation
    (IndexCannotOpen, PortUnavailable, DatabaseIndexMismatch...), so a caller can tell them apart. Issue 28."""
    generic = []
    for path in sorted((Path(__file__).resolve().parents[1] / "mcp_docs").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Raise) and node.exc is not None:
                raised = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
                if isinstance(raised, ast.Name) and raised.id == "UserError":
                    generic.append(f"{path.name}:{node.lineno}")
    assert not generic, f"raise a class named for the situation, not UserError: {generic}"


def test_the_named_refusals_share_the_user_error_base() -> None:
    """A --workers process exits as refused (not restarted) on any of them: it catches their common base."""
    from mcp_docs import errors

    named = [
        errors.IndexCannotOpen,
        errors.TokenFileUnusable,
        errors.ServeOptionsConflict,
        errors.ExposureRefused,
        errors.PortUnavailable,
        errors.WorkerFailed,
        errors.DatabaseIndexMismatch,
        errors.DatabaseRefused,
        errors.RootNotGiven,
        errors.RootMissing,
        errors.IndexUnwritable,
    ]
    assert all(issubclass(cls, errors.UserError) and issubclass(cls, McpDocsError) for cls in named)


@pytest.mark.parametrize("package", sorted(ROOTS))
def test_the_walk_visits_every_module_of_the_package(package: str) -> None:
    """Modules move and split (issue 28): the walk above must still see each file, new ones included."""
    root = Path(__file__).resolve().parents[1] / package
    files = {
        ".".join((package, *p.relative_to(root).with_suffix("").parts)).removesuffix(".__init__")
        for p in root.rglob("*.py")
    }
    assert files == set(_modules(package))


def test_a_tool_refusal_is_named_for_what_the_caller_got_wrong(tmp_path: Path) -> None:
    """Through the real tools over a real index: each situation raises its own class (issue 28), every one a
    ToolInputError, so the server still answers it as an `is_error` result and the command line with exit 2."""
    from mcp_docs.errors import (
        ArgumentInvalid,
        DocumentNotFound,
        FolderNotFound,
        OffsetPastEnd,
        PathRefused,
        SectionAmbiguous,
        SectionNotFound,
    )
    from mcp_docs.library import Library
    from mcp_docs.settings import Settings
    from mcp_docs.tools import DocsTools

    root = tmp_path / "docs"
    root.mkdir()
    (root / "a.md").write_text("# A\n\n## Setup\n\nx\n\n## Setup notes\n\ny\n", encoding="utf-8")
    with Library(Settings.load(root, tmp_path / "index", embeddings="none")) as library:
        library.sync()
        tools = DocsTools(library)
        cases = [
            (ArgumentInvalid, lambda: tools.read_document("a.md", mode="raw")),
            (ArgumentInvalid, lambda: tools.search_documents("x", max_results="many")),  # type: ignore[arg-type]
            (ArgumentInvalid, lambda: tools.search_documents("caf\udce9")),
            (OffsetPastEnd, lambda: tools.read_document("a.md", offset=10**6)),
            (SectionNotFound, lambda: tools.read_section("a.md", "Budget")),
            (SectionAmbiguous, lambda: tools.read_section("a.md", "set")),
            (DocumentNotFound, lambda: tools.read_document("b.md")),
            (DocumentNotFound, lambda: tools.read_section("b.md", "Setup")),
            (FolderNotFound, lambda: tools.search_documents("x", folder="nowhere")),
            (FolderNotFound, lambda: tools.list_documents(folder="nowhere")),
            (PathRefused, lambda: tools.read_document("../outside.md")),
        ]
        for cls, call in cases:
            with pytest.raises(cls) as exc:
                call()
            assert isinstance(exc.value, ToolInputError), cls
