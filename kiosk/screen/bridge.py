"""The page on screen as the touchscreen's microcontroller reports it over the bridge."""

from __future__ import annotations

from collections.abc import Callable

from firmware_bridge.messages import Message, PageShown
from kiosk.screen.source import ScreenState


class BridgeScreen(ScreenState):
    """Feed it the link's events (`BridgeLink(url, on_event=screen.on_event)`)."""

    def __init__(self, to_page_id: Callable[[str], str | None]) -> None:
        super().__init__()
        self.to_page_id = to_page_id

    def on_event(self, message: Message) -> None:
        if isinstance(message, PageShown):
            self.update(message.url, self.to_page_id(message.url))
