"""CLI sub-commands, one module each, imported lazily by certgen.cli."""
