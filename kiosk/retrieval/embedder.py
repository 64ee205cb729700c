"""Sentence embedders: any ONNX sentence encoder the model manifest describes.

`onnx-string` graphs take raw strings (tokenizer inside the graph); `onnx-tokens` graphs take token
ids from a `tokenizers` tokenizer.json and are pooled here when the manifest says so. Vectors come
out L2-normalized, so a dot product is a cosine.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from kiosk.cpus import threads as cpu_threads
from kiosk.errors import ModelError
from kiosk.models import EmbedderSpec, ModelEntry, model_path
from kiosk.retrieval.unigram import UnigramTokenizer

log = logging.getLogger(__name__)

Vectors = npt.NDArray[np.float32]


class Embedder(Protocol):
    name: str
    dim: int
    score_floor: float  # cosine of unrelated texts; the ranker rescales from here

    def embed_queries(self, texts: list[str]) -> Vectors: ...

    def embed_passages(self, texts: list[str]) -> Vectors: ...

    def token_count(self, text: str) -> int:
        """How many tokens the encoder pools into the text's vector (its length as the
        encoder sees it, in any language)."""
        ...


def rough_token_count(text: str) -> int:
    """A subword encoder's token count, estimated where its tokenizer is not at hand: a
    Latin word is one or two, a CJK character about half of one."""
    cjk = sum(1 for ch in text if ord(ch) >= 0x3000)
    latin = len(re.findall(r"[^\W\d_]+|\d+", "".join(" " if ord(ch) >= 0x3000 else ch
                                                    for ch in text)))
    return round(latin * 1.3 + cjk / 2)


def _normalize(vectors: npt.NDArray[Any]) -> Vectors:
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    out: Vectors = (vectors / np.maximum(norms, 1e-12)).astype(np.float32)
    return out


class OnnxEmbedder:
    """Runs the encoder with onnxruntime on one thread (the device has few cores to share)."""

    def __init__(self, name: str, path: Path, spec: EmbedderSpec, *, threads: int = 1,
                 batch_size: int = 8) -> None:
        import onnxruntime as ort

        self.name = name
        self.dim = spec.dim
        self.score_floor = spec.score_floor
        self._spec = spec
        self._batch_size = batch_size
        self._query_cache: dict[str, Vectors] = {}
        self._cache_size = 512
        options = ort.SessionOptions()
        options.intra_op_num_threads = cpu_threads(threads)
        options.inter_op_num_threads = 1
        # no busy-waiting threads: Whisper, the turn model and this run side by side on two
        # cores, and spinning ones took the cores from each other
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        # No arena: it keeps the largest batch's activations for the life of the process, and
        # an index build's batches would then stay resident beside the brain.
        options.enable_cpu_mem_arena = False
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
        self._tokenizer: UnigramTokenizer | None = None
        if spec.kind == "onnx-tokens":
            tok_path = path.parent / spec.tokenizer_file
            if not tok_path.is_file():
                raise ModelError(f"tokenizer {tok_path} of model {name!r} is missing",
                                 f"run: kiosk models install {name} --force")
            norm = path.parent / spec.normalization_file if spec.normalization_file else None
            self._tokenizer = UnigramTokenizer.from_files(tok_path, norm)
        elif spec.kind != "onnx-string":
            raise ModelError(f"embedder kind {spec.kind!r} of model {name!r} is not supported",
                             "use onnx-string or onnx-tokens in models/manifest.toml")

    def _run(self, texts: list[str]) -> Vectors:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        outputs: list[Vectors] = []
        # Similar lengths batch together: padding costs time and memory (attention is T x T).
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        texts = [texts[i] for i in order]
        for start in range(0, len(texts), self._batch_size):
            batch = texts[start:start + self._batch_size]
            if self._tokenizer is None:
                feed: dict[str, Any] = {self._spec.input: np.array(batch, dtype=object)}
                out = self._session.run([self._spec.output], feed)[0]
            else:
                out = self._run_tokens(batch)
            outputs.append(_normalize(out))
        result = np.empty((len(texts), self.dim), dtype=np.float32)
        result[order] = np.concatenate(outputs, axis=0)
        return result

    def token_count(self, text: str) -> int:
        if self._tokenizer is None:
            return rough_token_count(text)
        return max(len(self._tokenizer.encode(text)) - 2, 0)  # not the two special tokens

    def token_ids(self, text: str) -> list[int]:
        """Token ids of one text, as the encoder sees them (for checks against other engines)."""
        assert self._tokenizer is not None
        return self._tokenizer.encode(text)

    def _run_tokens(self, batch: list[str]) -> Vectors:
        encoded = [self.token_ids(t) for t in batch]
        width = max(len(e) for e in encoded)
        ids = np.zeros((len(batch), width), dtype=np.int64)
        mask = np.zeros((len(batch), width), dtype=np.int64)
        for row, enc in enumerate(encoded):
            ids[row, : len(enc)] = enc
            mask[row, : len(enc)] = 1
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

    def forget(self, texts: list[str] | None = None) -> None:
        """Drop cached query vectors (all, or these texts'): benchmarks time fresh queries."""
        if texts is None:
            self._query_cache.clear()
        for text in texts or ():
            self._query_cache.pop(text, None)

    def embed_passages(self, texts: list[str]) -> Vectors:
        return self._run([self._spec.passage_prefix + t for t in texts])


def load_embedder(entry: ModelEntry, models_dir: Path) -> OnnxEmbedder:
    if entry.embedder is None:
        raise ModelError(f"model {entry.name!r} is not a sentence encoder",
                         "choose an embedder model from models/manifest.toml")
    return OnnxEmbedder(entry.name, model_path(entry, models_dir), entry.embedder)
