"""Registers the tau2 domains' scenario sources (filled in by the tau2 domain packages)."""
