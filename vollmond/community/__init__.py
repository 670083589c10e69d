"""Reputation and people around the games (issue 10): karma first (P3–P5)."""
