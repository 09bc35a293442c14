"""What every embedder shares: its error, the vector normalisation, the model file check.

A module of its own so that an embedder in another module (e5_embedder.py) and the factory that picks it
(embedders.py) both import from here, not from each other.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np

from .errors import McpDocsError

DEFAULT_THREADS = 2
E5 = "multilingual-e5-small"


class EmbedderError(McpDocsError, RuntimeError):
    """The embedder cannot run (model missing or corrupted, endpoint unreachable, key missing)."""


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def normalize(v: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length (a zero row stays zero), float32 and contiguous as sqlite-vec reads them."""
    v = np.ascontiguousarray(v, dtype=np.float32)
    norms = np.linalg.norm(v, axis=-1, keepdims=True)
    norms[norms == 0] = 1.0
    return np.ascontiguousarray(v / norms, dtype=np.float32)
