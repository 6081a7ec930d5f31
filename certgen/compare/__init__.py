"""Before/after and paired-series statistics with a noise floor (statistics) and the typed
report record the report's documents are rendered from (report)."""
