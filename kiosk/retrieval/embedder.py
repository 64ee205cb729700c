"""Sentence embedders: any ONNX sentence encoder the model manifest describes.

`onnx-string` graphs take raw strings (tokenizer inside the graph); `onnx-tokens` graphs take token
ids from a `tokenizers` tokenizer.json and are pooled here when the manifest says so. Vectors come
out L2-normalized, so a dot product is a cosine.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from kiosk.errors import ModelError
from kiosk.models import EmbedderSpec, ModelEntry, model_path

log = logging.getLogger(__name__)

Vectors = npt.NDArray[np.float32]


class Embedder(Protocol):
    name: str
    dim: int
    score_floor: float  # cosine of unrelated texts; the ranker rescales from here

    def embed_queries(self, texts: list[str]) -> Vectors: ...

    def embed_passages(self, texts: list[str]) -> Vectors: ...


def _normalize(vectors: npt.NDArray[Any]) -> Vectors:
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    out: Vectors = (vectors / np.maximum(norms, 1e-12)).astype(np.float32)
    return out


class OnnxEmbedder:
    """Runs the encoder with onnxruntime on one thread (the device has few cores to share)."""

    def __init__(self, name: str, path: Path, spec: EmbedderSpec, *, threads: int = 1,
                 batch_size: int = 16) -> None:
        import onnxruntime as ort

        self.name = name
        self.dim = spec.dim
        self.score_floor = spec.score_floor
        self._spec = spec
        self._batch_size = batch_size
        self._query_cache: dict[str, Vectors] = {}
        self._cache_size = 512
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        if spec.custom_ops == "onnxruntime-extensions":
            import onnxruntime_extensions

            options.register_custom_ops_library(onnxruntime_extensions.get_library_path())
        try:
            self._session = ort.InferenceSession(str(path), options,
                                                 providers=["CPUExecutionProvider"])
        except Exception as exc:  # onnxruntime raises its own untyped errors
            raise ModelError(
                f"embedding model {name!r} at {path} could not be loaded: {exc}",
                f"reinstall it: kiosk models install {name} --force",
            ) from exc
        self._tokenizer: Any = None
        self._normalization: dict[int, str] = {}
        if spec.kind == "onnx-tokens":
            from tokenizers import Tokenizer

            tok_path = path.parent / spec.tokenizer_file
            if not tok_path.is_file():
                raise ModelError(f"tokenizer {tok_path} of model {name!r} is missing",
                                 f"run: kiosk models install {name} --force")
            self._tokenizer = Tokenizer.from_file(str(tok_path))
            if spec.normalization_file:
                table = json.loads((path.parent / spec.normalization_file).read_text("utf-8"))
                self._normalization = {int(k): v for k, v in table.items()}
        elif spec.kind != "onnx-string":
            raise ModelError(f"embedder kind {spec.kind!r} of model {name!r} is not supported",
                             "use onnx-string or onnx-tokens in models/manifest.toml")

    def _run(self, texts: list[str]) -> Vectors:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        outputs: list[Vectors] = []
        for start in range(0, len(texts), self._batch_size):
            batch = texts[start:start + self._batch_size]
            if self._tokenizer is None:
                feed: dict[str, Any] = {self._spec.input: np.array(batch, dtype=object)}
                out = self._session.run([self._spec.output], feed)[0]
            else:
                out = self._run_tokens(batch)
            outputs.append(_normalize(out))
        return np.concatenate(outputs, axis=0)

    def _run_tokens(self, batch: list[str]) -> Vectors:
        # The model's own per-character normalization (not NFKC), as its C engine applies it.
        encodings = self._tokenizer.encode_batch([t.translate(self._normalization)
                                                  for t in batch])
        width = max(len(e.ids) for e in encodings)
        ids = np.zeros((len(batch), width), dtype=np.int64)
        mask = np.zeros((len(batch), width), dtype=np.int64)
        for row, enc in enumerate(encodings):
            ids[row, : len(enc.ids)] = enc.ids
            mask[row, : len(enc.ids)] = 1
        names = [i.name for i in self._session.get_inputs()]
        feed = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in names:
            feed["token_type_ids"] = np.zeros_like(ids)
        out = self._session.run([self._spec.output], feed)[0]
        if self._spec.pooling == "mean":
            weights = mask[..., None].astype(np.float32)
            out = (out * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1.0)
        return np.asarray(out, dtype=np.float32)

    def embed_queries(self, texts: list[str]) -> Vectors:
        """Query vectors; the last few hundred are remembered, since a turn's context
        (the previous exchange) was usually a query text a moment ago."""
        missing = [t for t in dict.fromkeys(texts) if t not in self._query_cache]
        if missing:
            vectors = self._run([self._spec.query_prefix + t for t in missing])
            for text, vector in zip(missing, vectors, strict=True):
                self._query_cache[text] = vector
            while len(self._query_cache) > self._cache_size:
                self._query_cache.pop(next(iter(self._query_cache)))
        return np.stack([self._query_cache[t] for t in texts]) if texts else self._run([])

    def embed_passages(self, texts: list[str]) -> Vectors:
        return self._run([self._spec.passage_prefix + t for t in texts])


def load_embedder(entry: ModelEntry, models_dir: Path) -> OnnxEmbedder:
    if entry.embedder is None:
        raise ModelError(f"model {entry.name!r} is not a sentence encoder",
                         "choose an embedder model from models/manifest.toml")
    return OnnxEmbedder(entry.name, model_path(entry, models_dir), entry.embedder)
