"""RUN: the async conversation loop and the participants (agents and simulated users)."""
