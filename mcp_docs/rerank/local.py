"""A local cross-encoder: an ONNX export (ms-marco MiniLM, bge-reranker and the like) run by onnxruntime.

The folder holds `model.onnx` (or `onnx/model.onnx`, the Hugging Face export layout) and `tokenizer.json`.
Each (query, text) pair is encoded as the model was trained (`[CLS] query [SEP] text [SEP]` or its
equivalent, from the tokenizer's own post-processor), cut to the model's window, and scored one pair per
run. One logit per pair is mapped through a sigmoid, two logits through a softmax (the "relevant" class),
so scores fall in [0, 1] like those of the HTTP services. Nothing is downloaded; the model loads on
the first search that needs it.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .base import RerankError

DEFAULT_MAX_TOKENS = 512
THREADS = 2
TOKEN_INPUTS = ("input_ids", "attention_mask", "token_type_ids")


def find_model_files(folder: Path) -> tuple[Path, Path]:
    """(model, tokenizer) in a cross-encoder export folder, or one sentence (ValueError) saying what is missing."""
    if not folder.is_dir():
        raise ValueError(f"MCP_DOCS_RERANK_MODEL_DIR {folder} is not a folder.")
    model = next((p for p in (folder / "model.onnx", folder / "onnx" / "model.onnx") if p.is_file()), None)
    tokenizer = folder / "tokenizer.json"
    if model is None or not tokenizer.is_file():
        missing = " and ".join(
            name for name, ok in (("model.onnx", model is not None), ("tokenizer.json", tokenizer.is_file())) if not ok
        )
        raise ValueError(
            f"MCP_DOCS_RERANK_MODEL_DIR {folder} has no {missing}: point it at an ONNX cross-encoder export "
            "(model.onnx or onnx/model.onnx, with tokenizer.json)."
        )
    return model, tokenizer


def _max_tokens(folder: Path) -> int:
    """The model's window: tokenizer_config.json's model_max_length (exports often write a huge sentinel there),
    else the truncation tokenizer.json was saved with, else 512."""
    for name, path in (
        ("tokenizer_config.json", ("model_max_length",)),
        ("tokenizer.json", ("truncation", "max_length")),
    ):
        try:
            value: Any = json.loads((folder / name).read_text(encoding="utf-8"))
            for key in path:
                value = value[key]
            tokens = int(value)
        except (OSError, ValueError, TypeError, KeyError, IndexError):
            continue
        if 8 <= tokens <= 8192:
            return tokens
    return DEFAULT_MAX_TOKENS


class LocalScorer:
    kind = "local"

    def __init__(self, folder: Path, threads: int = THREADS) -> None:
        self.folder = folder
        self.target = str(folder)
        self.threads = threads
        self.max_tokens = _max_tokens(folder)
        self.max_chars = self.max_tokens * 4  # a cheap cut before tokenizing; the tokenizer truncates exactly
        self._lock = threading.Lock()
        self._session: Any = None
        self._tokenizer: Any = None
        self._inputs: list[str] = []
        self._output = ""

    def prepare(self) -> None:
        self._load()

    def _load(self) -> None:
        with self._lock:
            if self._session is not None:
                return
            import onnxruntime as ort
            from tokenizers import Tokenizer

            try:
                model_path, tokenizer_path = find_model_files(self.folder)
                tokenizer = Tokenizer.from_file(str(tokenizer_path))
                opts = ort.SessionOptions()
                opts.intra_op_num_threads = self.threads
                opts.inter_op_num_threads = 1
                opts.log_severity_level = 3
                opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
                session = ort.InferenceSession(str(model_path), opts, providers=["CPUExecutionProvider"])
            except Exception as exc:  # ValueError, OSError, onnxruntime's and tokenizers' own errors
                raise RerankError(f"could not load its model from {self.folder} ({_first_line(exc)})") from exc
            inputs = [i.name for i in session.get_inputs()]
            unknown = [name for name in inputs if name not in TOKEN_INPUTS]
            if unknown or "input_ids" not in inputs:
                raise RerankError(f"has model inputs {inputs}, not input_ids/attention_mask/token_type_ids")
            tokenizer.no_padding()  # one pair per run: nothing to pad
            tokenizer.enable_truncation(max_length=self.max_tokens)
            outputs = [o.name for o in session.get_outputs()]
            self._output = "logits" if "logits" in outputs else outputs[0]  # exports name the scores "logits"
            self._tokenizer, self._inputs, self._session = tokenizer, inputs, session

    def score(self, query: str, texts: Sequence[str], until: float | None = None) -> list[float]:
        if not texts:
            return []
        self._load()
        try:
            encodings = self._tokenizer.encode_batch([(query, t) for t in texts])
        except Exception as exc:  # a query longer than the window with nothing left to cut
            raise RerankError(f"could not tokenize the pairs ({_first_line(exc)})") from exc
        scores = []
        for e in encodings:
            if until is not None and time.monotonic() > until:  # the search stopped waiting: free the CPU
                raise RerankError("did not finish within the search's deadline")
            scores.append(self._run(e.ids, e.type_ids))
        return scores

    def _run(self, ids: Sequence[int], type_ids: Sequence[int]) -> float:
        """One pair per run, unpadded: on the MiniLM int8 weights, padded batches of 2-16 ran slower per input
        (benchmarks/REPORT.md, "Embedding throughput"); a cross-encoder reads the same way."""
        tokens = np.array([ids], dtype=np.int64)
        arrays = {
            "input_ids": tokens,
            "attention_mask": np.ones_like(tokens),
            "token_type_ids": np.array([type_ids], dtype=np.int64),
        }
        try:
            feeds = {name: arrays[name] for name in self._inputs}
            logits = np.asarray(self._session.run([self._output], feeds)[0])
        except Exception as exc:
            raise RerankError(f"failed to run its model ({_first_line(exc)})") from exc
        return float(_relevance(logits, 1)[0])

    def close(self) -> None:
        with self._lock:
            self._session = None


def _relevance(logits: np.ndarray, n: int) -> np.ndarray:
    """Logits of shape (n,), (n, 1) or (n, 2) → relevance in [0, 1]."""
    if logits.shape in ((n,), (n, 1)):
        return 1.0 / (1.0 + np.exp(-logits.reshape(n).astype(np.float64)))
    if logits.shape == (n, 2):
        shifted = logits.astype(np.float64) - logits.max(axis=1, keepdims=True)
        probs = np.exp(shifted)
        return probs[:, 1] / probs.sum(axis=1)
    raise RerankError(f"model output has shape {logits.shape}, not one or two logits per pair")


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return (text[0] if text else type(exc).__name__)[:160]
