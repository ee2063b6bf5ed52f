"""The WebSocket protocol for external agents and the reference bot server.

An external agent (a service holding its own tools and DB, often a voice pipeline) is
evaluated over one WebSocket connection per scenario; docs/websocket.md is the reference.

- :mod:`.protocol`: frame types, the JSON Schemas in ``schemas/`` (one per type), encode/decode;
- :mod:`.client`: :class:`~pytest_tau2.bot.client.WebSocketAgent`, the runner's side;
- :mod:`.remote`: :class:`~pytest_tau2.bot.remote.RemoteAgentSide`, the agent side the pipeline scores
  from the bot's report;
- :mod:`.server`, :mod:`.session`, :mod:`.agents`: the reference bot
  (``python -m pytest_tau2.bot``), one independent state per connection.
"""
