"""Abbreviations a page defines ("a Veteran ID Card (VIC)"), said in full where a reply uses
one the visitor never heard: read aloud, "apply for a VIC" names nothing to a listener who did
not read the sentence that defined it."""

from __future__ import annotations

import re
from functools import lru_cache

# "Veteran ID Card (VIC)", "Maximum Annual Pension Rate (MAPR)": capitalized words, then the
# abbreviation of their initials in brackets; small words between them count for nothing
# ("Dependency and Indemnity Compensation (DIC)")
_SMALL = ("of", "and", "for", "the", "to", "&")
_DEFINED = re.compile(r"((?:[A-Z][\w’'-]*\s+(?:(?:" + "|".join(map(re.escape, _SMALL))
                      + r")\s+)*){1,7})\(([A-Z]{2,6})\)")
_USED = re.compile(r"\b([A-Z]{2,6})(s?)\b")


def _initials(words: list[str]) -> str:
    return "".join(w[0].upper() for w in words if w.lower() not in _SMALL)


@lru_cache(maxsize=64)  # (a page's whole text is the key: the pages of recent replies)
def defined(text: str) -> dict[str, str]:
    """The abbreviations a text defines, each with its words: only the words whose initials
    spell it (the sentence's words before them are no part of the name: "Apply for a Veteran
    ID Card (VIC)" defines VIC as "Veteran ID Card")."""
    found: dict[str, str] = {}
    for match in _DEFINED.finditer(text):
        words, short = match.group(1).split(), match.group(2)
        for start in range(len(words)):
            name = words[start:]
            if name[0].lower() in _SMALL:
                continue
            if _initials(name) == short:
                found.setdefault(short, " ".join(name))
                break
    return found


def spelled_out(reply: str, definitions: dict[str, str], heard: str = "") -> str:
    """The reply with the first use of each abbreviation the page defined said as its words
    and the abbreviation ("a Veteran ID Card (VIC)"), unless the reply or what is said before
    it (`heard`) already says them."""
    said: set[str] = set()
    known = f"{heard}\n{reply}".lower()

    def full(match: re.Match[str]) -> str:
        short, plural = match.group(1), match.group(2)
        name = definitions.get(short)
        if name is None or short in said or name.lower() in known:
            return match.group(0)
        said.add(short)
        return f"{name}{plural} ({short})"

    return _USED.sub(full, reply)
