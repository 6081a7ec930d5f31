"""Capture readers. `read_capture_file(path)` detects the format from content and returns Captures.

Every reader returns the same Capture record (captures/model.py). A file may hold several runs
(CapFrameX JSON, the sides of a benchmark CSV), hence a list; most formats give exactly one.
Every format (id, tool, detection, reader) is a row of one table: captures/formats.py.
"""

from certgen.captures.detect import FORMATS, detect_format, read_capture_file
from certgen.captures.model import Capture, Group
from certgen.model.capture import Recorded

__all__ = ["FORMATS", "Capture", "Group", "Recorded", "detect_format", "read_capture_file"]
