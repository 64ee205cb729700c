"""BM25 over the index's terms (Latin words, CJK 2-grams), as posting arrays for fast scoring."""

from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

K1 = 1.2
B = 0.75


@dataclass(frozen=True)
class LexicalIndex:
    vocab: dict[str, int]
    indptr: npt.NDArray[np.int64]  # postings of term t: [indptr[t], indptr[t+1])
    post_chunk: npt.NDArray[np.int32]
    post_tf: npt.NDArray[np.float32]
    chunk_len: npt.NDArray[np.float32]
    idf: npt.NDArray[np.float32]

    @classmethod
    def build(cls, chunk_terms: Iterable[list[str]], n_chunks: int) -> LexicalIndex:
        """Postings from each chunk's terms; the terms are consumed one chunk at a time."""
        vocab: dict[str, int] = {}
        # Flat typed arrays, not per-term Python lists: a 5,000-page site has millions of
        # postings, and tuples of them would dominate the process's peak memory.
        tids = array("i")
        cids = array("i")
        tfs = array("f")
        lengths = np.zeros(n_chunks, dtype=np.float32)
        for cid, words in enumerate(chunk_terms):
            lengths[cid] = len(words)
            for term, tf in Counter(words).items():
                tids.append(vocab.setdefault(term, len(vocab)))
                cids.append(cid)
                tfs.append(tf)
        tid_arr = np.frombuffer(tids, dtype=np.int32)
        order = np.argsort(tid_arr, kind="stable")
        counts = np.bincount(tid_arr, minlength=len(vocab)).astype(np.int64)
        indptr = np.zeros(len(vocab) + 1, dtype=np.int64)
        np.cumsum(counts, out=indptr[1:])
        post_chunk = np.frombuffer(cids, dtype=np.int32)[order].copy()
        post_tf = np.frombuffer(tfs, dtype=np.float32)[order].copy()
        n = max(n_chunks, 1)
        idf = np.log(1.0 + (n - counts + 0.5) / (counts + 0.5)).astype(np.float32)
        return cls(vocab, indptr, post_chunk, post_tf, lengths, idf)

    def grouped(self, owner: npt.NDArray[np.int32], n_groups: int) -> LexicalIndex:
        """The same postings with documents merged into groups (chunk -> page): a term's
        frequency in a group is the sum over its documents, a group's length theirs."""
        n_terms = len(self.indptr) - 1
        term_of = np.repeat(np.arange(n_terms, dtype=np.int64), np.diff(self.indptr))
        key = term_of * n_groups + owner[self.post_chunk].astype(np.int64)
        # np.unique sorts by term, then group: postings come out in indptr order
        uniq, inverse = np.unique(key, return_inverse=True)
        tf = np.bincount(inverse, weights=self.post_tf).astype(np.float32)
        counts = np.bincount(uniq // n_groups, minlength=n_terms).astype(np.int64)
        indptr = np.zeros(n_terms + 1, dtype=np.int64)
        np.cumsum(counts, out=indptr[1:])
        lengths = np.bincount(owner, weights=self.chunk_len, minlength=n_groups)
        n = max(n_groups, 1)
        idf = np.log(1.0 + (n - counts + 0.5) / (counts + 0.5)).astype(np.float32)
        return LexicalIndex(self.vocab, indptr, (uniq % n_groups).astype(np.int32), tf,
                            lengths.astype(np.float32), idf)

    def postings(self, term: str) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.float32]]:
        """The documents a term occurs in (ascending) and its frequency in each; empty for a
        term the index never saw."""
        tid = self.vocab.get(term)
        if tid is None:
            return self.post_chunk[:0], self.post_tf[:0]
        lo, hi = int(self.indptr[tid]), int(self.indptr[tid + 1])
        return self.post_chunk[lo:hi], self.post_tf[lo:hi]

    def score(self, weights: dict[str, float]) -> tuple[npt.NDArray[np.float32], float]:
        """BM25 per chunk, and the best score any chunk could reach (to scale to 0..1)."""
        scores = np.zeros(len(self.chunk_len), dtype=np.float32)
        avg_len = float(self.chunk_len.mean()) if len(self.chunk_len) else 1.0
        upper = 0.0
        max_idf = float(np.log(1.0 + (len(self.chunk_len) + 0.5) / 0.5))
        for term, weight in weights.items():
            tid = self.vocab.get(term)
            if tid is None:
                # Words the site never uses still count against the best possible score: a query
                # whose content is absent from the site must not look confident.
                upper += weight * max_idf * (K1 + 1.0)
                continue
            lo, hi = int(self.indptr[tid]), int(self.indptr[tid + 1])
            chunks = self.post_chunk[lo:hi]
            tf = self.post_tf[lo:hi]
            idf = float(self.idf[tid])
            upper += weight * idf * (K1 + 1.0)
            norm = K1 * (1.0 - B + B * self.chunk_len[chunks] / avg_len)
            scores[chunks] += weight * idf * tf * (K1 + 1.0) / (tf + norm)
        return scores, upper
