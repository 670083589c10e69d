"""Bots that fill seats: they see only their own view's legal actions, like any player."""
