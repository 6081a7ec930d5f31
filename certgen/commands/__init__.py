"""CLI commands, one module each, imported lazily by certgen.cli (attribute `command`)."""
