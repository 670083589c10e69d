"""One module per card of seed 003; `registry.ROLES` lists them."""
