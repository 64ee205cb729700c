from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from kiosk.dialogue.query import SearchQuery
from kiosk.errors import SiteError, SiteIndexError
from kiosk.retrieval.index import SiteIndex, build_index
from tests.fakes import HashingEmbedder


def _site(root: Path) -> Path:
    (root / "en").mkdir(parents=True)
    (root / "en" / "index.md").write_text("# Museum\nWelcome to the museum.", encoding="utf-8")
    (root / "en" / "cafe.md").write_text("# Cafe\nThe cafe serves curry and ice cream.",
                                         encoding="utf-8")
    (root / "en" / "parking.md").write_text("# Parking\nThe car park has 120 spaces.",
                                            encoding="utf-8")
    (root / "ja").mkdir()
    (root / "ja" / "cafe.md").write_text("# カフェ\nカフェではカレーを食べられます。",
                                         encoding="utf-8")
    return root


def test_round_trip_keeps_pages_chunks_vectors_and_ranking(tmp_path: Path) -> None:
    emb = HashingEmbedder()
    index = build_index(_site(tmp_path / "site"), emb)
    path = tmp_path / "idx" / "site.npz"
    index.save(path)
    loaded = SiteIndex.load(path)
    assert [p.page_id for p in loaded.pages] == [p.page_id for p in index.pages]
    assert loaded.chunks == index.chunks
    assert np.allclose(loaded.vectors, index.vectors, atol=1e-3)  # stored as float16
    q = SearchQuery.of("where can I eat curry")
    assert loaded.search(q, emb, "en")[0].page_id == "en/cafe.md"
    assert index.search(q, emb, "en")[0].page_id == "en/cafe.md"


def test_visitor_language_pages_rank_first(tmp_path: Path) -> None:
    emb = HashingEmbedder()
    index = build_index(_site(tmp_path / "site"), emb)
    assert index.search(SearchQuery.of("カフェでカレー"), emb, "ja")[0].page_id == "ja/cafe.md"


def test_rebuild_reuses_vectors_of_unchanged_chunks(tmp_path: Path) -> None:
    site = _site(tmp_path / "site")
    first = build_index(site, HashingEmbedder())
    (site / "en" / "parking.md").write_text("# Parking\nNow 130 spaces.", encoding="utf-8")
    emb = HashingEmbedder()
    second = build_index(site, emb, previous=first)
    assert emb.calls == 1  # only the changed chunk was embedded
    assert len(second.pages) == len(first.pages)


def test_corrupt_index_file_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "broken.npz"
    path.write_bytes(b"not a zip at all")
    with pytest.raises(SiteIndexError, match="unreadable"):
        SiteIndex.load(path)
    with pytest.raises(SiteIndexError, match="kiosk index"):
        SiteIndex.load(tmp_path / "missing.npz")


def test_failed_build_leaves_the_old_index_usable(tmp_path: Path) -> None:
    site = _site(tmp_path / "site")
    path = tmp_path / "site.npz"
    build_index(site, HashingEmbedder()).save(path)
    before = path.read_bytes()
    for page in site.rglob("*.md"):
        page.unlink()
    with pytest.raises(SiteError):
        build_index(site, HashingEmbedder())
    assert path.read_bytes() == before
    assert SiteIndex.load(path).pages
    assert not [p for p in os.listdir(tmp_path) if p.startswith(".site.npz")]


def test_overview_pages_prefer_the_visitor_language(tmp_path: Path) -> None:
    index = build_index(_site(tmp_path / "site"), HashingEmbedder())
    assert index.overview_pages("en")[0].page_id == "en/index.md"
