"""Reusable abilities roles are built from (check, protect, poison, visit, trap, steal, ...)."""
