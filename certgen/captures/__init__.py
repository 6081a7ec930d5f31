"""Capture readers. `read_captures(path)` detects the format from content and returns Captures.

Every reader returns the same Capture record (captures/model.py). A file may hold several runs
(CapFrameX JSON), hence a list; most formats give exactly one.
"""

from certgen.captures.model import Capture, Group, Hints

__all__ = ["Capture", "Group", "Hints"]
