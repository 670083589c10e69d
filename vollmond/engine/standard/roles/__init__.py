"""One module per role (DESIGN §1): data plus the abilities it is built from."""
