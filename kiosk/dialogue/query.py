"""The search query: the visitor's words plus weighted context. Never a rewritten sentence."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class QuerySegment:
    text: str
    weight: float
    role: str  # "utterance", "user", "reply", "inherited"


@dataclass(frozen=True)
class SearchQuery:
    segments: tuple[QuerySegment, ...]

    @classmethod
    def of(cls, text: str) -> SearchQuery:
        return cls((QuerySegment(text, 1.0, "utterance"),))

    @property
    def text(self) -> str:
        """Readable form for logs and --explain."""
        return " | ".join(f"{s.text} ({s.weight:.2f})" if s.weight != 1.0 else s.text
                          for s in self.segments)
