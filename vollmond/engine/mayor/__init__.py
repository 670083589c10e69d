"""The mayor rule set of seed 000 (RULES B1-B8), a plug-in behind `engine.ruleset.RuleSet`.

A village elects a mayor before the first night (candidacies, short introductions, runoff,
lot) and again at the start of a day after the mayor left the game; by day players accuse,
the accused defend themselves, everyone must vote for one accused, a tie goes to a runoff and
then to the mayor's double vote; at night the evil team must agree on one victim or nobody
dies; the dead and the imprisoned hear but are not heard; a mixed lover pair wins only alone.

Map: `rules.py` (deal, validate, apply), `phases.py` (the round as a table of `StageSpec`s
and the flow), `election.py`, `trial.py`, `night.py`, `floors.py` (timed floors),
`voting.py`, `deaths.py`, `victory.py`, `roles/`, `view.py` (typed view), `legal.py`,
`routing.py`, `chat.py`, `messages.py` (schema), `bots.py`, `replay.py`, `sim.py`,
`ruleset.py` (`RULESET`). It imports only `engine.core` and `engine.ruleset`.
"""
