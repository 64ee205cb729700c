"""kiosk-avatar: an offline voice avatar for a venue kiosk."""

__version__ = "0.1.0"
