"""The mayor rule set's roles, one module each, listed in `registry.py`."""
