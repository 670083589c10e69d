"""Games sharded over processes (issue 16, DESIGN §7 "Processes"; docs/scaling.md).

One transport interface between the processes (`transport.Transport`: publish/subscribe per
subject, request/reply), a local implementation over a Unix socket (`localbus`), who owns a
game (`ownership`), the read-only mirror of a game owned elsewhere (`mirror`) and the hub that
puts them together (`sharded_hub`).
"""
