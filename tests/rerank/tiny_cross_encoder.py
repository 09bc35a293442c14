"""A tiny cross-encoder written from scratch: an ONNX graph (protobuf encoded by hand, since the `onnx` package
is not installed) and a word-level `tokenizer.json`, laid out like a Hugging Face ONNX export.

The model reads the pair as a real cross-encoder does (`[CLS] query [SEP] text [SEP]`, segment ids 0 then 1)
and its logit is the number of text tokens that also occur in the query, so the tests know the right order:

    onehot = OneHot(input_ids)                        # [N, L, V]
    query  = ReduceMax(onehot * mask * (1 - types))   # [N, V]: which words the query has
    text   = ReduceSum(onehot * mask * types)         # [N, V]: how often the text has each
    logits = ReduceSum(query * weights * text)        # [N, 1]; weights are 0 for special tokens

The protobuf helpers also append layers to an existing model (benchmarks/rerank_latency.py puts a
classification head on the MiniLM encoder): concatenated protobuf messages merge, repeated fields append.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np
from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors

SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]"]
FLOAT, INT64 = 1, 7  # TensorProto data types
ATTR_INT, ATTR_INTS = 2, 7  # AttributeProto types


# -- protobuf wire format -----------------------------------------------------------------------------
def _varint(n: int) -> bytes:
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _int(field: int, value: int) -> bytes:
    return _varint(field << 3) + _varint(value)


def _bytes(field: int, value: bytes | str) -> bytes:
    data = value.encode() if isinstance(value, str) else value
    return _varint(field << 3 | 2) + _varint(len(data)) + data


def tensor(name: str, array: np.ndarray) -> bytes:
    dtype = FLOAT if array.dtype == np.float32 else INT64
    dims = b"".join(_int(1, d) for d in array.shape)
    return dims + _int(2, dtype) + _bytes(8, name) + _bytes(9, np.ascontiguousarray(array).tobytes())


def node(op: str, inputs: Sequence[str], outputs: Sequence[str], **attrs: int | Sequence[int]) -> bytes:
    body = b"".join(_bytes(1, i) for i in inputs) + b"".join(_bytes(2, o) for o in outputs) + _bytes(4, op)
    for name, value in attrs.items():
        if isinstance(value, int):
            attr = _bytes(1, name) + _int(3, value) + _int(20, ATTR_INT)
        else:
            attr = _bytes(1, name) + b"".join(_int(8, v) for v in value) + _int(20, ATTR_INTS)
        body += _bytes(5, attr)
    return body


def value_info(name: str, elem_type: int, dims: Iterable[int | str]) -> bytes:
    shape = b"".join(_bytes(1, _int(1, d) if isinstance(d, int) else _bytes(2, d)) for d in dims)
    return _bytes(1, name) + _bytes(2, _bytes(1, _int(1, elem_type) + _bytes(2, shape)))


def graph(
    nodes: Iterable[bytes],
    initializers: Iterable[bytes] = (),
    inputs: Iterable[bytes] = (),
    outputs: Iterable[bytes] = (),
    name: str = "",
) -> bytes:
    return (
        b"".join(_bytes(1, n) for n in nodes)
        + (_bytes(2, name) if name else b"")
        + b"".join(_bytes(5, t) for t in initializers)
        + b"".join(_bytes(11, i) for i in inputs)
        + b"".join(_bytes(12, o) for o in outputs)
    )


def model(graph_bytes: bytes, opset: int = 13) -> bytes:
    return _int(1, 8) + _bytes(2, "mcp-docs-tests") + _bytes(7, graph_bytes) + _bytes(8, _int(2, opset))


def extend_model(model_bytes: bytes, graph_bytes: bytes) -> bytes:
    """The model with more nodes, initializers and outputs appended to its graph (protobuf merge)."""
    return model_bytes + _bytes(7, graph_bytes)


# -- the tiny cross-encoder ---------------------------------------------------------------------------
def overlap_graph(vocab_size: int) -> bytes:
    weights = np.ones(vocab_size, dtype=np.float32)
    weights[: len(SPECIALS)] = 0.0
    dims = ["batch", "length"]
    return graph(
        nodes=[
            node("OneHot", ["input_ids", "depth", "onehot_values"], ["onehot"], axis=-1),
            node("Cast", ["attention_mask"], ["mask_f"], to=FLOAT),
            node("Cast", ["token_type_ids"], ["types_f"], to=FLOAT),
            node("Sub", ["one", "types_f"], ["query_f"]),
            node("Mul", ["mask_f", "types_f"], ["text_w"]),
            node("Mul", ["mask_f", "query_f"], ["query_w"]),
            node("Unsqueeze", ["text_w", "axis2"], ["text_w3"]),
            node("Unsqueeze", ["query_w", "axis2"], ["query_w3"]),
            node("Mul", ["onehot", "text_w3"], ["text_hot"]),
            node("Mul", ["onehot", "query_w3"], ["query_hot"]),
            node("ReduceSum", ["text_hot", "axis1"], ["text_bag"], keepdims=0),
            node("ReduceMax", ["query_hot"], ["query_bag"], axes=[1], keepdims=0),
            node("Mul", ["query_bag", "weights"], ["query_weighted"]),
            node("Mul", ["query_weighted", "text_bag"], ["shared"]),
            node("ReduceSum", ["shared", "axis1"], ["logits"], keepdims=1),
        ],
        initializers=[
            tensor("depth", np.array(vocab_size, dtype=np.int64)),
            tensor("onehot_values", np.array([0.0, 1.0], dtype=np.float32)),
            tensor("one", np.array(1.0, dtype=np.float32)),
            tensor("axis1", np.array([1], dtype=np.int64)),
            tensor("axis2", np.array([2], dtype=np.int64)),
            tensor("weights", weights),
        ],
        inputs=[value_info(n, INT64, dims) for n in ("input_ids", "attention_mask", "token_type_ids")],
        outputs=[value_info("logits", FLOAT, ["batch", 1])],
        name="tiny-cross-encoder",
    )


def words(texts: Iterable[str]) -> list[str]:
    return sorted({w for t in texts for w in re.findall(r"\w+", t.lower())})


def pair_tokenizer(vocabulary: Iterable[str]) -> Tokenizer:
    vocab = {token: i for i, token in enumerate([*SPECIALS, *vocabulary])}
    tokenizer = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.Lowercase()
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", 2), ("[SEP]", 3)],
    )
    return tokenizer


def write_cross_encoder(folder: Path, texts: Iterable[str], layout: str = "flat") -> Path:
    """A model folder scoring word overlap, whose vocabulary is the words of `texts`; `layout` "hf" puts the
    model in onnx/model.onnx as Hugging Face exports do."""
    folder.mkdir(parents=True, exist_ok=True)
    tokenizer = pair_tokenizer(words(texts))
    tokenizer.save(str(folder / "tokenizer.json"))
    model_path = folder / ("onnx/model.onnx" if layout == "hf" else "model.onnx")
    model_path.parent.mkdir(exist_ok=True)
    model_path.write_bytes(model(overlap_graph(tokenizer.get_vocab_size())))
    return folder
