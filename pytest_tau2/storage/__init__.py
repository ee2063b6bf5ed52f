"""STORAGE: how the package writes files, for every layer (a leaf: it imports nothing of the package).

- :mod:`.atomic`: atomic writes whose files get the umask's mode (results, cassettes, estimates).
"""
