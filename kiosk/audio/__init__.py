"""Audio: the one format, devices and recordings, echo cancellation, voice activity."""
