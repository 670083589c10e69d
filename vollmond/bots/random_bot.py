"""The random bot of the standard rule set, for the simulator and bots at a real table.

One implementation serves both: the rule set brings its own bots (vollmond/engine/standard/bots.py).
"""

from vollmond.engine.standard.bots import RandomBot, Temperament

__all__ = ["RandomBot", "Temperament"]
