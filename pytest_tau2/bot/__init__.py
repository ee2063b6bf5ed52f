"""The WebSocket protocol for external agents and the reference bot server."""
