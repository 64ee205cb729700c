"""Katakana loanwords searched by the site's Latin spelling (パイソン -> python)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kiosk.dialogue.query import SearchQuery
from kiosk.retrieval.index import build_index
from kiosk.retrieval.loanwords import Loanwords, katakana_key, latin_key, romanize
from kiosk.text import terms as terms_of
from tests.fakes import HashingEmbedder


@pytest.mark.parametrize(("katakana", "latin"), [
    ("パイソン", "python"), ("クラウドフレア", "cloudflare"), ("アイスクリプト", "aiscript"),
    ("マストドン", "mastodon"), ("ジャバスクリプト", "javascript"), ("プラグイン", "plugin"),
    ("タイムライン", "timeline"), ("ディスコード", "discord"), ("ミスキー", "misskey"),
])
def test_a_loanword_and_its_spelling_share_a_skeleton(katakana: str, latin: str) -> None:
    assert katakana_key(katakana) == latin_key(latin)


@pytest.mark.parametrize(("katakana", "latin"), [
    ("プラグイン", "program"), ("パイソン", "paste"), ("クラウドフレア", "cloudfront"),
])
def test_different_consonants_do_not_share_one(katakana: str, latin: str) -> None:
    # Vowels are dropped, so パイソン also sounds like "poison": a site must not write the
    # katakana word itself, and skeletons need three consonants (see Loanwords).
    assert katakana_key(katakana) != latin_key(latin)


def test_romaji_of_small_kana() -> None:
    assert romanize("ティッカー") == "tika"
    assert romanize("ウェブ") == "webu"
    assert romanize("キャッシュ") == "kyashu"
    assert romanize("ジャバ") == "jaba"
    assert romanize("パイソンA") is None


def test_only_skeletons_of_three_consonants_are_matched() -> None:
    words = Loanwords(["python", "cloudflare", "node", "need", "nerd"])
    assert words.spellings("パイソン") == ("python",)
    assert words.spellings("クラウドフレア") == ("cloudflare",)
    assert words.spellings("ノード") == ()  # n-d: node, need, nerd... too many to tell
    assert words.spellings("ルビー") == ()  # not on the site


def _site(root: Path) -> Path:
    root.mkdir()
    (root / "libraries.md").write_text(
        "# ライブラリ\nPythonやRubyからAPIを使うためのライブラリの一覧です。", encoding="utf-8")
    (root / "cdn.md").write_text(
        "# CDNの設定\nCloudflareなどのCDNを使うと配信が軽くなります。", encoding="utf-8")
    (root / "server.md").write_text(
        "# サーバーの準備\nサーバーを用意してインストールします。", encoding="utf-8")
    return root


def test_a_katakana_word_the_site_spells_in_latin_is_searched_by_that_spelling(
        tmp_path: Path) -> None:
    index = build_index(_site(tmp_path / "site"), HashingEmbedder())
    terms = index.search_terms(SearchQuery.of("パイソンだと"))
    assert terms == {"python": pytest.approx(1.0)}  # its katakana 2-grams gave way
    # the index's own term for the word (its stem) is what is searched
    cloudflare = terms_of("Cloudflare")[0]
    assert index.search_terms(SearchQuery.of("クラウドフレアは使うの"))[cloudflare] > 0
    # the site writes サーバー in katakana: its 2-grams find it, nothing is added
    assert index.search_terms(SearchQuery.of("サーバーの準備")) == \
        index.query_terms(SearchQuery.of("サーバーの準備"))
    assert index.coverage("パイソンだと")[index.position("libraries.md")] == 1.0
    lexical = index.page_lexical_scores(SearchQuery.of("パイソンだと"))
    assert int(lexical.argmax()) == index.position("libraries.md")
