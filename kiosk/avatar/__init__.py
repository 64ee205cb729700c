"""The avatar on the screen: a page shipped with the project, fed state changes, captions and
mouth tracks over a localhost WebSocket, the mouth drawn from the audio output clock."""
