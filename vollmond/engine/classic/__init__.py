"""The classic Düsterwald rule set (seed 003, RULES A1–A15): werewolves against the village
Schwarzseel, with thief, Amor, captain, herb witch, sandman and the wolves' special cards.

Its own package behind the `RuleSet` protocol (`ruleset.RULESET`); it shares only the
rule-set independent types of `vollmond.engine.core` and the building blocks of
`vollmond.engine.kit` with the other rule sets.
"""
