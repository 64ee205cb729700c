"""Exchanges (visitor utterance + avatar reply) as the dialogue remembers them."""

from __future__ import annotations

from dataclasses import dataclass

from kiosk.dialogue.query import QuerySegment


@dataclass(frozen=True)
class Exchange:
    user: str
    reply: str
    lang: str
    act: str | None = None  # greeting, thanks, ... : not about the venue
    page_id: str | None = None  # page the reply was taken from
    page_title: str = ""
    repair: bool = False  # the reply apologized or asked for clarification
    context: tuple[QuerySegment, ...] = ()  # context this turn's query carried (for chaining)
    spoken: tuple[int, ...] = ()  # sentence positions of page_id already spoken (detail goes on)
    weak: bool = False  # answered from a page that scored low: its reply is no firm context


History = tuple[Exchange, ...]
