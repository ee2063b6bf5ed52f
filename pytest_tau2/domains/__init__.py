"""Domains: the tools, base scenario class and prompts of each evaluated world."""
