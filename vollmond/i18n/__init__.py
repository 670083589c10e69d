"""Message catalogues: engine codes -> German and English sentences in each world's names.

See :mod:`vollmond.i18n.render`; the catalogues themselves are ``catalog/de.toml`` and
``catalog/en.toml``.
"""

from vollmond.i18n.render import (
    WORLD_PLACEHOLDERS,
    CatalogueError,
    MissingMessageError,
    MissingParamWarning,
    render_event,
    render_rejection,
    role_explanation,
    ruleset_role_help,
    text,
)

__all__ = [
    "WORLD_PLACEHOLDERS",
    "CatalogueError",
    "MissingMessageError",
    "MissingParamWarning",
    "render_event",
    "render_rejection",
    "role_explanation",
    "ruleset_role_help",
    "text",
]
