"""Voice rooms for telephone lines: the per-game mixer driven by the engine's routing table."""
