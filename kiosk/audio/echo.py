"""Echo cancellation: what the loudspeaker played is taken out of what the microphone hears."""

from __future__ import annotations

import ctypes.util


def speex_available() -> bool:
    """libspeexdsp (Debian: libspeexdsp1) can be loaded."""
    return ctypes.util.find_library("speexdsp") is not None
