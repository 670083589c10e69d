"""A custom deck checked before a web founding (issue 12), by the rule set that deals it.

Whether a deck is fair is the rule set's knowledge (`ChecksDecks`, e.g. the standard rules'
`fairness.deck_problem`); which table sizes the operators allow is the service's. A rule set
without the part founds any deck its options accept.
"""

from __future__ import annotations

from typing import Any

from vollmond.engine.ruleset import AnyRuleSet, ChecksDecks
from vollmond.service.policy import Policy


def custom_deck_problem(
    rules: AnyRuleSet, options: Any, players: int, policy: Policy
) -> str | None:
    """The error code of the first thing wrong with the founding's deck, or None. A table
    size the operators do not allow is the hub's to refuse (`size_out_of_range`), so it is
    left to it."""
    if not isinstance(rules, ChecksDecks):
        return None
    if not policy.min_players <= players <= policy.max_players:
        return None
    return rules.deck_problem(options)
