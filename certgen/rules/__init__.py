"""The rules: tiers, grade gates, the Soft Limit and the re-run audit (verdict); what a capture
records held against card.yaml (agreement, provenance); the conditions a certificate states."""
