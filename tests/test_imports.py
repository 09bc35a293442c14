"""The packages' import graph: no cycles (function-level imports count too), and the index layer never reaches up.

Built from the AST of every module, so an import hidden in a function or under TYPE_CHECKING is seen.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("mcp_docs", "agent_client")
# Modules the index layer must never import: it is the storage below the facade, the tools and the CLI.
ABOVE_INDEX = ("mcp_docs.library", "mcp_docs.tools", "mcp_docs.mcp.server", "mcp_docs.commands", "mcp_docs.cli")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for pkg in PACKAGES for p in sorted((REPO / pkg).rglob("*.py"))}


def _resolve(module: str, path: Path, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    base = package[: len(package) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def import_graph() -> dict[str, set[str]]:
    modules = _modules()
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = _resolve(name, path, node)
                # `from . import ownership` imports a module; `from .x import Name` imports x.
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
            for target in targets:
                while target and target not in modules:  # `a.b.Name` -> the module `a.b`
                    target = target.rpartition(".")[0]
                # Importing `a.b.c` runs `a/__init__` and `a/b/__init__` first: those are edges too (settings ->
                # rerank.local ran rerank/__init__, which imported settings). A package's own __init__ ran before
                # its submodules, so a module's edge to a package it sits in is not a cycle of ours.
                for module in (target, *_packages_of(target)):
                    if module in modules and module != name and not name.startswith(module + "."):
                        graph[name].add(module)
    return graph


def _packages_of(module: str) -> list[str]:
    """`a.b.c` -> ['a.b', 'a']: the packages whose __init__ runs before `a.b.c` is imported."""
    parts = module.split(".")
    return [".".join(parts[:i]) for i in range(len(parts) - 1, 0, -1)]


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}  # 1 on the stack, 2 done
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt) :], nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def test_the_checker_sees_a_cycle() -> None:
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_the_graph_sees_function_level_and_relative_imports() -> None:
    graph = import_graph()
    assert "mcp_docs.settings" in graph["mcp_docs.cli"]
    assert "mcp_docs.commands" in graph["mcp_docs.cli"]  # imported inside main()
    assert "mcp_docs.search.pipeline" in graph["mcp_docs.library"]  # `from .search import pipeline`
    assert "mcp_docs.rerank" in graph["mcp_docs.library"]  # `from .rerank import make_reranker`


def test_the_graph_sees_the_package_init_an_import_runs() -> None:
    """`from .rerank.local import x` inside a function runs rerank/__init__ first: an edge to it, as to the module."""
    graph = import_graph()
    assert "mcp_docs.serve" in graph["mcp_docs.commands"]  # `from .serve.process import ...` inside cmd_serve
    assert "mcp_docs.serve.process" in graph["mcp_docs.commands"]


def test_no_import_cycles() -> None:
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


@pytest.mark.parametrize("module", sorted(m for m in _modules() if m.startswith(("mcp_docs.index", "mcp_docs.store"))))
def test_the_index_layer_never_imports_upward(module: str) -> None:
    upward = sorted(t for t in import_graph()[module] if t in ABOVE_INDEX)
    assert not upward, f"{module} imports {upward}"


# Inside the index layer: the vector store knows nothing of who fills it (the embedding worker) or who
# searches it (hybrid), chunking nothing of where chunks are kept, and searching never starts embedding.
INDEX_NEVER_IMPORTS = {
    "mcp_docs.store.embedded.vector_store": (
        "mcp_docs.index.embedding_worker",
        "mcp_docs.search.hybrid",
        "mcp_docs.store.embedded.sync",
    ),
    "mcp_docs.index.chunking": ("mcp_docs.store.embedded.vector_store", "mcp_docs.index.embedding_worker"),
    "mcp_docs.search.hybrid": ("mcp_docs.index.embedding_worker", "mcp_docs.store.embedded.sync"),
    "mcp_docs.index.embedding_worker": ("mcp_docs.search.hybrid", "mcp_docs.store.embedded.sync"),
}


@pytest.mark.parametrize("module", sorted(INDEX_NEVER_IMPORTS))
def test_the_vector_side_of_the_index_is_layered(module: str) -> None:
    graph = import_graph()
    assert module in graph, f"{module} is gone: update INDEX_NEVER_IMPORTS"
    wrong = sorted(t for t in graph[module] if t in INDEX_NEVER_IMPORTS[module])
    assert not wrong, f"{module} imports {wrong}"


def test_the_store_package_reaches_no_library() -> None:
    """settings -> store.postgres.dsn runs store/__init__: were it to import the library, settings would reach it back."""
    graph = import_graph()
    assert "mcp_docs.store.postgres.dsn" in graph["mcp_docs.settings"]
    assert not graph["mcp_docs.store"], f"store/__init__ imports {sorted(graph['mcp_docs.store'])}"


# The search pipeline is given its stores (search.sources.SearchSources): it never imports the library, a store
# or the layers above, only the stores' protocols (store.api). The storage layers (index/, store/) may use the pure
# helpers they share with search (the document term sets they write, translation keys, the bonus type), never the
# pipeline.
SEARCH_HELPERS_FOR_STORAGE = (
    "mcp_docs.search",
    "mcp_docs.search.document_signals",
    "mcp_docs.search.translations",
    "mcp_docs.search.ranking",
)


@pytest.mark.parametrize("module", sorted(m for m in _modules() if m.startswith("mcp_docs.search")))
def test_the_search_pipeline_reads_only_the_stores_it_is_given(module: str) -> None:
    wrong = sorted(
        t
        for t in import_graph()[module]
        # store/__init__ runs with store.api, and imports nothing (test_the_store_package_reaches_no_library)
        if t in ABOVE_INDEX or (t.startswith("mcp_docs.store.") and t != "mcp_docs.store.api")
    )
    assert not wrong, f"{module} imports {wrong}"


@pytest.mark.parametrize("module", sorted(m for m in _modules() if m.startswith(("mcp_docs.index", "mcp_docs.store"))))
def test_the_storage_layers_use_only_the_pure_search_helpers(module: str) -> None:
    wrong = sorted(
        t for t in import_graph()[module] if t.startswith("mcp_docs.search") and t not in SEARCH_HELPERS_FOR_STORAGE
    )
    assert not wrong, f"{module} imports {wrong}"


# The rooms issue: one idea per module, and no module past 600 lines (a longer one holds two ideas to split).
MAX_MODULE_LINES = 600


def test_no_module_is_longer_than_the_rooms_limit() -> None:
    long = {
        name: n
        for name, path in _modules().items()
        if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES
    }
    assert not long, f"modules over {MAX_MODULE_LINES} lines: {long}"
