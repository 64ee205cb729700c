"""The shared model of a page, whatever its source format: titled sections of plain text, the
page, its chunks; and what a box on a page (a warning, a tip) is titled."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from kiosk.dialogue.lexicon import load_lexicon


@dataclass(frozen=True)
class Section:
    heading: str
    text: str  # speakable prose, one sentence or block per line
    code: str = ""  # code blocks: searchable, never spoken
    # lines that are one link each ("Find a medical center near you.") or a picture's alt
    # text: searchable, never spoken (`_LINK_LINE`, `_IMAGE_LINE`)
    unsaid: tuple[str, ...] = ()
    # lines inside a box (`::: warning`) and what the box says on top: searched with the
    # section and its title, answered as if under that title (`Chunk.boxed`)
    boxed: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Page:
    page_id: str
    title: str
    lang: str
    sections: tuple[Section, ...]
    content_hash: str
    links: tuple[str, ...] = ()  # the site's pages this one links to (page ids)
    # (the words a link is said with, the page it leads to): which page a sentence that
    # sends the reader on ("see [the guide](…) for details") means
    anchors: tuple[tuple[str, str], ...] = ()
    date: str = ""  # the day a post was published, YYYY-MM-DD ("" for a page of no date)


@dataclass(frozen=True)
class Chunk:
    page_id: str
    heading: str
    text: str
    code: str
    unsaid: tuple[str, ...] = ()  # its lines that are links or pictures (`Section.unsaid`)
    boxed: tuple[tuple[str, str], ...] = ()  # its sentences in a box, and the box's title

    def passage(self, title: str) -> str:
        head = title if not self.heading or self.heading == title else f"{title} / {self.heading}"
        return f"{head}\n{self.text}"


TEMPLATE_TAG = re.compile(r"\{%.*?%\}|\{\{.*?\}\}", re.S)


def box_title(kind: str, title: str, lang: Callable[[], str]) -> str:
    """What a rendered box says on top: its own title, unless that only names its kind
    ("WARNING", "tip": the theme's words, in the page's language), or the kind's. `lang`:
    the page's language, asked only when a page has a box (finding it is a pass over the
    page, which most pages need not pay)."""
    titles = load_lexicon(lang()).container_titles
    return titles.get(title.lower(), title) if title else titles.get(kind, "")
