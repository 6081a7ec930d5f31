"""Support: where data files live, the one build date, safe Markdown, strict JSON and YAML,
untrusted input, and the software stack a document names."""
