"""Rule-set independent building blocks, shared by every rule set (standard, classic, mayor).

Only what means the same in every rule set lives here: the per-command random stream and the
replay loop, the transaction, the routing table's shape, the commands every game knows
(leave, chat, timers), the seat helpers of a state, the command-handler table, and the walk
over a round of stages. Each rule set keeps its own rules; this package imports only
`engine.core`, never a rule set, so rule sets stay independent of each other.
"""
