"""The least a recorded capture needs to be graded, and the oldest a capture may be when its
certificate is issued: certgen's defaults (docs/spec/rules.md, "Capture minimum" and "Capture
age"). A laboratory may raise the minimum in lab.yaml, never lower it, and may set its own
maximum age (certgen.inputs.lab); certgen.rules.completeness applies them.

Why these defaults (the reasoning in full is in docs/spec/rules.md):
- 20 s: the SOP grades "one pass of the title's built-in benchmark" and reasons from a 60-second
  pass; a capture under a third of that is a fragment of a pass, not a pass (the real test
  captures of 0.07 to 15 s are exactly that), while a real pass of a shorter benchmark
  (the 25 s OCAT and CapFrameX captures in ../shared) is still graded.
- k₀.₁ ≥ 2 (at least 1,001 frames): the SOP warns that at 1,000 frames or fewer the 0.1% low
  is the single slowest frame, an extreme-value statistic "noisy by nature"; the coverage study
  (docs/spec/uncertainty.md) finds even 2,000 frames cover the 0.1% low in only 26 % of captures.
  Two frames is the least that is a mean at all; `compare` already calls fewer than 900 frames
  too short to read (certgen.metrics.diagnostics.TOO_SHORT_FRAMES), and this floor lies above it.
- 180 days: a certificate's scope names the driver and the game builds its captures were made
  with; GPU drivers and games update about monthly, so after half a year the captures describe a
  configuration the card is no longer sold or used with. The samples are issued 6 to 11 days
  after their runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

MIN_CAPTURE_SECONDS: Final = 20.0
"""The shortest recorded capture certgen grades, in seconds of frame time (a lab may raise it)."""

MIN_K_0_1PCT: Final = 2
"""The fewest frames the 0.1% low may be the mean of (k₀.₁ = ceil(N / 1000); a lab may raise it)."""

MAX_CAPTURE_AGE_DAYS: Final = 180
"""The oldest a run's tested_on, or the date a capture records, may be at issue, in days."""


@dataclass(frozen=True)
class CaptureLimits:
    """The limits one build applies: certgen's defaults, or a lab profile's own."""

    min_seconds: float = MIN_CAPTURE_SECONDS
    min_k_0_1pct: int = MIN_K_0_1PCT
    max_age_days: int = MAX_CAPTURE_AGE_DAYS

    @property
    def min_frames(self) -> int:
        """The fewest frames with k₀.₁ ≥ min_k_0_1pct: ceil(N / 1000) ≥ k ⇔ N ≥ 1000 (k − 1) + 1."""
        return 1000 * (self.min_k_0_1pct - 1) + 1


DEFAULT_LIMITS: Final = CaptureLimits()
