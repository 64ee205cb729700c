"""Extractive replies: a few sentences of the best page, short enough to speak. No LLM.

The reply is in the visitor's language; with the detail flag it goes on where the last reply
from the same page stopped instead of repeating it; off-topic questions are declined with
what the site does cover.

One module per concern, in the order a reply is made:
    speakable.py   what may be said aloud
    lists.py       a list on a page said as the sentence it is
    sentences.py   what a page's text offers to be spoken
    shapes.py      the shape of answer a question asks for (a time, an amount)
    defines.py     "what is X": the sentences that define X
    choose.py      ranking a page's sentences for a question
    runs.py        what a reply says from the sentence it starts at
    declines.py    off-topic and site questions
    compose.py     the reply to a resolved turn
    params.py      the weights (AnswerParams) and the reply
"""

from kiosk.answer.choose import prepare_meaning
from kiosk.answer.compose import compose
from kiosk.answer.declines import decline, listing, out_of_scope
from kiosk.answer.defines import page_defines
from kiosk.answer.lists import lists_as_sentences
from kiosk.answer.params import AnswerParams, Reply
from kiosk.answer.runs import leans_back
from kiosk.answer.sentences import page_holds, page_sentences
from kiosk.answer.shapes import asked_shapes
from kiosk.answer.speakable import speakable

__all__ = ["AnswerParams", "Reply", "asked_shapes", "compose", "decline", "leans_back",
           "listing", "lists_as_sentences", "out_of_scope", "page_defines", "page_holds",
           "page_sentences", "prepare_meaning", "speakable"]
