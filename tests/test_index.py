from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from kiosk.dialogue.query import SearchQuery
from kiosk.errors import SiteError, SiteIndexError
from kiosk.retrieval.embedder import Vectors
from kiosk.retrieval.index import RankWeights, SiteIndex, build_index
from tests.fakes import HashingEmbedder


def _site(root: Path) -> Path:
    (root / "en").mkdir(parents=True)
    (root / "en" / "index.md").write_text(
        "# Museum\nWelcome to the museum.\n[Plan your visit](/visit/).", encoding="utf-8")
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
    assert loaded.page_chunks("en/index.md")[0].unsaid == ("Plan your visit.",)
    # stored as float16, and held at that precision from the build on: the same answers
    # before and after a restart
    assert np.array_equal(loaded.vectors, index.vectors)
    q = SearchQuery.of("where can I eat curry")
    assert loaded.search(q, emb, "en")[0].page_id == "en/cafe.md"
    assert index.search(q, emb, "en")[0].page_id == "en/cafe.md"


def test_question_headings_are_embedded_with_the_index_and_kept(tmp_path: Path) -> None:
    """A page's question headings get their vectors when the site is indexed and keep them
    through a restart: answering from the page embeds nothing more."""
    emb = HashingEmbedder()
    root = _site(tmp_path / "site")
    (root / "en" / "care.md").write_text(
        "# Care\n## What if I need care while traveling?\nTell us in advance.\n"
        "## Where do I go for care?\nTo a medical center.\n## Hours\nOpen daily.\n",
        encoding="utf-8")
    index = build_index(root, emb)
    asked = ("What if I need care while traveling?", "Where do I go for care?")
    assert tuple(index.questions) == asked
    path = tmp_path / "idx" / "site.npz"
    index.save(path)
    loaded = SiteIndex.load(path)
    calls = emb.calls
    vectors = loaded.question_vectors(asked, emb)
    assert emb.calls == calls
    assert np.allclose(vectors, np.stack([emb.embed_queries([h])[0] for h in asked]))


def test_visitor_language_pages_rank_first(tmp_path: Path) -> None:
    emb = HashingEmbedder()
    index = build_index(_site(tmp_path / "site"), emb)
    assert index.search(SearchQuery.of("カフェでカレー"), emb, "ja")[0].page_id == "ja/cafe.md"


def test_scores_of_a_few_pages_equal_those_of_the_whole_search(tmp_path: Path) -> None:
    """`page_scores` scores only the chunks of the pages asked for (a follow-up's topic on a
    large site); each must equal what the whole search gives that page, in the order asked."""
    emb = HashingEmbedder()
    root = _site(tmp_path / "site")
    (root / "en" / "shop.md").write_text(
        "# Shop\nThe shop sells curry spice.\n\n## Opening\nThe shop opens at ten; the cafe "
        "next door serves curry from noon.", encoding="utf-8")
    index = build_index(root, emb)
    query = SearchQuery.of("curry at the cafe or the shop")
    for lang in ("en", "ja"):
        whole = index.score(query, emb, lang, RankWeights()).page
        assert len({float(x) for x in whole}) > 2  # the pages differ: a real comparison
        shop = index.position("en/shop.md")
        assert index.pages[shop].n_chunks > 1
        positions = np.array([shop, 0, len(index.pages) - 1], dtype=np.int64)
        assert np.allclose(index.page_scores(query, emb, lang, RankWeights(), positions),
                           whole[positions], atol=1e-6)


def test_a_query_of_several_texts_scores_as_its_combined_vector_and_terms(
        tmp_path: Path) -> None:
    """Each text of a query is scored over the chunks once and remembered; the query's scores
    combine them. They must equal one pass with the weighted, normalized vector and the
    weighted terms, whether the texts were remembered or not."""
    from kiosk.dialogue.query import QuerySegment

    emb = HashingEmbedder()
    index = build_index(_site(tmp_path / "site"), emb)
    query = SearchQuery((QuerySegment("is it busy at lunch", 1.0, "utterance"),
                         QuerySegment("where can I eat curry", 0.35, "user"),
                         QuerySegment("The cafe serves curry and ice cream.", 0.15, "reply")))
    vectors = emb.embed_queries([s.text for s in query.segments])
    weights = np.array([s.weight for s in query.segments], dtype=np.float32)
    combined = (vectors * weights[:, None]).sum(axis=0)
    cosine = index.vectors @ (combined / np.linalg.norm(combined))
    lexical, upper = index.lexical.score(index.search_terms(query))
    assert upper > 0 and lexical.max() > 0  # words and meaning both count below
    expected = 0.5 * np.maximum(cosine, 0.0) + 0.5 * lexical / upper
    fresh = index.score(query, emb, "en", RankWeights()).chunk
    assert np.allclose(fresh, expected, atol=1e-5)
    again = index.score(query, emb, "en", RankWeights()).chunk
    assert np.allclose(again, expected, atol=1e-5)


def test_a_reply_scored_while_spoken_is_not_embedded_again(tmp_path: Path) -> None:
    from kiosk.dialogue.query import QuerySegment

    emb = HashingEmbedder()
    index = build_index(_site(tmp_path / "site"), emb)
    reply = "The cafe serves curry and ice cream."
    query = SearchQuery((QuerySegment("is it busy at lunch", 1.0, "utterance"),
                         QuerySegment(reply, 0.15, "reply")))
    index.prepare([reply], emb)
    before = emb.calls
    index.score(query, emb, "en", RankWeights())
    assert emb.calls == before + 1  # the visitor's words only
    index.forget([reply])
    index.score(query, emb, "en", RankWeights())
    assert emb.calls == before + 2  # the reply, forgotten, is embedded again


def test_a_section_that_retells_another_page_answers_for_that_page(tmp_path: Path) -> None:
    """A home page's feature list ("## Cafe" + a blurb) matches the question best, yet the
    page it retells answers: its score counts for the cafe's page, and the home page's own
    share yields to it. A heading that many pages share as title ("Opening hours") retells
    none of them."""
    root = tmp_path / "site"
    root.mkdir()
    (root / "index.md").write_text(
        "# Museum\n## Cafe\nFresh cake and lunch all day long.\n"
        "## Opening hours\nWe open every morning.", encoding="utf-8")
    (root / "cafe.md").write_text("# Cafe\nThe cafe is on the second floor. Hot meals from "
                                  "noon.", encoding="utf-8")
    for name in ("a", "b"):
        (root / f"{name}.md").write_text(f"# Opening hours\nGallery {name} opens at ten.",
                                         encoding="utf-8")
    emb = HashingEmbedder()
    index = build_index(root, emb)
    cake = SearchQuery.of("fresh cake all day")
    hits = index.search(cake, emb, "en")
    assert [h.page_id for h in hits[:2]] == ["cafe.md", "index.md"]
    assert hits[1].score == pytest.approx(hits[0].score * RankWeights().retelling_yield)
    cafe = index.page("cafe.md")
    assert cafe is not None
    assert hits[0].chunk == cafe.first_chunk  # answered from its own text
    plain = RankWeights(retelling_yield=1.0)
    whole = index.score(cake, emb, "en", plain).page
    assert whole[index.position("index.md")] == whole[index.position("cafe.md")]
    morning = SearchQuery.of("every morning")
    pages = index.score(morning, emb, "en", RankWeights()).page
    home = pages[index.position("index.md")]
    assert home == index.score(morning, emb, "en", plain).page[index.position("index.md")]
    assert pages[index.position("a.md")] < home / 2
    assert pages[index.position("b.md")] < home / 2


def test_a_long_section_under_another_pages_title_stays_its_own(tmp_path: Path) -> None:
    """A quick start's "Creating an app" steps run over several chunks: a page's own
    account, not a blurb, so the page titled "Creating an app" does not answer for it."""
    root = tmp_path / "site"
    root.mkdir()
    steps = " ".join(f"Step {n}: install the tool and run the setup command number {n} to "
                     f"create the project files." for n in range(1, 40))
    (root / "quick-start.md").write_text(f"# Quick start\n## Creating an app\n{steps}",
                                         encoding="utf-8")
    (root / "app.md").write_text("# Creating an app\nEvery app starts from one root "
                                 "component that is mounted on the page.", encoding="utf-8")
    emb = HashingEmbedder()
    index = build_index(root, emb)
    start = index.page("quick-start.md")
    assert start is not None and start.n_chunks >= 3
    hits = index.search(SearchQuery.of("install the tool and run the setup command"), emb, "en")
    assert hits[0].page_id == "quick-start.md"
    plain = RankWeights(retelling_yield=1.0)
    assert hits[0].score == pytest.approx(
        index.search(SearchQuery.of("install the tool and run the setup command"), emb, "en",
                     plain)[0].score)


def test_release_notes_answer_at_a_share(tmp_path: Path) -> None:
    """A changelog names every feature in a line of its own ("Fix: the login button on the
    timeline"); its score counts at `changelog_factor`, so the feature's page answers. A page
    with a version or two in its headings is no changelog."""
    root = tmp_path / "site"
    root.mkdir()
    notes = "".join(f"## [2024.{n}.0] - 2024-0{n}-01\nReleased on 2024-0{n}-01.\n### Client\n"
                    f"- Fix: the login form on the timeline {n}\n" for n in range(1, 7))
    (root / "releases.md").write_text(f"# Release notes\n{notes}", encoding="utf-8")
    (root / "login.md").write_text("# Logging in\nOpen the login form and enter your "
                                   "password.\n", encoding="utf-8")
    (root / "upgrade.md").write_text("# Upgrading\n## 2024.1.0\nRun the migration.\n"
                                     "## 2024.2.0\nNothing to do.\n", encoding="utf-8")
    emb = HashingEmbedder()
    index = build_index(root, emb)
    query = SearchQuery.of("the login form on the timeline")
    plain = index.score(query, emb, "en", RankWeights(changelog_factor=1.0)).page
    scaled = index.score(query, emb, "en", RankWeights()).page
    at = index.position("releases.md")
    assert scaled[at] == pytest.approx(plain[at] * RankWeights().changelog_factor)
    up = index.position("upgrade.md")
    assert scaled[up] == plain[up]


def test_rebuild_reuses_vectors_of_unchanged_chunks(tmp_path: Path) -> None:
    site = _site(tmp_path / "site")
    first = build_index(site, HashingEmbedder())
    (site / "en" / "parking.md").write_text("# Parking\nNow 130 spaces.", encoding="utf-8")
    emb = HashingEmbedder()
    second = build_index(site, emb, previous=first)
    assert emb.calls == 1  # only the changed chunk was embedded
    assert len(second.pages) == len(first.pages)


def test_rebuild_embeds_again_the_chunks_of_a_page_whose_title_changed(tmp_path: Path) -> None:
    """A chunk's vector is its passage's, the page title included: a title changed in the
    front matter alone (an FAQ entry's "question:") must not leave the old title's vectors."""
    site = _site(tmp_path / "site")
    (site / "en" / "faq.md").write_text("---\ntitle: faq-1\n---\nWrite to the front desk.\n",
                                        encoding="utf-8")
    first = build_index(site, HashingEmbedder())
    (site / "en" / "faq.md").write_text(
        "---\nquestion: How do I delete my account?\n---\nWrite to the front desk.\n",
        encoding="utf-8")
    emb = HashingEmbedder()
    second = build_index(site, emb, previous=first)
    faq = second.page("en/faq.md")
    assert faq is not None and faq.title == "How do I delete my account?"
    assert emb.calls >= faq.n_chunks  # (and its question heading, embedded for answers)
    fresh = build_index(site, HashingEmbedder())
    assert np.array_equal(second.vectors, fresh.vectors)


def test_an_index_read_differently_from_the_same_files_is_saved_again(tmp_path: Path) -> None:
    """The files unchanged but read into other chunks (a new version of the reader): the
    index differs from the saved one, so it is saved, and its vectors are not embedded at
    every start again."""
    from dataclasses import replace

    site = _site(tmp_path / "site")
    first = build_index(site, HashingEmbedder())
    again = build_index(site, HashingEmbedder(), previous=first)
    assert again.reads_as(first)
    older = replace(first, chunks=[replace(first.chunks[0], text="Welcome."), *first.chunks[1:]])
    assert not again.reads_as(older)


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


def test_page_postings_sum_the_chunks_of_each_page(tmp_path: Path) -> None:
    """Whole-page BM25 postings come from the chunk postings: a term's frequency on a page is
    the sum over its chunks, and a page's length theirs."""
    root = tmp_path / "site"
    root.mkdir()
    long_text = "\n\n".join(f"## Part {i}\nThe parade passes gate {i}. " + "Penguins walk. " * 30
                            for i in range(6))
    (root / "penguins.md").write_text("# Penguins\n" + long_text, encoding="utf-8")
    (root / "cafe.md").write_text("# Cafe\nThe cafe serves curry.", encoding="utf-8")
    index = build_index(root, HashingEmbedder())
    pages = index.page_lexical
    tid = pages.vocab["parad"] if "parad" in pages.vocab else pages.vocab["parade"]
    posting = slice(pages.indptr[tid], pages.indptr[tid + 1])
    penguins = index.position("penguins.md")
    assert list(pages.post_chunk[posting]) == [penguins]
    assert float(pages.post_tf[posting][0]) == 6.0  # once in each of the six parts
    chunks = index.page_chunks("penguins.md")
    assert len(chunks) >= 6
    first = index.pages[penguins].first_chunk
    assert float(pages.chunk_len[penguins]) == float(
        index.lexical.chunk_len[first:first + len(chunks)].sum())


def test_coverage_is_the_share_of_the_words_a_page_holds(tmp_path: Path) -> None:
    index = build_index(_site(tmp_path / "site"), HashingEmbedder())
    cover = index.coverage("does the cafe have spaces for parking")
    assert cover[index.position("en/cafe.md")] > 0
    assert cover[index.position("en/parking.md")] > cover[index.position("en/cafe.md")]
    assert cover[index.position("en/index.md")] == 0.0
    assert not index.coverage("the and of").any()


def test_what_a_reply_leaves_unsaid_of_each_page(tmp_path: Path) -> None:
    index = build_index(_site(tmp_path / "site"), HashingEmbedder())
    said = "The cafe serves curry and ice cream."
    left = index.unsaid(said)
    assert left[index.position("en/cafe.md")] == pytest.approx(0.0)  # said whole
    assert left[index.position("en/parking.md")] == pytest.approx(1.0)  # nothing of it
    # the cafe page's terms are cafe, serve, curry, ice, cream: three of five said
    part = index.unsaid("the cafe serves curry")
    assert part[index.position("en/cafe.md")] == pytest.approx(0.4)
    assert index.unsaid("").min() == pytest.approx(1.0)


def test_landing_page_with_its_text_in_front_matter_is_the_site_listing(tmp_path: Path) -> None:
    """A landing page whose prose is all front matter (a static site's layout renders it) is
    in the site's language and answers "what else is here", before a section's index."""
    root = tmp_path / "site"
    (root / "blog").mkdir(parents=True)
    (root / "README.md").write_text(
        '---\nlayout: Landing\ndescription: "Misskeyはオープンソースの分散型SNSです。"\n---\n',
        encoding="utf-8")
    (root / "blog" / "index.md").write_text("# ブログ\nお知らせの一覧です。", encoding="utf-8")
    (root / "faq.md").write_text("# よくある質問\nサーバーは誰が運営していますか。",
                                 encoding="utf-8")
    index = build_index(root, HashingEmbedder())
    assert index.page("README.md").lang == "ja"  # type: ignore[union-attr]
    assert index.overview_pages("ja")[0].page_id == "README.md"


def test_links_survive_the_index_file(tmp_path: Path) -> None:
    site = _site(tmp_path / "site")
    (site / "en" / "index.md").write_text("# Museum\nSee the [cafe](cafe.md).", encoding="utf-8")
    index = build_index(site, HashingEmbedder())
    path = tmp_path / "site.npz"
    index.save(path)
    loaded = SiteIndex.load(path)
    assert loaded.links("en/index.md") == index.links("en/index.md") == ("en/cafe.md",)
    assert loaded.links("en/parking.md") == ()
    assert loaded.page("en/index.md").anchors == (("cafe", "en/cafe.md"),)  # type: ignore[union-attr]


def test_a_posts_day_survives_the_index_file(tmp_path: Path) -> None:
    """A post is dated by its front matter's date (a time of day after it is no part of the
    day), else by its file name's; a page of neither, or of a day that is none, has no date."""
    site = tmp_path / "site"
    (site / "blog").mkdir(parents=True)
    (site / "blog" / "2021-09-11-hello.md").write_text("# Hello\nThe site opens.",
                                                        encoding="utf-8")
    (site / "blog" / "passports.md").write_text(
        "---\ndate: 2025-08-21T14:28:00.000Z\n---\n# Passports\nPassports are accepted.",
        encoding="utf-8")
    (site / "blog" / "2020-01-01-moved.md").write_text(
        "---\ndate: 2022-03-04\n---\n# Moved\nThe post says its own day.", encoding="utf-8")
    (site / "hours.md").write_text("# Hours\nOpen from 9 am.", encoding="utf-8")
    (site / "blog" / "2021-13-45-typo.md").write_text(
        "---\ndate: soon\n---\n# Typo\nNo day is a day.", encoding="utf-8")
    index = build_index(site, HashingEmbedder())
    path = tmp_path / "site.npz"
    index.save(path)
    loaded = SiteIndex.load(path)
    days = {p.page_id: p.date for p in loaded.pages}
    assert days == {"blog/2021-09-11-hello.md": "2021-09-11",
                    "blog/passports.md": "2025-08-21", "blog/2020-01-01-moved.md": "2022-03-04",
                    "hours.md": "", "blog/2021-13-45-typo.md": ""}


def _ja_site(root: Path) -> Path:
    root.mkdir(parents=True)
    (root / "vps.md").write_text(
        "# さくらのVPS\nさくらのVPSでサーバーを作れます。スタートアップスクリプトで簡単です。",
        encoding="utf-8")
    (root / "xserver.md").write_text(
        "# Xserver VPS\nXserver VPSでサーバーを作れます。アプリイメージがあります。",
        encoding="utf-8")
    (root / "shop.md").write_text(
        "# ショップ\n小さいものから大きいものまで、いろいろなものがあります。", encoding="utf-8")
    return root


def test_the_site_nouns_written_in_hiragana_are_searched(tmp_path: Path) -> None:
    """A query's hiragana was all left out as particles: さくらのほうは searched nothing."""
    index = build_index(_ja_site(tmp_path / "site"), HashingEmbedder())
    assert "さくら" in index.nouns
    assert "もの" not in index.nouns  # read as a noun in few of the places the site writes it
    hits = index.search(SearchQuery.of("さくらのほうは"), HashingEmbedder(), "ja",
                        RankWeights(dense=0.0, lexical=1.0))
    assert hits[0].page_id == "vps.md"
    path = tmp_path / "site.npz"
    index.save(path)
    assert SiteIndex.load(path).nouns == index.nouns


def test_an_index_of_the_previous_format_is_read_and_its_vectors_reused(tmp_path: Path) -> None:
    """Format 2 added links; a format 1 file still gives its vectors to the next build, so an
    upgrade does not embed the whole site again."""
    import io
    import json

    site = _site(tmp_path / "site")
    (site / "en" / "index.md").write_text("# Museum\nSee the [cafe](cafe.md).", encoding="utf-8")
    emb = HashingEmbedder()
    path = tmp_path / "site.npz"
    build_index(site, emb).save(path)
    with np.load(path, allow_pickle=False) as data:
        arrays = {k: data[k] for k in data.files}
    meta = json.loads(bytes(arrays["meta"]).decode())
    meta["version"] = 1
    for page in meta["pages"]:
        del page["links"]
        del page["anchors"]
    del meta["nouns"]
    arrays["meta"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    path.write_bytes(buf.getvalue())
    old = SiteIndex.load(path)
    assert old.links("en/index.md") == ()
    assert old.page("en/index.md").anchors == ()  # type: ignore[union-attr]
    assert old.nouns == frozenset()

    class Counting(HashingEmbedder):
        embedded = 0

        def embed_passages(self, texts: list[str]) -> Vectors:
            self.embedded += len(texts)
            return super().embed_passages(texts)

    counting = Counting()
    rebuilt = build_index(site, counting, old)
    assert counting.embedded == 0  # every vector came from the old file
    assert np.allclose(rebuilt.vectors, old.vectors)
    assert rebuilt.links("en/index.md") == ("en/cafe.md",)  # read from the site again
    assert rebuilt.page("en/index.md").anchors == (("cafe", "en/cafe.md"),)  # type: ignore[union-attr]


def test_a_katakana_word_finds_the_page_that_writes_it_not_its_letters(tmp_path: Path) -> None:
    # ボット's 2-grams are both in テキストボックス and ポット: only the whole word tells them
    # apart (misskey-ja: "ボットを作ってみたい" found the note page's text box).
    root = tmp_path / "site"
    root.mkdir()
    (root / "note.md").write_text("# ノート\nテキストボックスにポットの絵を貼れます。",
                                  encoding="utf-8")
    (root / "bot.md").write_text(
        "# 開発\nAPIを使って自動で投稿するボットを作れます。公開されている実装も参考になります。"
        "作ったものは利用規約を守って動かしてください。", encoding="utf-8")
    index = build_index(root, HashingEmbedder())
    lexical = index.page_lexical_scores(SearchQuery.of("ボット"))
    assert int(lexical.argmax()) == index.position("bot.md")


def test_an_index_before_whole_katakana_words_has_its_terms_rebuilt(tmp_path: Path) -> None:
    import io
    import json

    emb = HashingEmbedder()
    built = build_index(_site(tmp_path / "site"), emb)
    path = tmp_path / "site.npz"
    built.save(path)
    with np.load(path, allow_pickle=False) as data:
        arrays = {k: data[k] for k in data.files}
    meta = json.loads(bytes(arrays["meta"]).decode())
    meta["version"] = 2
    meta["vocab"] = [t for t in meta["vocab"] if t != "カレー"]  # as a version 2 build had it
    arrays["meta"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    path.write_bytes(buf.getvalue())
    loaded = SiteIndex.load(path)
    assert "カレー" in loaded.lexical.vocab
    assert np.array_equal(loaded.lexical.idf, built.lexical.idf)


def test_a_katakana_word_the_site_never_writes_counts_as_its_bigrams(tmp_path: Path) -> None:
    # エック (えっ詳しく misheard) is no word of the site: it must not weigh twice against the
    # best possible score, as a word the site writes whole and in 2-grams does.
    root = tmp_path / "site"
    root.mkdir()
    (root / "photo.md").write_text("# 撮影\nチェックしてから撮影してください。", encoding="utf-8")
    index = build_index(root, HashingEmbedder())
    weights = index.search_terms(SearchQuery.of("エックはしく"))
    assert "エック" not in weights
    assert weights["エッ"] + weights["ック"] == pytest.approx(1.0)
    assert index.search_terms(SearchQuery.of("チェック"))["チェック"] == pytest.approx(0.5)


def test_sentences_embedded_as_passages_are_kept_and_bounded(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A reply's sentences chosen by meaning are embedded once: asked again (the same page at
    the next turn), they cost no encoder call; the oldest go past the bound."""
    import kiosk.retrieval.index as index_module

    (tmp_path / "a.md").write_text("# A\nThe cafe sells soup.\n", encoding="utf-8")
    emb = HashingEmbedder()
    index = build_index(tmp_path, emb)
    calls = emb.calls
    first = index.passage_vectors(["The cafe sells soup.", "Tea is free."], emb)
    assert emb.calls == calls + 2 and first.shape == (2, emb.dim)
    again = index.passage_vectors(["Tea is free.", "The cafe sells soup."], emb)
    assert emb.calls == calls + 2
    assert np.array_equal(again, first[::-1])
    monkeypatch.setattr(index_module, "PASSAGES_KEPT", 2)
    index.passage_vectors(["A third sentence."], emb)  # "Tea is free." was read first
    index.passage_vectors(["Tea is free."], emb)
    assert emb.calls == calls + 4
