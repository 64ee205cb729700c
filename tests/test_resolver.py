"""The resolver's decisions, table-driven, in both languages. Pure: no index, no clock."""

from __future__ import annotations

from dataclasses import replace

import pytest

from kiosk.dialogue.history import Exchange
from kiosk.dialogue.lexicon import load_lexicon
from kiosk.dialogue.query import QuerySegment
from kiosk.dialogue.resolver import (
    ACT,
    DISTANT,
    ELLIPSIS,
    IMMEDIATE,
    INDEPENDENT,
    PAGE,
    REPEAT,
    SITE,
    Anchor,
    ResolverParams,
    analyze,
    classify_act,
    clean,
    decide,
    distant_asked,
    distant_clue,
    distant_question,
    is_repair,
)

P = ResolverParams()

EN_HISTORY = (
    Exchange("are there any rules about streaming on youtube",
             "Live streaming to YouTube needs permission in advance.", "en",
             page_id="en/photography.md", page_title="Photography and Live Streaming"),
    Exchange("what time does the robot show start",
             "A humanoid robot dances at 11:30 and 14:00.", "en",
             page_id="en/robot-lab.md", page_title="Robot Lab"),
    Exchange("where is the cafe", "The Harbor Cafe is on the ground floor.", "en",
             page_id="en/cafe.md", page_title="Harbor Cafe"),
)
JA_HISTORY = (
    Exchange("YouTubeで配信するときのルールはあるかな",
             "ライブ配信には事前の許可が必要です。", "ja",
             page_id="ja/photography.md", page_title="写真撮影・動画・ライブ配信"),
    Exchange("アバター案内係ってなに",
             "アバターは入口の画面に映っている話すキャラクターです。", "ja",
             page_id="ja/avatar-guide.md", page_title="アバター案内係について"),
    Exchange("ロボットの実演は何時から", "人型ロボットの実演は11時30分からです。", "ja",
             page_id="ja/robot-lab.md", page_title="ロボットラボ"),
)


def _history(lang: str) -> tuple[Exchange, ...]:
    return EN_HISTORY if lang == "en" else JA_HISTORY


@pytest.mark.parametrize(
    ("lang", "utterance", "kind", "act", "detail"),
    [
        # acts: no search
        ("en", "hello", ACT, "greeting", False),
        ("en", "thanks that's helpful", ACT, "thanks", False),
        ("en", "ok thanks bye", ACT, "farewell", False),
        ("en", "stop", ACT, "stop", False),
        ("ja", "ありがとうございます", ACT, "thanks", False),
        ("ja", "ストップ", ACT, "stop", False),
        ("ja", "なるほどね", ACT, "ack", False),
        # getting attention greets: the question comes next
        ("ja", "すみませんちょっといいですか", ACT, "greeting", False),
        ("en", "excuse me can i ask you something", ACT, "greeting", False),
        ("ja", "すみませんトイレはどこですか", INDEPENDENT, None, False),
        ("en", "excuse me where is the cafe", INDEPENDENT, None, False),
        ("en", "can i ask you something about the robot", INDEPENDENT, None, False),
        # a question to the avatar about itself: no page is about it
        ("en", "how old are you", ACT, "personal", False),
        ("en", "hey who are you", ACT, "personal", False),
        ("ja", "あなたは何歳なの", ACT, "personal", False),
        ("ja", "お名前は", ACT, "personal", False),
        ("ja", "自己紹介して", ACT, "personal", False),
        # asking how it is greets: no page answers it, and no apology is due
        ("en", "how are you doing today", ACT, "greeting", False),
        ("ja", "お元気ですか", ACT, "greeting", False),
        # ... but "you" as the venue, or an age limit, is a question about the venue
        ("en", "how old do you have to be to join", INDEPENDENT, None, False),
        ("en", "are you open on sundays", INDEPENDENT, None, False),
        ("en", "who are you open to", INDEPENDENT, None, False),
        ("ja", "何歳から入れるの", INDEPENDENT, None, False),
        ("ja", "あなたの施設は何時まで", INDEPENDENT, None, False),
        # an act word inside a question is not an act
        ("ja", "それはいくら", IMMEDIATE, None, False),
        ("en", "wait you're not explaining in detail", INDEPENDENT, None, True),
        ("en", "great what time does it open", IMMEDIATE, None, False),
        # situational: the screen and the site
        ("en", "what's on this page", PAGE, None, False),
        ("ja", "このページには何が書いてあるの", PAGE, None, False),
        ("en", "what other pages are on this site", SITE, None, False),
        ("ja", "このサイトにはほかにどんなページがある", SITE, None, False),
        # what else the kiosk can be asked is the site, not the last exchange ("what else")
        ("en", "what else can i ask you", SITE, None, False),
        ("en", "what else can i look up on this thing", SITE, None, False),
        ("ja", "ほかに何が聞けるの", SITE, None, False),
        ("ja", "何を聞けばいいの", SITE, None, False),
        ("en", "what topics can you help me with", SITE, None, False),
        # what a venue offers is the site ("what is there to see" -> the home page) ...
        ("en", "what is there to see", SITE, None, False),
        ("ja", "何が見られるの", SITE, None, False),
        # ... and what the page shown holds, when it names that page
        ("ja", "このグラフのページって何が見られるの", PAGE, None, False),
        ("en", "what else can kids try there", IMMEDIATE, None, False),
        # immediate: the previous exchange
        ("en", "can you explain that in more detail", IMMEDIATE, None, True),
        ("ja", "それを詳しく説明してくれる", IMMEDIATE, None, True),
        ("ja", "具体的なステップは。", IMMEDIATE, None, True),  # nominalized, no verb
        # distant: the exchange the clue overlaps
        ("en", "what about the streaming thing from earlier", DISTANT, None, False),
        ("ja", "さっきの配信の話だけど", DISTANT, None, False),
        ("ja", "さっきのアバターの話", DISTANT, None, False),
        # independent interrogatives carry their own terms
        ("en", "why do i need permission to live stream", INDEPENDENT, None, False),
        ("ja", "なんで配信に許可がいるの", INDEPENDENT, None, False),
        # long detail requests keep the detail flag, whatever their length
        ("en", "i'd really like to hear much more about the theater that shows the old eruption",
         IMMEDIATE, None, True),
        ("ja", "大正噴火を再現するシアターがどんなものなのかをもっとくわしく知りたいです",
         IMMEDIATE, None, True),
        # repeat requests
        ("en", "sorry could you say that again", REPEAT, None, False),
        ("ja", "もう一回言って", REPEAT, None, False),
        ("ja", "今なんて", REPEAT, None, False),
        ("ja", "え、もう一度", REPEAT, None, False),
        ("ja", "もう一度予約したいんだけど", INDEPENDENT, None, False),  # not at the end
        ("en", "remind me about the youtube rules", DISTANT, None, False),
        # not heard: said again, not searched
        ("en", "sorry i didn't catch that", REPEAT, None, False),
        ("en", "can you say it slower", REPEAT, None, False),
        ("ja", "聞き取れなかった", REPEAT, None, False),
        ("ja", "もう少しゆっくり言って", REPEAT, None, False),
        # "one more question" points at nothing said before
        ("en", "one more question where can i park", INDEPENDENT, None, False),
        ("ja", "ほかに質問があるんだけど駐車場はどこ", INDEPENDENT, None, False),
        # "no, I'm fine": an acknowledgement; "is it fine?" a question
        ("ja", "いえ大丈夫です", ACT, "ack", False),
        ("ja", "大丈夫ですか", INDEPENDENT, None, False),
        ("en", "yes please", ACT, "ack", False),
        # the website named as where to do something: a question about that, not the site
        ("en", "can i book tickets on the website", INDEPENDENT, None, False),
        ("ja", "ウェブサイトで予約できる", INDEPENDENT, None, False),
        ("ja", "その猫耳の子をこのサイトの画面に出せるの", IMMEDIATE, None, False),
        ("en", "whats everything else on this kiosk", SITE, None, False),
        ("ja", "このサイトでほかに調べられることってある", SITE, None, False),
        # "after that" is time, not a reference
        ("ja", "そのあとお昼ごはんはどこで食べられる", INDEPENDENT, None, False),
        # existential "there" points at nothing; a second "there" still does
        ("en", "is there a cafe", INDEPENDENT, None, False),
        ("en", "are there lockers for bags", INDEPENDENT, None, False),
        ("en", "is there parking there", IMMEDIATE, None, False),
    ],
)
def test_analysis(lang: str, utterance: str, kind: str, act: str | None, detail: bool) -> None:
    a = analyze(utterance, _history(lang), load_lexicon(lang), P)
    assert (a.kind, a.act, a.detail) == (kind, act, detail)


@pytest.mark.parametrize(
    ("lang", "utterance", "expected_page"),
    [
        ("en", "what about the streaming thing from earlier", "en/photography.md"),
        ("en", "going back to the robot you mentioned", "en/robot-lab.md"),
        ("ja", "さっきのアバターの話", "ja/avatar-guide.md"),
        ("ja", "先ほどの配信の話で 音はどうするの", "ja/photography.md"),
        ("en", "the youtube thing you told me about do i need a permit", "en/photography.md"),
        ("en", "regarding the streaming rules can i use a phone", "en/photography.md"),
        ("ja", "最初の質問に戻るけど配信に許可はいる", "ja/photography.md"),
        ("ja", "ロボットの件に戻りたいんだけど", "ja/robot-lab.md"),
        # verbs of saying beside "mentioned" and "told"
        ("en", "the robot show you described can kids join", "en/robot-lab.md"),
        ("ja", "さっき説明してた配信のルールだけど", "ja/photography.md"),
    ],
)
def test_distant_reference_picks_the_overlapping_exchange_across_other_topics(
        lang: str, utterance: str, expected_page: str) -> None:
    history = _history(lang)
    a = analyze(utterance, history, load_lexicon(lang), P)
    assert a.kind == DISTANT and a.distant_index is not None
    assert history[a.distant_index].page_id == expected_page
    r = decide(a, history, P)
    assert r.query is not None
    texts = [s.text for s in r.query.segments]
    # the visitor's words, as spoken (after the question it asks beside its clue, if any)
    assert utterance in texts[:2] and r.query.segments[0].role == "utterance"
    assert history[a.distant_index].user in texts
    others = [ex.user for i, ex in enumerate(history) if i != a.distant_index]
    assert not any(o in texts for o in others)  # only the relevant exchange rides along


def test_distant_marker_without_a_matching_exchange_is_not_distant() -> None:
    a = analyze("what about the dinosaurs from earlier", EN_HISTORY, load_lexicon("en"), P)
    assert a.kind != DISTANT


def test_immediate_adds_the_whole_previous_exchange_visitor_and_avatar() -> None:
    a = analyze("can you explain that in more detail", EN_HISTORY, load_lexicon("en"), P)
    r = decide(a, EN_HISTORY, P)
    assert r.query is not None
    roles = {s.role: s.text for s in r.query.segments}
    assert roles["utterance"] == "can you explain that in more detail"
    assert roles["user"] == EN_HISTORY[-1].user
    assert roles["reply"] == EN_HISTORY[-1].reply


def test_apology_in_history_is_never_search_context() -> None:
    lex = load_lexicon("ja")
    apology = "すみません、もう少し…"
    assert is_repair(apology, lex)
    history = (*JA_HISTORY[:1], Exchange("それを詳しく説明してくれる", apology, "ja", repair=True,
                                       context=(QuerySegment(JA_HISTORY[0].user, 0.5, "user"),)))
    a = analyze("えっ詳しく説明してくれないの", history, lex, P)
    r = decide(a, history, P)
    assert r.query is not None
    texts = " ".join(s.text for s in r.query.segments)
    assert apology not in texts
    assert JA_HISTORY[0].user in texts  # the topic survives through the apology


def test_english_apology_detected() -> None:
    assert is_repair("Sorry, could you say that again?", load_lexicon("en"))
    assert not is_repair("The cafe is open from 10:00.", load_lexicon("en"))


@pytest.mark.parametrize(("lang", "reply", "repair"), [
    ("en", "I'm sorry for your loss. A Veteran may qualify for burial in a national cemetery.",
     False),
    ("en", "I'm so sorry. As the parent of a Servicemember, you may qualify for counseling.",
     False),
    ("en", "Sorry about that. You can apply online or by mail.", False),
    ("en", "Sorry, I didn't catch that. Could you say it again?", True),
    ("en", "I'm sorry, I couldn't find that in this venue's pages.", True),
    ("ja", "お悔やみ申し上げます。ご遺族は給付金を受け取れる場合があります。", False),
    ("ja", "すみません、よく聞き取れませんでした。もう一度お願いします。", True),
])
def test_sympathy_is_no_apology(lang: str, reply: str, repair: bool) -> None:
    """A reply that answers after "I'm sorry for your loss" is context like any answer."""
    assert is_repair(reply, load_lexicon(lang)) is repair


def test_independent_question_with_confident_bare_search_gets_no_context() -> None:
    a = analyze("why do i need permission to live stream", EN_HISTORY, load_lexicon("en"), P)
    assert a.needs_confidence
    r = decide(a, EN_HISTORY, P, bare_confidence=(0.6, 0.5))
    assert r.kind == INDEPENDENT and r.query is not None and len(r.query.segments) == 1


def test_weak_bare_search_adds_previous_exchange_as_ellipsis() -> None:
    a = analyze("what are the opening times of the dome", EN_HISTORY, load_lexicon("en"), P)
    r = decide(a, EN_HISTORY, P, bare_confidence=(0.1, 0.05))
    assert r.kind == ELLIPSIS and r.query is not None and len(r.query.segments) > 1
    assert r.pool > 0  # own content: context only reorders what the words found


@pytest.mark.parametrize(("lang", "utterance"), [
    ("ja", "ロッカーを使うには"),
    ("ja", "写真を撮るときのルールは"),
    ("en", "and how do i book a school visit"),
])
def test_a_follow_up_by_shape_alone_whose_words_name_a_page_is_a_question_of_its_own(
        lang: str, utterance: str) -> None:
    """〜は / 〜には / "and ..." is also how a visitor opens a new topic: when the words alone
    find one page with a clear lead, no old topic is added (nor its page favoured)."""
    history = _history(lang)
    a = analyze(utterance, history, load_lexicon(lang), P)
    assert a.kind == IMMEDIATE and a.shaped and a.needs_confidence
    r = decide(a, history, P, bare_confidence=(0.37, 0.25))
    assert r.kind == INDEPENDENT and r.query is not None and len(r.query.segments) == 1
    assert not r.anchors
    # no clear lead: the shape is read as a follow-up, as before
    r = decide(a, history, P, bare_confidence=(0.37, 0.10))
    assert r.kind == IMMEDIATE and r.query is not None and len(r.query.segments) > 1


def test_a_follow_up_with_a_deictic_word_or_too_few_words_stays_a_follow_up() -> None:
    lex = load_lexicon("ja")
    a = analyze("それを使うには", JA_HISTORY, lex, P)
    assert a.kind == IMMEDIATE and not a.shaped
    assert decide(a, JA_HISTORY, P, bare_confidence=(0.6, 0.6)).kind == IMMEDIATE
    a = analyze("特典は", JA_HISTORY, lex, P)  # one word: too little to stand alone
    assert a.shaped
    assert decide(a, JA_HISTORY, P, bare_confidence=(0.6, 0.6)).kind == IMMEDIATE


def test_a_comparison_that_names_both_things_is_a_question_of_its_own() -> None:
    """「AとBの違いは」 ends in は as a follow-up does, but names both things it compares;
    「Bとの違いは」 compares B with what was just said, and leans on it."""
    lex = load_lexicon("ja")
    a = analyze("クリップとお気に入りの違いは", JA_HISTORY, lex, P)
    assert a.kind == INDEPENDENT and not a.shaped
    a = analyze("ウェブ版との違いは", JA_HISTORY, lex, P)
    assert a.kind == IMMEDIATE and a.shaped


def test_detail_complaint_without_deixis_takes_the_previous_exchange() -> None:
    a = analyze("wait you're not explaining in detail", EN_HISTORY, load_lexicon("en"), P)
    r = decide(a, EN_HISTORY, P)
    assert r.kind == ELLIPSIS and r.detail and r.pool == 0


def test_contentless_follow_up_without_deixis_takes_context() -> None:
    a = analyze("until what time", EN_HISTORY, load_lexicon("en"), P)
    r = decide(a, EN_HISTORY, P)
    assert r.kind == ELLIPSIS and r.pool == 0
    assert r.query is not None and EN_HISTORY[-1].user in [s.text for s in r.query.segments]


def test_rejection_keeps_the_question_but_not_the_rejected_answer() -> None:
    a = analyze("no i mean the robot that draws portraits", EN_HISTORY, load_lexicon("en"), P)
    assert a.rejection
    r = decide(a, EN_HISTORY, P)
    assert r.query is not None
    texts = [s.text for s in r.query.segments]
    assert EN_HISTORY[-1].user in texts and EN_HISTORY[-1].reply not in texts
    assert r.avoid_page is None


@pytest.mark.parametrize("lang,text,rejects", [
    ("en", "no no i mean the robot that draws portraits", True),
    ("en", "oh wrong one", True),
    ("en", "what could be wrong with my ticket", False),  # a question about something wrong
    ("en", "what's wrong with the elevator", False),
    ("en", "i would rather go in the morning is that quieter", False),
    ("ja", "いや人じゃなくて特定の言葉を見たくないの", True),
    ("ja", "ちがくて似顔絵を描くロボットのほう", True),
    ("ja", "それってツイッターと何が違うの", False),  # asks for the difference
    ("ja", "どう違うの", False),
    # deep in a long question: a contrast inside it, not the last answer turned down
    ("ja", "作ったテーマを友達にも使ってもらいたいんだけどファイルを送るんじゃなくて"
           "自分のサイトから入れてもらえるの", False),
])
def test_a_rejection_turns_down_the_answer_as_the_turn_opens(lang: str, text: str,
                                                             rejects: bool) -> None:
    history = EN_HISTORY if lang == "en" else JA_HISTORY
    assert analyze(text, history, load_lexicon(lang), P).rejection is rejects


@pytest.mark.parametrize("lang,text,screen", [
    ("en", "what's this chart about", True),
    ("en", "who do i call about this", True),
    ("en", "is there a good sushi restaurant near here", False),  # the place, not the page
    ("en", "how do i get here from the station", False),
    ("en", "what workshops are there this weekend", False),  # a time, not the page
    ("ja", "ここに書いてある料金っていくら", True),
    ("ja", "このイベントって何時から", True),
    ("ja", "この近くにおいしいラーメン屋さんある", False),
    ("ja", "ここまでの行き方を教えて", False),
    ("ja", "この時間はカフェは混んでる", False),
])
def test_here_is_the_page_on_screen_or_the_place_and_time_the_visitor_is_in(
        lang: str, text: str, screen: bool) -> None:
    assert analyze(text, (), load_lexicon(lang), P).proximal is screen


@pytest.mark.parametrize("lang,text,screen,kind", [
    # tapped to another page since the last answer: "this" is what the visitor looks at now
    ("en", "what's this", "en/planetarium.md", PAGE),
    ("en", "tell me about this", "en/planetarium.md", PAGE),
    ("ja", "これについて教えて", "ja/planetarium.md", PAGE),
    # "that" / それ still names the answer
    ("en", "tell me more about that", "en/planetarium.md", IMMEDIATE),
    ("ja", "それについてもっと教えて", "ja/planetarium.md", IMMEDIATE),
    # the screen still shows the answer's page: the follow-up it always was
    ("en", "what's this", "en/cafe.md", IMMEDIATE),
    ("ja", "これについて教えて", "ja/robot-lab.md", IMMEDIATE),
])
def test_this_after_a_tap_is_the_page_on_screen(lang: str, text: str, screen: str,
                                                kind: str) -> None:
    history = _history(lang)
    assert decide(analyze(text, history, load_lexicon(lang), P), history, P, None,
                  screen).kind == kind


def test_bare_rejection_turns_away_from_the_page_just_given() -> None:
    r = decide(analyze("no not that one", EN_HISTORY, load_lexicon("en"), P), EN_HISTORY, P)
    assert r.avoid_page == "en/cafe.md"


def test_acts_are_not_used_as_context() -> None:
    history = (*EN_HISTORY, Exchange("thank you", "You're welcome.", "en", act="thanks"))
    r = decide(analyze("tell me more", history, load_lexicon("en"), P), history, P)
    assert r.query is not None
    assert EN_HISTORY[-1].user in [s.text for s in r.query.segments]


def test_first_turn_searches_its_own_words() -> None:
    r = decide(analyze("what is there to eat", (), load_lexicon("en"), P), (), P)
    assert r.query is not None and r.query.segments[0].text == "what is there to eat"


@pytest.mark.parametrize(
    ("text", "act"),
    [("hi there", "greeting"), ("good morning", "greeting"), ("thank you very much", "thanks"),
     ("see you later", "farewell"), ("i see", "ack"), ("never mind", "stop"),
     ("where is the toilet", None), ("thanks where is the toilet", None)],
)
def test_classify_act_english(text: str, act: str | None) -> None:
    assert classify_act(text, load_lexicon("en")) == act


def _bonus(anchors: tuple[Anchor, ...]) -> dict[str, float]:
    return {a.page_id: a.bonus for a in anchors}


def test_immediate_points_at_the_page_of_the_last_answer_past_an_apology() -> None:
    """The page of the exchange pointed at is the first candidate; an apology is no answer,
    so the visitor who asks again after one still means the page before it."""
    history = (*EN_HISTORY, Exchange("and if i um", "Sorry, I didn't catch that.", "en",
                                     page_id="en/lost-and-found.md", repair=True))
    r = decide(analyze("how much does it cost", history, load_lexicon("en"), P), history, P)
    assert r.kind == IMMEDIATE
    assert _bonus(r.anchors) == {"en/cafe.md": P.anchor_immediate}
    own = "is there a vegetarian curry on that menu for children"
    r = decide(analyze(own, history, load_lexicon("en"), P), history, P)
    assert _bonus(r.anchors) == {"en/cafe.md": P.anchor_immediate_own}  # its words weigh more


@pytest.mark.parametrize(("lang", "utterance"), [
    ("en", "what is this chart thing"),
    ("en", "who do i call to get this started"),
    ("ja", "このイベントって何時から"),
])
def test_this_plus_a_noun_points_at_the_page_on_screen(lang: str, utterance: str) -> None:
    history = _history(lang)
    a = analyze(utterance, history, load_lexicon(lang), P)
    assert a.proximal and a.kind != PAGE  # a search, with the screen as first candidate
    r = decide(a, history, P, bare_confidence=(0.6, 0.5), screen_page="x/screen.md")
    assert r.query is not None
    assert _bonus(r.anchors)["x/screen.md"] == P.anchor_screen
    # without a page on screen there is nothing to point at
    assert "x/screen.md" not in _bonus(decide(a, history, P, (0.6, 0.5), None).anchors)


@pytest.mark.parametrize(("lang", "utterance"), [
    ("en", "is there something on here about dinosaurs"),
    ("ja", "ここに恐竜のことって何かある"),
])
def test_here_with_the_home_page_on_screen_is_the_site(lang: str, utterance: str) -> None:
    """The home page only sums the site up: "here" on it asks the whole site, and the home
    page gets no bonus as the page pointed at (18F's methods: "is there something on here
    about finding themes" had found the home page's blurb)."""
    a = analyze(utterance, (), load_lexicon(lang), P)
    assert a.proximal
    shown = decide(a, (), P, bare_confidence=(0.6, 0.5), screen_page="x/screen.md")
    assert _bonus(shown.anchors).get("x/screen.md") == P.anchor_screen
    home = decide(a, (), P, bare_confidence=(0.6, 0.5), screen_page="index.md",
                  screen_home=True)
    assert home.query is not None and "index.md" not in _bonus(home.anchors)


@pytest.mark.parametrize(("lang", "utterance"), [
    ("en", "what is this for"),
    ("ja", "これって何に使うの"),
])
def test_this_alone_with_a_page_on_screen_is_that_page(lang: str, utterance: str) -> None:
    """"this" with no topic of its own and no follow-up shape is what the visitor looks at;
    without a page on screen it is searched as it stands."""
    a = analyze(utterance, (), load_lexicon(lang), P)
    assert a.proximal and not a.has_own_content and a.kind == INDEPENDENT
    r = decide(a, (), P, screen_page="x/screen.md")
    assert r.kind == PAGE and r.query is None
    assert decide(a, (), P, screen_page=None).kind == INDEPENDENT


def test_here_with_a_topic_is_a_search_not_a_page_summary() -> None:
    a = analyze("is there something on here about parking", (), load_lexicon("en"), P)
    assert a.kind != PAGE
    r = decide(a, (), P, screen_page="en/cafe.md")
    assert r.query is not None and _bonus(r.anchors) == {"en/cafe.md": P.anchor_screen}


@pytest.mark.parametrize(("lang", "utterance"), [
    ("en", "what else can you help me with"),
    ("en", "whats everything else on this kiosk"),
    ("ja", "このサイトには何があるの"),
])
def test_site_question_without_a_topic_lists_the_site(lang: str, utterance: str) -> None:
    a = analyze(utterance, _history(lang), load_lexicon(lang), P)
    assert a.kind == SITE
    assert decide(a, _history(lang), P).query is None


def test_distant_clue_found_by_meaning_when_no_2gram_matches() -> None:
    """'the drawing one from before': no 2-gram of 'drawing' is in any exchange; the brain's
    similarity (0..1 per exchange) picks the exchange when it leads by the margin."""
    lex = load_lexicon("en")
    utterance = "going back to the drawing one from before can kids join"
    assert decide(analyze(utterance, EN_HISTORY, lex, P), EN_HISTORY, P).kind != DISTANT
    similarity = (0.2, 0.6, 0.25)
    a = analyze(utterance, EN_HISTORY, lex, P, similarity)
    assert a.kind == DISTANT and a.distant_index == 1
    r = decide(a, EN_HISTORY, P)
    assert _bonus(r.anchors) == {"en/robot-lab.md": P.anchor_distant}
    # no lead: nothing is picked rather than a guess
    assert analyze(utterance, EN_HISTORY, lex, P, (0.55, 0.6, 0.58)).kind != DISTANT


def test_distant_meaning_leads_over_another_page_not_over_the_same_page_s_follow_up() -> None:
    """A topic asked about and followed up ("what time does the robot show start" | "how long
    is it") is two exchanges of one page, equally close in meaning to "the drawing one from
    before": the lead is measured over the best exchange of another page, and the first of
    the two is taken (with the raw runner-up the two tied and nothing was picked)."""
    lex = load_lexicon("en")
    history = (*EN_HISTORY[:2],
               Exchange("how long is it", "About twenty minutes.", "en",
                        page_id="en/robot-lab.md", page_title="Robot Lab"),
               EN_HISTORY[2])
    utterance = "going back to the drawing one from before can kids join"
    a = analyze(utterance, history, lex, P, (0.2, 0.6, 0.6, 0.25))
    assert a.kind == DISTANT and a.distant_index == 1
    # another page as close: no lead, no guess
    assert analyze(utterance, history, lex, P, (0.2, 0.6, 0.6, 0.58)).kind != DISTANT


# The ads talked about over two exchanges, then a question on ad blockers (another page) that
# also names the ads: "back to the ads from earlier" means the first topic.
ADS_HISTORY = (
    Exchange("what does this ads page say", "Ads can be shown on the timeline.", "en",
             page_id="en/ads.md", page_title="Ads"),
    Exchange("i hid an ad but the same ads keep coming", "Hidden ads are remembered for a week.",
             "en", page_id="en/ads.md", page_title="Ads"),
    Exchange("can i use an ad blocker with the ads", "Please turn ad blockers off.", "en",
             page_id="en/notes.md", page_title="Notes"),
)


def test_the_x_from_before_looks_past_the_last_exchange() -> None:
    """The last exchange is what "that" names; "from before" goes further back when the clue's
    words are there, even when the last exchange is closer in meaning."""
    lex = load_lexicon("en")
    utterance = "about the ads from before how do i show ads on my own server"
    a = analyze(utterance, ADS_HISTORY, lex, P, (0.5, 0.45, 0.6))
    assert a.kind == DISTANT and a.distant_index == 0
    # found only in the last exchange: that one it is
    only_last = (*EN_HISTORY, Exchange("can i use an ad blocker", "Please turn ad blockers off.",
                                       "en", page_id="en/notes.md", page_title="Notes"))
    a = analyze("about the ad blocker from before is it safe", only_last, lex, P)
    assert a.kind == DISTANT and a.distant_index == len(only_last) - 1


def test_the_x_talk_is_the_page_the_conversation_talked_x_on() -> None:
    """Among earlier exchanges that all hold the clue's words as well, the page they were
    talked about on most wins over one exchange of another page naming X in passing."""
    lex = load_lexicon("en")
    history = (
        Exchange("is there a robot show", "The robot show starts at 11:30.", "en",
                 page_id="en/robot-show.md", page_title="Robot Show"),
        Exchange("who built the robot lab", "Students built the robot lab.", "en",
                 page_id="en/robot-lab.md", page_title="Robot Lab"),
        Exchange("can i touch the robot there", "You may shake hands with the robot.", "en",
                 page_id="en/robot-lab.md", page_title="Robot Lab"),
        Exchange("where is the cafe", "The Harbor Cafe is on the ground floor.", "en",
                 page_id="en/cafe.md", page_title="Harbor Cafe"),
    )
    a = analyze("going back to the robot you mentioned how long does it take", history, lex, P)
    assert a.kind == DISTANT and history[a.distant_index or 0].page_id == "en/robot-lab.md"


def test_an_exchange_asked_again_is_not_the_topic_gone_back_to() -> None:
    """"Sorry, say that again" answered nothing: a later "the X from before" means the
    exchange that answered, not the garbled attempt that holds the same words."""
    lex = load_lexicon("en")
    history = (
        Exchange("where is the cafe", "The Harbor Cafe is on the ground floor.", "en",
                 page_id="en/cafe.md", page_title="Harbor Cafe"),
        # not understood: its page is only the search's guess
        Exchange("what about the ads can my uh", "Sorry, I didn't catch all of that.", "en",
                 page_id="en/cafe.md", repair=True),
        Exchange("what is the ads page about", "Ads can be shown on the timeline.", "en",
                 page_id="en/ads.md", page_title="Ads"),
        Exchange("is it open on sundays", "The cafe is open every day.", "en",
                 page_id="en/cafe.md", page_title="Harbor Cafe"),
    )
    a = analyze("about the ads from before can my server show them", history, lex, P)
    assert a.kind == DISTANT and history[a.distant_index or 0].page_id == "en/ads.md"
    assert a.distant_index == 2


@pytest.mark.parametrize(
    ("lang", "utterance", "question"),
    [
        ("ja", "さっきの配信の話だけど音は録っていいの", "音は録っていいの"),
        ("en", "about the streaming thing from earlier do i need a permit", "do i need a permit"),
        # words that lean on the clue: no question of its own
        ("ja", "さっきの配信の話だけどそれって無料", None),
        ("en", "about the streaming thing from earlier is there a fee for it", None),
        ("en", "you mentioned the robot show what about the first one", None),
        # the topic not closed (no 〜けど): the utterance as it is
        ("ja", "先ほどの配信の話で 音はどうするの", None),
    ],
)
def test_a_distant_reference_searches_its_new_question_whole_and_its_clue_lightly(
        lang: str, utterance: str, question: str | None) -> None:
    """The exchange gone back to brings the topic; the clue's words said at full weight would
    find that page a second time, over the page the new question is about."""
    history = _history(lang)
    lex = load_lexicon(lang)
    a = analyze(utterance, history, lex, P)
    assert a.kind == DISTANT
    assert distant_question(a.text, lex) == question
    r = decide(a, history, P)
    assert r.query is not None
    head = [(s.text, s.weight) for s in r.query.segments if s.role == "utterance"]
    if question is None:
        assert head == [(utterance, 1.0)]
    else:
        assert head == [(question, 1.0), (utterance, P.distant_clue_weight)]
    assert history[a.distant_index or 0].user in [s.text for s in r.query.segments]


def test_hearsay_is_no_distant_reference() -> None:
    """「〜って聞いたけど」 (I heard that ...) points at the world, not at the conversation."""
    a = analyze("時計を画面の端に置けるって聞いたけど", JA_HISTORY, load_lexicon("ja"), P)
    assert a.kind != DISTANT and a.kind != PAGE


def test_after_an_apology_the_context_is_the_exchange_before_it() -> None:
    """'Sorry, I didn't catch that' to a cut-off utterance: the visitor says it again, meaning
    the topic before; after 'do you mean A or B?' the visitor answers that question."""
    lex = load_lexicon("en")
    cut = Exchange("and if i um fit any", "Sorry, I didn't catch that. Could you say it again?",
                   "en", page_id="en/parking.md", repair=True)
    history = (*EN_HISTORY, cut)
    r = decide(analyze("what if i dont fit any of those", history, lex, P), history, P)
    assert r.context_from == (2,)  # the cafe exchange, not the garbled one
    asked = Exchange("how long is the show", "I'm not sure which you mean: \"Planetarium\" or "
                     "\"Hours\"? Could you say a little more?", "en", repair=True)
    history = (*EN_HISTORY, asked)
    r = decide(analyze("the one under the dome then", history, lex, P), history, P)
    assert r.context_from == (3,)


def test_a_weak_answer_is_not_built_on() -> None:
    """An answer from a page that scored low may be the wrong page: the next turn does not
    search with its words, takes what it leaned on at full weight, and trusts its page half."""
    topic = QuerySegment(EN_HISTORY[1].user, 0.5, "user")
    guess = Exchange("how long does the show last", "The cafe is open from 10:00 to 16:30.", "en",
                     page_id="en/cafe.md", page_title="Harbor Cafe", context=(topic,),
                     weak=True)
    history = (*EN_HISTORY[:2], guess)
    r = decide(analyze("how much does it cost", history, load_lexicon("en"), P), history, P)
    assert r.kind == IMMEDIATE and r.query is not None
    texts = {s.text: s for s in r.query.segments}
    assert guess.reply not in texts
    assert guess.user in texts
    # inherited undiminished: the weak exchange stands for what it leaned on
    assert texts[topic.text].weight == pytest.approx(topic.weight * texts[guess.user].weight)
    assert _bonus(r.anchors) == {"en/cafe.md": P.anchor_immediate * P.weak_anchor}
    firm = (*EN_HISTORY[:2], replace(guess, weak=False))
    sure = decide(analyze("how much does it cost", firm, load_lexicon("en"), P), firm, P)
    assert sure.query is not None and guess.reply in {s.text for s in sure.query.segments}
    assert _bonus(sure.anchors) == {"en/cafe.md": P.anchor_immediate}


@pytest.mark.parametrize(("lang", "utterance", "page"), [
    ("ja", "この展示のページには何が載ってるの", True),
    ("ja", "この記事って誰が書いたの", True),
    ("en", "what can i see on this chart page", True),
    ("en", "is this whole screen about parking", True),
    ("ja", "このイベントって何時から", False),  # a noun, not the page: a search
    ("en", "this page of the map is torn", True),
    ("en", "what is this chart thing", False),
    ("en", "where is the page about parking", False),  # no "this": a search
])
def test_this_with_a_page_noun_names_the_page_on_screen(lang: str, utterance: str,
                                                        page: bool) -> None:
    a = analyze(utterance, _history(lang), load_lexicon(lang), P)
    assert (a.kind == PAGE) == page


@pytest.mark.parametrize(("lang", "utterance", "clue"), [
    ("en", "about the dinosaur thing from before is there a guided tour", "dinosaur"),
    ("en", "going back to the robot show can kids join", "robot show"),
    ("en", "back to my desert storm problems is there a checkup", "desert storm problem"),
    ("ja", "さっきの恐竜の化石の話だけど触ってもいいの", "恐竜 化石"),
    ("ja", "駐車場の話に戻るけど土曜日は混むの", "駐車 車場"),
    ("ja", "さっきの広告の話", "広告"),
    # "you mentioned first" is one marker ("first" is no topic), "the X one" names X
    ("en", "the map one you mentioned first how long does that take", "map"),
    ("en", "for the expert review you described first how many people do I need",
     "expert review"),
    ("en", "the evaluation one from earlier does that involve the public at all", "evaluation"),
])
def test_the_distant_clue_is_the_topic_beside_the_marker(lang: str, utterance: str,
                                                         clue: str) -> None:
    """The new question after the clue ("is there any money") names no earlier exchange."""
    lex = load_lexicon(lang)
    assert distant_clue(clean(utterance), lex) == clue


def test_the_clue_is_the_whole_utterance_when_nothing_stands_beside_the_marker() -> None:
    lex = load_lexicon("en")
    assert distant_clue(clean("what did you say earlier"), lex) == distant_clue(
        clean("what did you say earlier"), lex)
    assert distant_clue(clean("tell me about that again"), lex) is None  # no distant marker


def test_a_follow_up_also_points_at_the_page_the_visitor_tapped_to() -> None:
    """After the cafe's answer the visitor tapped to the tickets page: "how much is it" may
    mean either. Both compete; the page on screen is marked seen."""
    a = analyze("how much is it", EN_HISTORY, load_lexicon("en"), P)
    r = decide(a, EN_HISTORY, P, screen_page="en/tickets.md")
    assert r.kind == IMMEDIATE
    assert _bonus(r.anchors) == {"en/cafe.md": P.anchor_immediate,
                                 "en/tickets.md": P.anchor_immediate}
    assert {x.page_id: x.seen for x in r.anchors} == {"en/cafe.md": False,
                                                      "en/tickets.md": True}
    # the screen still shows the answer's page: one anchor, seen
    same = decide(a, EN_HISTORY, P, screen_page="en/cafe.md")
    assert [(x.page_id, x.seen) for x in same.anchors] == [("en/cafe.md", True)]


@pytest.mark.parametrize("utterance", ["大人だと", "土曜なら", "子供だったら"])
def test_japanese_conditional_endings_are_follow_ups(utterance: str) -> None:
    assert analyze(utterance, JA_HISTORY, load_lexicon("ja"), P).kind == IMMEDIATE


@pytest.mark.parametrize(("utterance", "lang"), [
    ("大人だとえーと", "ja"), ("土曜はえっと", "ja"), ("the shop too uh", "en"),
])
def test_a_follow_up_trailing_off_in_a_hesitation_is_still_a_follow_up(utterance: str,
                                                                         lang: str) -> None:
    history = JA_HISTORY if lang == "ja" else EN_HISTORY
    assert analyze(utterance, history, load_lexicon(lang), P).kind == IMMEDIATE


@pytest.mark.parametrize(("utterance", "page"), [
    ("about the robot show can kids join in", "en/robot-lab.md"),  # opens with "about the"
    ("wait about the streaming rules do i need a permit", "en/photography.md"),
    ("what about the robot show", None),  # a follow-up, not a return to a topic
    ("tell me about the robot show", None),
])
def test_an_utterance_opening_with_about_the_returns_to_a_topic(utterance: str,
                                                                 page: str | None) -> None:
    a = analyze(utterance, EN_HISTORY, load_lexicon("en"), P)
    assert (a.kind == DISTANT) == (page is not None)
    if page is not None:
        assert a.distant_index is not None and EN_HISTORY[a.distant_index].page_id == page


@pytest.mark.parametrize(("utterance", "lang", "cut"), [
    ("the bank wants a uh a from the va for the", "en", True),
    ("how long does uh", "en", True),
    ("my other boy came home and hes not uh how do i", "en", True),
    ("what is it based on", "en", False),  # a preposition ends a finished question
    ("and if i dont fit any of", "en", True),  # ... but not after "any", "some", "one"
    ("what is the robot made of", "en", False),
    ("how do i break in", "en", False),
    ("can i go to the closest er", "en", False),  # the ER, no hesitation
    ("sorry where am i", "en", False),  # "i" after its verb ends a finished question
    ("列を増やすにはえー", "ja", True),
    ("このサイトってできたのはいつえっと", "ja", True),
    ("屋上へはどうやって行くの", "ja", False),
    ("トイレに行きたいんですが", "ja", False),
    ("さっきの広告の話だけどさうちの", "ja", True),  # a possessive waits for its noun
    ("それってどこで見られるの", "ja", False),  # the question's own の
])
def test_an_utterance_that_stops_mid_phrase_is_cut_off(utterance: str, lang: str,
                                                       cut: bool) -> None:
    assert analyze(utterance, (), load_lexicon(lang), P).cut_off == cut


@pytest.mark.parametrize("lang, utterance, expected_page", [
    ("en", "what were the rules for streaming on youtube again", "en/photography.md"),
    ("en", "what's the youtube streaming rule again", "en/photography.md"),
    ("ja", "YouTubeの配信のルールって何だっけ", "ja/photography.md"),
    ("ja", "ライブ配信のルールはどうだったっけ", "ja/photography.md"),
])
def test_a_question_asking_to_be_reminded_is_a_distant_reference(
        lang: str, utterance: str, expected_page: str) -> None:
    """"what's X again" / 〜だっけ asks to be reminded of something said, two topics back here:
    the exchange about it rides, not the last one (the cafe, the robot show)."""
    history = _history(lang)
    a = analyze(utterance, history, load_lexicon(lang), P)
    assert a.kind == DISTANT and a.distant_index is not None
    assert history[a.distant_index].page_id == expected_page


@pytest.mark.parametrize("lang, utterance", [
    ("en", "how do i start streaming again"),  # to do it once more
    ("en", "where do i sign up again"),
    ("ja", "YouTubeの配信をもう一回見つけたい"),
])
def test_doing_something_again_is_no_reminder(lang: str, utterance: str) -> None:
    assert analyze(utterance, _history(lang), load_lexicon(lang), P).kind != DISTANT


@pytest.mark.parametrize("lang, utterance, asked", [
    ("en", "the evaluation one from earlier does that involve the public at all",
     "does that involve the public at all"),
    ("en", "about the cemetery thing from before is there any money for the funeral",
     "is there any money for the funeral"),
    ("ja", "さっきの広告の話だけどそれってお金かかるの", "それってお金かかるの"),
    ("en", "what about the dinosaurs", None),  # no clue
])
def test_what_a_distant_reference_asks_beside_its_clue(lang: str, utterance: str,
                                                        asked: str | None) -> None:
    """Leaning on the clue ("does that ...") or not: the words an answer on the exchange's
    page is chosen by. (`distant_question`, what is searched alone, is None when they lean.)"""
    lex = load_lexicon(lang)
    assert distant_asked(clean(utterance), lex) == asked


@pytest.mark.parametrize("lang, utterance", [
    ("en", "for the expert review you described first how many people do i need"),
    ("ja", "最初に聞いた専門家の点検の話だけど何人いればいいの"),
])
def test_first_names_the_first_exchange_when_the_clue_names_none(lang: str,
                                                                  utterance: str) -> None:
    """"The expert review you described first": the visitor's words for it are not the
    avatar's (it said "heuristic evaluation"), so the clue finds no exchange; "first" still
    does. (Without "first", a clue that names nothing makes no distant reference.)"""
    history = _history(lang)
    a = analyze(utterance, history, load_lexicon(lang), P)
    assert a.kind == DISTANT and a.distant_index == 0


def test_a_tie_of_the_clue_s_words_goes_to_the_exchange_closer_in_meaning() -> None:
    """"back to paying people, who do I have to check with": "people" is in the question about
    recruiting them and in the one about compensating them. The words tie; the meaning (here
    given, as the brain measures it) names the second, not the earliest."""
    history = (
        Exchange("how do i recruit people to interview", "Look for people who use the service.",
                 "en", page_id="recruiting.md", page_title="Recruiting"),
        Exchange("should we compensate people who take part", "Ask your counsel first.", "en",
                 page_id="compensation.md", page_title="Compensation"),
        Exchange("what does the agreement say about recording", "Participants tick a box.",
                 "en", page_id="agreement.md", page_title="Participant agreement"),
    )
    utterance = "back to paying people who do i have to check with"
    lex = load_lexicon("en")
    a = analyze(utterance, history, lex, P, similarity=(0.40, 0.55, 0.30))
    assert a.kind == DISTANT and a.distant_index == 1
    # without the meaning, the tie goes to the exchange that introduced the topic
    assert analyze(utterance, history, lex, P).distant_index == 0
