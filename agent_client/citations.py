"""Citations checked against what the run actually read.

The system prompt asks for sources like `(guides/setup.md — Installation)`. A citation is verified only when
a search or read tool of this run returned that document (and that heading, when one is given): its id and
heading appear in the arguments or the text of a successful search/read call. Anything else is flagged, so a
source the model invented or remembered from elsewhere does not pass for one it read."""

from __future__ import annotations

import re
from collections.abc import Sequence

from .models import Citation

# a parenthesised group; each `;`-separated part that starts with a document id (a path with an extension)
_GROUP = re.compile(r"\(([^()\n]{3,300})\)")
_PART = re.compile(
    r"^\s*(?P<id>[\w./-]*\w\.[A-Za-z][A-Za-z0-9]{1,9})(?:\s*(?:—|–|-|§|:|,|#)\s*(?P<heading>[^;]+?))?\s*$"
)


def is_evidence_tool(name: str) -> bool:
    """Search and read tools return documents; listing tools only name them."""
    low = name.lower()
    return "search" in low or "read" in low


def parse_citations(answer: str) -> list[tuple[str, str | None]]:
    found: list[tuple[str, str | None]] = []
    for group in _GROUP.finditer(answer):
        for part in group.group(1).split(";"):
            m = _PART.match(part)
            if m:
                key = (m.group("id"), (m.group("heading") or "").strip(" .\"'`*") or None)
                if key not in found:
                    found.append(key)
    return found


def _norm(text: str) -> str:
    return " ".join(text.lower().split())


def check_citations(answer: str, evidence: Sequence[str]) -> list[Citation]:
    """`evidence`: the arguments and the text of each successful search/read call of the run."""
    seen = [_norm(e) for e in evidence]
    out = []
    for doc_id, heading in parse_citations(answer):
        verified = any(_norm(doc_id) in e and (heading is None or _norm(heading) in e) for e in seen)
        out.append(Citation(id=doc_id, heading=heading, verified=verified))
    return out
