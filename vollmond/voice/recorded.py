"""What a recording after an alarm takes from a game's voice rooms (O2), a pure function.

A recording concerns the rooms the alarm's seats (the caller and the accused) are in: the
sources they hear, at the gain they hear them, and their own voices wherever someone hears
them. That is one more row of the mixer's gain matrix, derived from the same routing table,
so secrecy holds as it does for listeners: a private call between two other players is in no
concerned seat's row and is therefore never recorded.

>>> from vollmond.engine.kit.routing import Route
>>> table = {1: (Route(2, 1.0),), 2: (Route(1, 1.0),), 3: (Route(4, 1.0),), 4: (Route(3, 1.0),),
...          "spectators": ()}
>>> recorded_gains(table, frozenset({1}), 4).tolist()  # 1 and 2 talk; 3 and 4 are not taken
[1.0, 1.0, 0.0, 0.0]
>>> recorded_gains(table, frozenset({3}), 4).tolist()  # and 3's call does not contain 1 or 2
[0.0, 0.0, 1.0, 1.0]
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from vollmond.engine.ruleset import SPECTATORS, RoutingTable

Float32Array = npt.NDArray[np.float32]


def recorded_gains(table: RoutingTable, seats: frozenset[int], players: int) -> Float32Array:
    """The gain of each source (house 1..``players``) in the recording of ``seats``' rooms.

    A source counts if a concerned seat hears it (at the highest gain any of them hears it),
    and a concerned seat's own voice counts at the highest gain anyone hears it with: a seat
    alone in its silent cell at night adds nothing, because nobody hears it there either.
    An alarm that names no seat (a web alarm of a guest without a house) concerns the table's
    public room: the market place as spectators hear it.
    """
    gains = np.zeros(players, dtype=np.float32)
    if not seats:
        for route in table.get(SPECTATORS, ()):
            if 1 <= route.source <= players:
                gains[route.source - 1] = max(float(gains[route.source - 1]), route.gain)
        return gains
    for listener, routes in table.items():
        concerned = listener != SPECTATORS and listener in seats
        for route in routes:
            if not 1 <= route.source <= players:
                continue
            if concerned or route.source in seats:
                index = route.source - 1
                gains[index] = max(float(gains[index]), route.gain)
    return gains
