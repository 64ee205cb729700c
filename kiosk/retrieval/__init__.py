"""Retrieval over the venue's site: page loading, embedder, hybrid (dense + lexical) index."""
