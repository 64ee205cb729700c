"""The answer's weights, in one place beside the resolver's (BrainParams holds both), and the
reply."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class AnswerParams:
    # Top page score under this: ask which of two pages instead of answering. Off: it turned
    # 13-15% of answerable real-site questions into a question back (see README).
    clarify_below: float = 0.0
    # Top page score under this: answer, but remember the answer as weak, so that the next
    # turn does not build on it as on a sure one (a wrong first answer cascades otherwise).
    weak_below: float = 0.30
    # Bonus, in units of the best sentence's match, for the sentences of the chunk that the
    # search found best: the chunk was ranked with the whole query and by meaning, a sentence
    # only by its words. Reply F1 +0.01 / +0.02 on the real-site sets (README).
    chunk_prior: float = 0.3
    max_sentences: int = 3
    listing_titles: int = 5
    # A question asking for an amount, a time or a length whose best page holds none (nor a
    # word of such an answer) is answered from the first page holding one among this many
    # best (`Brain._shaped`): vagov-en top-1 0.841 -> 0.864, CAsT 2022 0.320 -> 0.324, the
    # other sets unchanged; among ten, one more turn of CAsT 2022 lost and one MRR of vagov-en.
    shape_reach: int = 5
    # A page's question headings ("What if I need care while traveling?") are asked of the
    # embedder as the visitor's question is: the one closest in meaning, by this lead in
    # cosine over the next, lends its first sentence this bonus (in units of the best word
    # match). A question heading says in the site's words what the visitor says in theirs
    # ("if my doctor quits" -> "What happens if my primary care provider leaves VA?"). Reply
    # F1 vagov-en 0.379 -> 0.397, misskey-ja (few question headings) 0.386 -> 0.385; with
    # distant references too (`compose`), 0.388. Headings embedded a page at a time instead
    # of one by one (a quantized model's vectors move a little with their batch): 0.399 with
    # distant references, and there bonus 0.5 / 2.0 gave 0.394 / 0.394, lead 0 / 0.02
    # 0.391 / 0.392 (README). A closer lead lends a share of the bonus (lead 0.008: 0.8 of
    # it; "what do i need to apply" -> "What do I need to apply for a Veteran ID Card?",
    # 0.915 against "What if I have questions or need help with my application?", 0.907):
    # 0.399 -> 0.403, misskey-ja 0.3963 -> 0.3969, the other four sets unchanged (the
    # share's full lead at 0.005 / 0.0075 / 0.015 / 0.02: 0.399 / 0.403 / 0.400 / 0.398).
    question_heading: float = 1.0
    question_heading_lead: float = 0.01
    # A heading that is all the visitor's words (a bare name asked after a reply: "フォロワー
    # は" on the page of a note's visibility, under "フォロワー") lends its first sentence this
    # bonus. Headings that hold the words among others (アプリ, 広告: the page's own topic)
    # lend nothing: lent to them too, reply F1 misskey-ja 0.391 -> 0.382, vagov-en 0.399 ->
    # 0.399; as it is, 0.391 -> 0.396 (one turn), the other five sets unchanged.
    named_heading: float = 1.0
    # A question no page answers (weather, a joke, a restaurant in town) is declined when all
    # three say so: its best chunk stands little above the rest (in standard deviations of
    # the site's chunks), it matches few of its words, and it is far in meaning. Set on the
    # demo's off-topic questions against the page questions of three sites (see README).
    scope_peak_below: float = 3.4
    scope_lexical_below: float = 0.08
    scope_dense_below: float = 0.35
    # A question that stands alone (no reference, no "this"), whose best chunk does not stand
    # out (peak as above) and whose best page scores under this, is declined. Page scores are
    # half rescaled cosine, half BM25 share of the best possible: the scale does not depend on
    # the site. Set on the demo's off-topic questions against the page turns of all six sets
    # (0.28 starts refusing real questions; see README).
    scope_page_below: float = 0.25
    # ... and under this it is declined however its best chunk stands out: a peak speaks for
    # a long story around a real question (CAsT's openings score 0.19-0.27), not for a
    # question almost none of whose words or meaning the site holds (page questions that
    # stand alone score 0.15 and up on all six sets; "who won the football game" 0.07).
    scope_page_floor: float = 0.10
    # ... and under scope_page_below it is declined however its best chunk stands out when
    # that chunk is also this far in meaning (rescaled cosine): on a site of one subject a
    # shared word makes a chunk stand out ("what's the weather going to be like tomorrow" ->
    # the burial flag's weather damage, peak 3.7); page questions that stand alone and score
    # under 0.25 are 0.30 and up on all six sets (CAsT's long openings), off-topic questions
    # asked of the real sites 0.08-0.26.
    scope_dense_floor: float = 0.28
    # A question shorter than this many encoder tokens tells no long story that could dilute
    # its words: under scope_page_below it is declined however its best chunk stands out (a
    # shared word: タバコはどこで買える -> a post about Twitter, peak 3.8; "how much is a book
    # of stamps" -> the address form). Off-topic questions run to 9 tokens on every set,
    # CAsT's openings whose peak keeps them 12 and more; the length just past the longest
    # off-topic question the peak kept answering, over every set (scripts/fit_scope.py).
    scope_story_tokens: int = 10

    # A start that holds under this share of the visitor's words (by weight, with its
    # heading) is chosen again by meaning among the sentences holding one of them
    # (`by_meaning`). Fitted leaving each site out (scripts/fit_answer.py): 0.3 on every
    # fold; key facts said left out +0 / +1 / +1 / +2 turns (logingov-en, methods18f-en,
    # misskey-ja, vagov-en); at 0.4 logingov-en -1 and vagov-en -1, at 0.2 methods18f-en
    # -1. 0 turns it off. Its cost: one more encoder call on the turns it decides (their
    # sentences, kept: SiteIndex.passage_vectors; the page just answered is embedded while
    # its reply is spoken), `kiosk bench brain --pages 5000` turn p95 1.65x the bare search
    # (1.7x off, 2.1x without the preparing; README); only the sentences of the chunks
    # closest in meaning (2-6 of them) cost as much (one call) and said fewer key facts.
    meaning_below: float = 0.3
    # While a reply is spoken, the sentences of its page are embedded for the next turn when
    # the page has at most this many (`prepare_meaning`; about 1.5 ms a sentence here).
    meaning_prepared: int = 60

    # --- what a reply may hold
    # The longest reply said in one go, in characters (a Japanese character says more).
    max_reply_chars_ja: int = 140
    max_reply_chars_en: int = 260
    # A list joined into its lead-in's sentence: this many items, each at most this long
    # (English words; Japanese: 2.5 x characters).
    list_items_min: int = 2
    list_items_max: int = 8
    list_item_words: int = 25
    # A reply that points at what follows it ("... the requirements listed below.") and would
    # end before it says the next sentence if the whole stays within this share of the length.
    ahead_overrun: float = 1.5

    # --- choosing the sentence a reply starts at (units of the best sentence's word match)
    # A sentence that leans on one it cannot take along yields to a candidate this close to it:
    # reply F1 +0.005 on vagov-en, the same on misskey-ja.
    orphan_penalty: float = 0.5
    # A sentence of the shape asked for (a clock time for "what time") gains this much: the
    # demo's "what time does the robot show start" found the lab's introduction ("shows how
    # robots see") before. More than the word match and the search's chunk (chunk_prior)
    # together: "where do I mail it" wants the address, not the sentence with "mail" in the
    # chunk the search found.
    shape_weight: float = 1.3
    # A heading's words, for the sentence that opens its section and for those after it. The
    # opening answers the heading ("What if I need care while traveling?" -> "Let us know in
    # advance so we can plan your care ..."); the sentences after it go on from it and win only
    # by their own words ("For more information, contact the Traveling Veteran Coordinator").
    # Equal halves for all of them before: reply F1 0.372 / 0.372 -> 0.374 / 0.384 on vagov-en
    # / misskey-ja (0.5 / 0.25: 0.372 / 0.377; 1.0 / 0.5: 0.373 / 0.381; 1.5 / 0.25: 0.376 /
    # 0.380). The sentences after it: fitted on key facts leaving each site out
    # (scripts/fit_answer.py --param head_under, against 0.25): 0.4 on every fold, key facts
    # left out +1 / +1 / 0 / 0 turns (logingov-en, methods18f-en, misskey-ja, vagov-en); 0.5
    # the same in sample, 0.75 and 1.0 cost misskey-ja 1 and 2, 0.1 vagov-en 1.
    head_opens: float = 1.0
    head_under: float = 0.4
    # A sentence's place in the page breaks ties (earlier ones introduce): at most this much,
    # for the last. At 0.01 a sentence, an answer 70 sentences into a long page lost to its
    # opening.
    place_weight: float = 0.1
    # A sentence whose topic (what comes before "is" / は) is what the visitor asked about
    # defines it: "what is X" / Xって何 gains this much for it (0.5 on the real-site sets: the
    # glossary entry under the heading "ホーム" lost to a sentence that names ホーム in passing).
    defines_weight: float = 1.0
    # A sentence the conversation has said already (this share of its terms were in one
    # earlier reply) yields to one it has not, unless it answers by this much more: a follow-up
    # asks for something new. (0.5 moved more replies of the demo's own dialogues away from
    # what the visitor asked again; scaled down by how many of the visitor's words the sentence
    # holds, it moved none on the real-site sets.)
    said_penalty: float = 0.35
    said_share: float = 0.8

    def max_reply_chars(self, lang: str) -> int:
        return self.max_reply_chars_ja if lang == "ja" else self.max_reply_chars_en



@dataclass(frozen=True)
class Reply:
    text: str
    page_id: str | None = None
    page_title: str = ""
    spoken: tuple[int, ...] = ()
    repair: bool = False
    weak: bool = False  # answered from a page that scored low: not to be built on


DEFAULT_PARAMS = AnswerParams()
