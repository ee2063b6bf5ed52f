"""TELL: metrics.json and the other result files, run summary."""
