"""Message catalogues (TOML, one file per language); a package so importlib.resources finds them."""
