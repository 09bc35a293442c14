"""A running server needs none of its own source files again: everything a request imports is imported at
start-up. The review re-ran `pip install` under a running server and every search failed ("internal error",
`ImportError: cannot import name 'hybrid'`) because the first hybrid search imported its modules then.

Here the server runs from a copy of the package, which is deleted once the server has answered `initialize`;
then every tool, in every search mode, with embeddings and a reranker on, must still answer."""

from __future__ import annotations

import shutil
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

import mcp_docs
from tests.rerank.fake_server import RerankServer
from tests.server_fixtures import child_env, make_vault, serve_args
from tests.test_embedders import FAKE_KEY, EmbeddingsServer

COPY_VERSION = "0.0.0+copy"


@pytest.fixture
def embeddings() -> Iterator[EmbeddingsServer]:
    with EmbeddingsServer() as srv:
        yield srv


def copy_package(into: Path) -> Path:
    """mcp_docs copied under `into`, its version changed so that the test can tell which copy answers."""
    target = into / "mcp_docs"
    shutil.copytree(Path(mcp_docs.__file__).parent, target, ignore=shutil.ignore_patterns("__pycache__"))
    init = target / "__init__.py"
    init.write_text(init.read_text().replace(f'"{mcp_docs.__version__}"', f'"{COPY_VERSION}"', 1))
    return target


@pytest.mark.anyio
async def test_a_running_server_answers_with_its_package_files_gone(
    tmp_path: Path, embeddings: EmbeddingsServer
) -> None:
    root = make_vault(tmp_path)
    package = copy_package(tmp_path / "site")
    with RerankServer("tei") as reranker:
        env = child_env(
            PYTHONPATH=str(tmp_path / "site"),
            PYTHONDONTWRITEBYTECODE="1",  # no .pyc beside the copy to import from instead
            MCP_DOCS_EMBEDDINGS_BASE_URL=embeddings.base_url,
            MCP_DOCS_EMBEDDINGS_MODEL="bow",
            MCP_DOCS_EMBEDDINGS_API_KEY_ENV="EMB_KEY",
            EMB_KEY=FAKE_KEY,
            MCP_DOCS_RERANK_URL=reranker.url,
        )
        args = [a if a != "none" else "openai" for a in serve_args(root, tmp_path / "idx", "--no-watch")]
        params = StdioServerParameters(command=sys.executable, args=args, env=env, cwd=str(tmp_path))
        async with Client(params) as client:
            assert client.server_info is not None and client.server_info.version == COPY_VERSION  # the copy runs
            # The vectors are built in the background: wait until the embeddings service has been quiet for a
            # second (no search may run before the files go: it would import what it needs, as a warm-up).
            deadline = time.monotonic() + 60
            seen, quiet_since = -1, time.monotonic()
            while not (embeddings.requests and time.monotonic() - quiet_since > 1.0):
                assert time.monotonic() < deadline, "no embedding"
                if len(embeddings.requests) != seen:
                    seen, quiet_since = len(embeddings.requests), time.monotonic()
                time.sleep(0.1)
            shutil.rmtree(package)  # as an upgrade in progress would leave it
            calls = [
                ("search_documents", {"query": "restic snapshots", "mode": mode}) for mode in ("keyword", "hybrid")
            ]
            calls += [
                ("search_documents", {"query": "journalctl", "mode": "semantic", "folder": "guides"}),
                ("search_documents", {"query": "nothing matches zzqx", "mode": "hybrid", "tags": ["misc"]}),
                ("list_documents", {"folder": "notes"}),
                ("list_documents", {"linked_to": "guides/install.md"}),
                ("read_document", {"id": "notes/long.md", "mode": "outline"}),
                ("read_document", {"id": "notes/long.md", "mode": "summary"}),
                ("read_document", {"id": "notes/long.md", "max_chars": 500, "offset": 100}),
                ("read_section", {"id": "guides/install.md", "section": "Linux"}),
                ("read_document", {"id": "no/such.md"}),  # a refusal, with suggestions
            ]
            for name, arguments in calls:
                result = await client.call_tool(name, arguments)
                text = result.content[0].text  # type: ignore[union-attr]
                assert "internal error" not in text, (name, arguments, text)
                if name != "read_document" or arguments["id"] != "no/such.md":
                    assert not result.is_error, (name, arguments, text)
                if name == "search_documents":  # each mode ran as asked, reranked: nothing fell back
                    found = result.structured_content
                    assert found is not None and found["mode_used"] == arguments["mode"], found
                    assert found["reranked"] or not found["results"], found
            assert (await client.list_resources()).resources
            assert (await client.get_prompt("answer_from_docs", {"question": "q"})).messages
