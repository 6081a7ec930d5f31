"""Inputs: card.yaml and lab.yaml through strict schemas; the bundle read once and confined."""
