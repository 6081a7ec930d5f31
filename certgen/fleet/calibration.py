"""The fleet calibration review the SOP promises (issue 26; docs/spec/calibration.md).

The SOP's thresholds (the 0.7 / 0.3 weights, the 88 and 95 grade lines, the 0.60 stutter Soft
Limit, the 30-run ranking minimum) are priors pending fleet calibration (n ≈ 300 certified
cards). This module reads the fleet once, as a stream (FleetStore.iter_runs, one read
snapshot), into compact per-run and per-card arrays, and answers the review's questions from
them: readiness, distributions, where each line sits in the fleet, how the grade shares move
as a line or the weights move, which certificates sit near a line, what a candidate rules file
would change, and how stable each percentile is (a bootstrap over cards, fixed seed).

Grades are the SOP's fluidity gates (certgen.rules.verdict) applied to each card's tier means:
PLATINUM needs one measured tier at or above the platinum line and every measured tier at or
above the gold line; GOLD every measured tier at or above the gold line; a card with no
measured tier gets the rules' cap. What the fleet rows cannot re-derive (a grade cap from
another SOP phase, a Soft Limit refusal, a re-run audit outcome: recorded only in the
certificates) is not assumed: `calibration.json` says so (`not_derived`).

Arithmetic is exact: a stored Fluidity Score with at most 2 decimals is held as whole
hundredths, g and s with at most 4 decimals as whole ten-thousandths, so tier means and the
Fluidity Score under other weights are integer sums rounded half away from zero, as
certgen.rules.verdict.mean_score and certgen.metrics.figures.fluidity_score round (a test compares them run for
run). A value with more decimals (a fleet another tool wrote) takes those functions themselves.

Nothing here touches the disk; certgen.builders.calibration writes the report.
"""

from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Final

import numpy as np
import numpy.typing as npt

from certgen.errors import CalibrationError, FleetError
from certgen.fleet.model import METRIC_RANGES, Withdrawn, _bound, _shown, is_specimen_id
from certgen.fleet.store import _stored_shown
from certgen.metrics.figures import fluidity_score
from certgen.model import Weights
from certgen.model.calibration import (
    CalibrationReview,
    CandidateReview,
    ChangeList,
    CohortReadiness,
    Distribution,
    GateTotals,
    LineReview,
    NearLine,
    Readiness,
    SensitivityPoint,
    WeightPoint,
)
from certgen.rules.verdict import mean_score, resolution_pixels

if TYPE_CHECKING:
    from certgen.model.cohort import Cohort
    from certgen.sop import Rules

IntArray = npt.NDArray[np.int64]
Int32Array = npt.NDArray[np.int32]
FloatArray = npt.NDArray[np.float64]

BOOTSTRAP_RESAMPLES: Final = 1000
"""Resamples of the fleet's cards behind each percentile's interval."""
BOOTSTRAP_SEED: Final = 20260
"""The bootstrap's fixed seed: the same fleet gives the same interval, byte for byte."""
INTERVAL_LEVEL: Final = 0.95
"""The central share of the bootstrap percentiles each interval spans."""
NEAR_LINE_POINTS: Final = 1.0
"""A certificate whose tier mean is within this many points of a grade line is listed."""
NEAR_LINE_LIST: Final = 1000
"""At most this many of them are listed per line, the closest first (all are counted)."""
RANK_MINIMUMS: Final = (20, 30, 50)
"""Ranking minimums the review counts published ranks at (the SOP's 30 among them)."""
WEIGHT_GRID: Final = (0.60, 0.65, 0.70, 0.75, 0.80)
"""Weights of the consistency gap the sensitivity tries (the stutter's is 1 minus it)."""
LINE_STEP: Final = 1.0
"""Grade-line positions the sensitivity curves step by, in points."""
LINE_SPAN: Final = 6.0
"""How far each curve goes either side of the line, in points."""
QUANTILES: Final = (0.05, 0.25, 0.5, 0.75, 0.95)
"""The quantiles given for each distribution (numpy's linear interpolation, as p99_ms)."""
HISTOGRAM_BINS: Final = 20
"""Bars of each histogram (equal widths over a fixed range per figure)."""
HISTOGRAM_RANGES: Final = {"fluidity_score": (0.0, 100.0), "consistency_gap": (0.0, 1.0),
                           "stutter": (0.0, 1.0)}
"""Fixed ranges, so two fleets' histograms compare bar for bar (values outside: end bars)."""
LARGEST_COHORTS: Final = 3
"""Cohorts given a distribution of their own beside the tiers."""
FIGURES: Final = ("fluidity_score", "consistency_gap", "stutter")
"""The run figures whose distributions the review gives: S_F, g, s."""

CHUNK_RUNS: Final = 131_072
"""Runs whose scores under other weights are computed at once (bounded temporaries)."""
SF_SCALE: Final = 100
"""A Fluidity Score held as whole hundredths."""
RATIO_SCALE: Final = 10_000
"""g and s held as whole ten-thousandths."""


def _scaled(value: float, scale: int) -> int | None:
    """value × scale as a whole number when that is exact (its decimal form has no more
    decimals than the scale), else None."""
    scaled = round(value * scale)
    return scaled if Decimal(repr(value)) * scale == scaled else None


def _round_div(total: IntArray, count: IntArray) -> IntArray:
    """total / count rounded half away from zero, in whole numbers (count > 0), computed in
    place on `total` (scores are never negative; a negative total is handled all the same)."""
    negative = total < 0
    np.abs(total, out=total)
    total *= 2
    total += count
    np.floor_divide(total, 2 * count, out=total)
    np.negative(total, out=total, where=negative)
    return total


@dataclass(frozen=True)
class FleetArrays:
    """The fleet as the review reads it: one entry per run, in (certificate, run) order, and
    the certificate ids packed (ids[offsets[i]:offsets[i + 1]] is card i's)."""

    card: npt.NDArray[np.int32]
    """Per run, its card's index (cards in the fleet's certificate order)."""
    tier: npt.NDArray[np.int16]
    """Per run, its resolution's index into `resolutions`."""
    cohort: npt.NDArray[np.int32]
    """Per run, its cohort's index into `cohorts`."""
    sf: FloatArray
    """Per run, the stored Fluidity Score (NaN: not measured)."""
    gap: FloatArray
    stutter: FloatArray
    resolutions: tuple[str, ...]
    """Resolutions, by pixel count then text."""
    cohorts: tuple[str, ...]
    """The cohort keys (Cohort.key()) runs index into."""
    ids: bytes | bytearray
    offsets: IntArray
    issued: tuple[str | None, str | None]
    """The earliest and latest issue dates in the fleet (None: no row states one)."""
    ordered: bool = True
    """Whether the cards came in certificate-id order (str order), as both backends give them."""

    @property
    def cards(self) -> int:
        return int(self.offsets.size - 1)

    def card_id(self, index: int) -> str:
        return self.ids[int(self.offsets[index]):int(self.offsets[index + 1])].decode("utf-8")


@dataclass
class LeftOut:
    """The certificates the review leaves out of the fleet it reads, by why (issue 39): each
    id once, in fleet order, and the runs taken from each cohort (by Cohort.key())."""

    specimen: list[str] = field(default_factory=list)
    revoked: list[str] = field(default_factory=list)
    shared: list[str] = field(default_factory=list)
    """Certificates whose capture is also behind another certificate."""
    runs: Counter[str] = field(default_factory=Counter)

    @property
    def certificates(self) -> int:
        return len(self.specimen) + len(self.revoked) + len(self.shared)


def kept_pages(pages: Iterable[Sequence[tuple[Any, ...]]], *, revoked: Withdrawn | None,
               shared: Mapping[str, str], left: LeftOut
               ) -> Iterator[Sequence[tuple[Any, ...]]]:
    """calibration_pages without the runs of specimens (SAMPLE- ids), of the certificates
    `revoked` lists and of those sharing a capture with another certificate (`shared`): none
    of them is a measured, standing certificate. What is dropped is noted in `left`."""
    dates: Mapping[str, str] = {} if revoked is None else revoked.dates
    last: str | None = None
    why: list[str] | None = None
    for page in pages:
        kept: list[tuple[Any, ...]] = []
        for row in page:
            cert = row[0]
            if cert != last:
                last = cert
                why = None
                if isinstance(cert, str):
                    if is_specimen_id(cert):
                        why = left.specimen
                    elif cert in dates:
                        why = left.revoked
                    elif cert in shared:
                        why = left.shared
                    if why is not None:
                        why.append(cert)
            if why is None:
                kept.append(row)
            else:
                left.runs[str(row[3])] += 1
        if len(kept) == len(page):
            yield page
        elif kept:
            yield kept


def kept_cohorts(sizes: Sequence[tuple[Cohort, int]], left: LeftOut
                 ) -> list[tuple[Cohort, int]]:
    """The cohort sizes without the runs the review left out (cohorts left empty dropped), in
    FleetStore.cohorts's order (largest first, then by configuration)."""
    if not left.runs:
        return list(sizes)
    from_store = {c.key(): i for i, (c, _) in enumerate(sizes)}
    out = [(c, n - left.runs.get(c.key(), 0)) for c, n in sizes]
    return sorted([(c, n) for c, n in out if n > 0],
                  key=lambda cn: (-cn[1], from_store[cn[0].key()]))


def read_fleet(pages: Iterable[Sequence[tuple[Any, ...]]], *, where: str = "the fleet"
               ) -> FleetArrays:
    """The fleet's runs, as FleetStore.calibration_pages gives them (ordered by certificate,
    then run), in FleetArrays. A stored value certgen would not have written (another tool's,
    a damaged file's) is a FleetError naming the certificate and the field, never a figure."""
    card, tier, cohort = array("i"), array("i"), array("i")
    sf, gap, stutter = array("d"), array("d"), array("d")
    ids = bytearray()
    offsets = array("q", [0])  # byte offsets: an id blob may pass 2 GiB
    resolutions: dict[str, int] = {}
    cohorts: dict[str, int] = {}
    first: str | None = None
    last: str | None = None
    current: str | None = None
    ordered = True
    nan = float("nan")
    for page in pages:
        for cert, issued, resolution, key, score, g, s, *_ in page:
            if cert != current:
                if not isinstance(cert, str):
                    raise FleetError(f"a certificate id is {_stored_shown(cert)}, expected a "
                                     "text", file=where)
                if current is not None and cert < current:
                    ordered = False
                current = cert
                ids += cert.encode("utf-8")
                offsets.append(len(ids))
            if not (isinstance(resolution, str) and isinstance(key, str)
                    and (issued is None or isinstance(issued, str))):
                raise FleetError(f"certificate {_shown(cert)}: its resolution, cohort or issue "
                                 "date is not a text", file=where)
            card.append(len(offsets) - 2)
            tier.append(resolutions.setdefault(resolution, len(resolutions)))
            cohort.append(cohorts.setdefault(key, len(cohorts)))
            try:
                sf.append(nan if score is None else score)
                gap.append(nan if g is None else g)
                stutter.append(nan if s is None else s)
            except TypeError:
                odd = next(v for v in (score, g, s) if not isinstance(v, (int, float, type(None))))
                raise FleetError(f"certificate {_shown(cert)}: a figure holds "
                                 f"{_stored_shown(odd)}, expected a number", file=where) from None
            if issued is not None:
                if first is None or issued < first:
                    first = issued
                if last is None or issued > last:
                    last = issued
    arrays = {"fluidity_score": np.frombuffer(sf, dtype=np.float64),
              "consistency_gap": np.frombuffer(gap, dtype=np.float64),
              "stutter": np.frombuffer(stutter, dtype=np.float64)}
    cards = np.frombuffer(card, dtype=np.int32)
    for name, values in arrays.items():
        low, high = METRIC_RANGES[name]
        bad = ~np.isnan(values) & ~((values >= low) & (values <= high))
        if bad.any():
            j = int(np.flatnonzero(bad)[0])
            i = int(cards[j])
            raise FleetError(f"certificate {_shown(ids[offsets[i]:offsets[i + 1]].decode())}: "
                             f"{name}: holds {values[j]!r}, outside {_bound(low)} to "
                             f"{_bound(high)}", file=where)
    # Resolutions by pixels, then text (the tier order of certgen.rules.verdict).
    order = sorted(resolutions, key=lambda r: (_pixels_or_zero(r), r))
    if len(order) > np.iinfo(np.int16).max:
        raise FleetError(f"{len(order)} resolutions: more than the review can tell apart",
                         file=where)
    remap = np.empty(len(order), dtype=np.int16)  # 2 bytes a run: the review's memory bound
    for new, name in enumerate(order):
        remap[resolutions[name]] = new
    tiers = np.frombuffer(tier, dtype=np.int32)
    return FleetArrays(
        card=cards, tier=remap[tiers] if tiers.size else tiers.astype(np.int16),
        cohort=np.frombuffer(cohort, dtype=np.int32), sf=arrays["fluidity_score"],
        gap=arrays["consistency_gap"], stutter=arrays["stutter"],
        resolutions=tuple(order), cohorts=tuple(cohorts), ids=ids,
        offsets=np.frombuffer(offsets, dtype=np.int64), issued=(first, last), ordered=ordered)


def _pixels_or_zero(resolution: str) -> int:
    try:
        return resolution_pixels(resolution)
    except ValueError:  # not WxH: sorted after nothing, by its text
        return 0


# ------------------------------------------------------------------------------ tier means


@dataclass(frozen=True)
class TierMeans:
    """Each (card, tier) with a scored run: its mean Fluidity Score in whole hundredths."""

    card: Int32Array
    tier: npt.NDArray[np.int16]
    centi: Int32Array


def run_scores(fleet: FleetArrays, weights: Weights | None
               ) -> tuple[Int32Array, npt.NDArray[np.bool_], npt.NDArray[np.bool_]]:
    """Per run, its Fluidity Score in whole hundredths, whether it has one, and whether the
    hundredths are exact: the stored score (weights None; one with more decimals is not) or
    certgen.metrics.figures.fluidity_score of its stored g and s under `weights` (always exact: that
    function rounds to 2 decimals). Unscored runs hold 0."""
    if weights is None:
        has = ~np.isnan(fleet.sf)
        centi = np.zeros(fleet.sf.size, dtype=np.int32)
        exact = np.ones(fleet.sf.size, dtype=bool)
        for lo in range(0, fleet.sf.size, CHUNK_RUNS):  # bounded temporaries, as below
            part = slice(lo, lo + CHUNK_RUNS)
            known = has[part]
            sf = fleet.sf[part][known]
            scaled = np.rint(sf * SF_SCALE)
            exact[part][known] = scaled / SF_SCALE == sf
            centi[part][known] = scaled
        return centi, has, exact
    has = ~np.isnan(fleet.gap) & ~np.isnan(fleet.stutter)
    centi = np.zeros(fleet.gap.size, dtype=np.int32)
    wg, ws = (_scaled(w, RATIO_SCALE) for w in (weights.consistency_gap, weights.stutter))
    for lo in range(0, fleet.gap.size, CHUNK_RUNS):  # a chunk at a time: bounded temporaries
        part = slice(lo, lo + CHUNK_RUNS)
        known = has[part]
        g, s = fleet.gap[part][known], fleet.stutter[part][known]
        gi = np.rint(g * RATIO_SCALE).astype(np.int64)
        si = np.rint(s * RATIO_SCALE).astype(np.int64)
        slow = (gi / RATIO_SCALE != g) | (si / RATIO_SCALE != s)
        values = np.zeros(g.size, dtype=np.int64)
        if wg is not None and ws is not None:
            # S_F = 100 (1 - (w_g g + w_s s)); in hundredths, with every factor a whole
            # number: (10^8 - (W_g G + W_s S)) / 10^4, rounded half away from zero.
            v = RATIO_SCALE * RATIO_SCALE - (wg * gi + ws * si)
            values = np.sign(v) * ((np.abs(v) + RATIO_SCALE // 2) // RATIO_SCALE)
        else:
            slow[:] = True
        for j in np.flatnonzero(slow).tolist():  # the metrics' own function
            values[j] = round(fluidity_score(float(g[j]), float(s[j]), weights) * SF_SCALE)
        out = centi[part]
        out[known] = values
    return centi, has, np.ones(fleet.gap.size, dtype=bool)


def card_chunks(card: Int32Array, runs: int = CHUNK_RUNS) -> Iterator[slice]:
    """Slices of about `runs` runs that never split a card (runs come grouped by card, cards
    numbered in order), so each card's tier means come from one slice."""
    lo, n = 0, int(card.size)
    while lo < n:
        hi = min(lo + runs, n)
        if hi < n:  # on to the end of the card the slice would cut
            hi = int(np.searchsorted(card, card[hi - 1], side="right"))
        yield slice(lo, hi)
        lo = hi


def tier_means(fleet: FleetArrays, centi: Int32Array, has: npt.NDArray[np.bool_],
               exact: npt.NDArray[np.bool_]) -> TierMeans:
    """Each card's tier means over its scored runs, in whole hundredths, as
    certgen.rules.verdict.mean_score gives them: an exact integer mean rounded half away from zero,
    or mean_score itself where a stored score has more than 2 decimals. Runs come grouped by
    card, so each tier's runs are grouped by card without a sort; a slice of cards at a time
    (card_chunks), so the temporaries stay a few MB whatever the fleet (a million cards fit
    the review's memory bound). Within a card its tiers come in tier order."""
    # At most one (card, tier) per scored run: filled in place, no list of parts to join.
    size = int(np.count_nonzero(has))
    cards = np.empty(size, dtype=np.int32)
    tiers = np.empty(size, dtype=np.int16)
    means = np.empty(size, dtype=np.int32)
    filled = 0
    for part in card_chunks(fleet.card):
        card, tier, scored = fleet.card[part], fleet.tier[part], has[part]
        for t in range(len(fleet.resolutions)):
            at = scored & (tier == t)
            owner = card[at]
            if owner.size == 0:
                continue
            starts = np.flatnonzero(np.r_[True, owner[1:] != owner[:-1]])
            sums = np.add.reduceat(centi[part][at], starts, dtype=np.int64)
            counts = np.diff(starts, append=owner.size)
            mean = _round_div(sums, counts).astype(np.int32)
            odd = np.flatnonzero(~np.logical_and.reduceat(exact[part][at], starts))
            if odd.size:
                where = np.flatnonzero(at) + part.start
                for k in odd.tolist():
                    run = where[starts[k]:starts[k] + counts[k]]
                    mean[k] = round(mean_score(fleet.sf[run].tolist()) * SF_SCALE)
            end = filled + starts.size
            cards[filled:end] = owner[starts]
            tiers[filled:end] = t
            means[filled:end] = mean
            filled = end
    if filled < size:  # cards with several runs in a tier: keep only what was filled
        return TierMeans(card=cards[:filled].copy(), tier=tiers[:filled].copy(),
                         centi=means[:filled].copy())
    return TierMeans(card=cards, tier=tiers, centi=means)


@dataclass(frozen=True)
class CardSpan:
    """Per card, its lowest and highest measured tier mean (hundredths) and whether it has one."""

    low: Int32Array
    high: Int32Array
    measured: npt.NDArray[np.bool_]


def card_spans(fleet: FleetArrays, means: TierMeans) -> CardSpan:
    low = np.full(fleet.cards, np.iinfo(np.int32).max, dtype=np.int32)
    high = np.full(fleet.cards, np.iinfo(np.int32).min, dtype=np.int32)
    np.minimum.at(low, means.card, means.centi)
    np.maximum.at(high, means.card, means.centi)
    measured = np.zeros(fleet.cards, dtype=bool)
    measured[means.card] = True
    return CardSpan(low=low, high=high, measured=measured)


def grades_of(span: CardSpan, gold: float, platinum: float, rules: Rules
              ) -> npt.NDArray[np.int8]:
    """Per card, the index into rules.grades the fluidity gates give (certgen.rules.verdict.grade_gates
    with no cap): 0 PLATINUM, 1 GOLD, 2 SILVER; no measured tier: the rules' cap."""
    gold_c, platinum_c = round(gold * SF_SCALE), round(platinum * SF_SCALE)
    gold_ok = span.low >= gold_c
    platinum_ok = gold_ok & (span.high >= platinum_c)
    grade = np.full(span.low.size, 2, dtype=np.int8)
    grade[gold_ok] = 1
    grade[platinum_ok] = 0
    grade[~span.measured] = rules.grades.index(rules.no_measured_tier_cap)
    return grade


def shares(grades: npt.NDArray[np.int8], rules: Rules) -> dict[str, float]:
    """The share (0-100) of cards at each grade, highest first."""
    n = grades.size
    counts = np.bincount(grades, minlength=len(rules.grades))
    return {name: (100.0 * float(counts[i]) / n) for i, name in enumerate(rules.grades)}


def changed_gate(before: int, after: int, rules: Rules) -> str:
    """The gate whose verdict differs between two grades (certgen.rules.verdict' gate names)."""
    if rules.grades[0] in (rules.grades[before], rules.grades[after]):
        return "platinum_one_tier"
    return "gold_every_tier"


# ------------------------------------------------------------------------------ review


def bootstrap_interval(below: npt.NDArray[np.integer[Any]],
                       total: npt.NDArray[np.integer[Any]], seed: int
                       ) -> tuple[float, float] | None:
    """The central INTERVAL_LEVEL of the share (0-100) below a line over BOOTSTRAP_RESAMPLES
    resamples of the cards (with replacement); per card: its values below, its values.

    Cards with the same (below, values) are interchangeable for this share, so a resample is
    drawn as how many cards of each such pattern it holds (one multinomial draw over the
    patterns): the same distribution as drawing the cards one by one, in time that does not
    grow with the fleet (a million cards: a few patterns)."""
    cards = below.size
    if cards == 0 or int(total.sum()) == 0:
        return None
    width = int(total.max()) + 1
    # Pattern code -> cards, tallied a slice of cards at a time: a million cards' codes never
    # exist at once, and a card of many runs makes no table of width² entries.
    tally: dict[int, int] = {}
    for lo in range(0, cards, CHUNK_RUNS):
        code = below[lo:lo + CHUNK_RUNS].astype(np.int64) * width
        code += total[lo:lo + CHUNK_RUNS]
        found, times = np.unique(code, return_counts=True)
        for k, n in zip(found.tolist(), times.tolist(), strict=True):
            tally[k] = tally.get(k, 0) + n
    codes = np.array(sorted(tally), dtype=np.int64)
    counts = np.array([tally[k] for k in codes.tolist()], dtype=np.int64)
    rng = np.random.default_rng(seed)
    drawn = rng.multinomial(cards, counts / cards, size=BOOTSTRAP_RESAMPLES)
    n = drawn @ (codes % width)
    with np.errstate(invalid="ignore", divide="ignore"):
        share = 100.0 * (drawn @ (codes // width)) / n
    share = share[n > 0]
    tail = (1.0 - INTERVAL_LEVEL) / 2.0 * 100.0
    lo, hi = np.percentile(share, [tail, 100.0 - tail])
    return float(lo), float(hi)


def _per_card(owner: Int32Array, cards: int) -> Int32Array:
    """How many entries each card owns, in 4-byte counts, counted a slice at a time over the
    span of cards the slice holds (owners come nearly in card order): no 8-byte count per
    card as np.bincount of the whole would make (the review's memory bound)."""
    out = np.zeros(cards, dtype=np.int32)
    for lo in range(0, owner.size, CHUNK_RUNS):
        part = owner[lo:lo + CHUNK_RUNS]
        first, last = int(part.min()), int(part.max())
        out[first:last + 1] += np.bincount(part - first, minlength=last - first + 1).astype(
            np.int32)
    return out


def _line_review(name: str, value: float, values: npt.NDArray[np.float64] | Int32Array,
                 owner: Int32Array, cards: int, seed: int, scale: int = 1) -> LineReview:
    """Where `value` sits among `values` (held ×scale: tier means in hundredths), with its
    bootstrap interval over the cards owning them."""
    under = values < value * scale
    below = _per_card(owner[under], cards)
    total = _per_card(owner, cards)
    interval = bootstrap_interval(below, total, seed)
    share = None if values.size == 0 else 100.0 * float(np.count_nonzero(under)) / values.size
    return LineReview(name=name, value=value, values=int(values.size), fleet_percentile=share,
                      interval=None if interval is None else list(interval))


def _where(values: npt.NDArray[Any], mask: npt.NDArray[np.bool_]) -> npt.NDArray[Any]:
    """values[mask], without the copy when the mask keeps every value (one tier, no gaps:
    the common fleet, where a copy is 8 MB a figure per million runs)."""
    return values if mask.all() else values[mask]


def distribution(name: str, group: str, values: FloatArray) -> Distribution:
    """Quantiles and a fixed-range histogram of one figure over one group of runs."""
    known = _where(values, np.isfinite(values))
    lo, hi = HISTOGRAM_RANGES[name]
    counts: list[int] = []
    quantiles: list[float] | None = None
    if known.size:
        # Values outside the range count in the end bars (np.histogram leaves them out),
        # counted apart rather than clipped: no copy of a million values.
        bars = np.histogram(known, bins=HISTOGRAM_BINS, range=(lo, hi))[0]
        bars[0] += np.count_nonzero(known < lo)
        bars[-1] += np.count_nonzero(known > hi)
        counts = bars.tolist()
        quantiles = [float(q) for q in np.percentile(known, [100.0 * q for q in QUANTILES])]
    return Distribution(figure=name, group=group, runs=int(known.size), quantiles=quantiles,
                        histogram_range=[lo, hi], histogram=counts)


def _grid(center: float) -> list[float]:
    steps = round(LINE_SPAN / LINE_STEP)
    return [round(center + LINE_STEP * k, 2) for k in range(-steps, steps + 1)]


def _near_lines(fleet: FleetArrays, means: TierMeans, rules: Rules
                ) -> tuple[list[NearLine], dict[str, int]]:
    """The tier means within NEAR_LINE_POINTS of each grade line: all counted, the
    NEAR_LINE_LIST closest listed (then by certificate id)."""
    near: list[NearLine] = []
    counts: dict[str, int] = {}
    for line, value in (("gold", rules.gold_line), ("platinum", rules.platinum_line)):
        distance = np.abs(means.centi - round(value * SF_SCALE))
        close = np.flatnonzero(distance <= round(NEAR_LINE_POINTS * SF_SCALE))
        counts[line] = int(close.size)
        if close.size > NEAR_LINE_LIST:  # only the ties of the last listed distance to sort
            cutoff = np.partition(distance[close], NEAR_LINE_LIST - 1)[NEAR_LINE_LIST - 1]
            close = close[distance[close] <= cutoff]
        found = sorted((int(distance[j]), fleet.card_id(int(means.card[j])), int(j))
                       for j in close.tolist())[:NEAR_LINE_LIST]
        near += [NearLine(certificate_id=cert, line=line,
                          resolution=fleet.resolutions[int(means.tier[j])],
                          tier_mean=int(means.centi[j]) / SF_SCALE) for _, cert, j in found]
    return near, counts


def review(fleet: FleetArrays, cohort_sizes: Sequence[tuple[Cohort, int]], rules: Rules,
           candidates: Sequence[Rules] = ()) -> CalibrationReview:
    """The whole review of one fleet under `rules`, with each candidate rules version."""
    cards = fleet.cards
    if cards == 0:
        raise CalibrationError("the fleet holds no certified card: nothing to review")
    means = tier_means(fleet, *run_scores(fleet, None))
    span = card_spans(fleet, means)
    grades = grades_of(span, rules.gold_line, rules.platinum_line, rules)
    stutter_known = np.isfinite(fleet.stutter)

    lines = {
        "gold": _line_review("gold", rules.gold_line, means.centi, means.card, cards,
                             BOOTSTRAP_SEED, SF_SCALE),
        "platinum": _line_review("platinum", rules.platinum_line, means.centi, means.card,
                                 cards, BOOTSTRAP_SEED + 1, SF_SCALE),
        "soft_limit": _line_review("soft_limit", rules.soft_limit_stutter,
                                   _where(fleet.stutter, stutter_known),
                                   _where(fleet.card, stutter_known), cards, BOOTSTRAP_SEED + 2),
    }
    near, near_counts = _near_lines(fleet, means, rules)
    del means  # a tier mean per card and tier: the largest array the rest does not need
    past_limit = (None if not stutter_known.any() else 100.0 * float(
        np.count_nonzero(_where(fleet.stutter, stutter_known) > rules.soft_limit_stutter))
        / int(np.count_nonzero(stutter_known)))

    # Readiness: cards against the SOP's n, cohorts against the ranking minimum.
    minimum = rules.ranking_min_cohort
    readiness = Readiness(
        cards=cards, runs=int(fleet.card.size), target_cards=rules.calibration_fleet_target,
        cohorts=len(cohort_sizes),
        cohorts_ranked=sum(1 for _, n in cohort_sizes if n >= minimum),
        ranking_minimum=minimum, issued_from=fleet.issued[0], issued_to=fleet.issued[1],
        largest=[CohortReadiness(cohort=c.label(), runs=n, ranked=n >= minimum)
                 for c, n in cohort_sizes[:LARGEST_COHORTS]],
        published_ranks={str(k): sum(n for _, n in cohort_sizes if n >= k)
                         for k in RANK_MINIMUMS})

    # Distributions: per tier, then the largest cohorts.
    dists: list[Distribution] = []
    for t, resolution in enumerate(fleet.resolutions):
        at = fleet.tier == t
        for name, values in (("fluidity_score", fleet.sf), ("consistency_gap", fleet.gap),
                             ("stutter", fleet.stutter)):
            dists.append(distribution(name, resolution, _where(values, at)))
    cohort_index = {key: i for i, key in enumerate(fleet.cohorts)}
    for c, _ in cohort_sizes[:LARGEST_COHORTS]:
        at = fleet.cohort == cohort_index.get(c.key(), -1)
        dists.append(distribution("fluidity_score", c.label(), _where(fleet.sf, at)))

    # Sensitivity: the shares as one line moves, the other where the rules put it.
    sensitivity: list[SensitivityPoint] = []
    for line, center in (("gold", rules.gold_line), ("platinum", rules.platinum_line)):
        for value in _grid(center):
            gold, platinum = (value, rules.platinum_line) if line == "gold" else (
                rules.gold_line, value)
            sensitivity.append(SensitivityPoint(
                line=line, value=value, grade_shares=shares(grades_of(span, gold, platinum,
                                                                      rules), rules)))
    weights: list[WeightPoint] = []
    for wg in WEIGHT_GRID:
        w = Weights(consistency_gap=wg, stutter=round(1.0 - wg, 2))
        alt = card_spans(fleet, tier_means(fleet, *run_scores(fleet, w)))
        weights.append(WeightPoint(consistency_gap=wg, stutter=w.stutter, grade_shares=shares(
            grades_of(alt, rules.gold_line, rules.platinum_line, rules), rules)))

    reviews = [_candidate(fleet, span, grades, rules, c) for c in candidates]
    return CalibrationReview(
        sop=rules.sop, rules=rules.rules_version, cards=cards, runs=int(fleet.card.size),
        target_cards=rules.calibration_fleet_target, readiness=readiness, lines=lines,
        past_soft_limit=past_limit, grade_shares=shares(grades, rules),
        distributions=dists, sensitivity=sensitivity, weights=weights, near_lines=near,
        near_line_counts=near_counts,
        candidates=reviews)


def _candidate(fleet: FleetArrays, span: CardSpan, grades: npt.NDArray[np.int8], rules: Rules,
               candidate: Rules) -> CandidateReview:
    """Every card re-graded under `candidate` beside `rules`: its grade shares and the cards
    whose grade changes, by certificate id."""
    same_weights = (candidate.weight_gap, candidate.weight_stutter) == (
        rules.weight_gap, rules.weight_stutter)
    if same_weights:
        new_span = span
    else:
        w = Weights(consistency_gap=candidate.weight_gap, stutter=candidate.weight_stutter)
        new_span = card_spans(fleet, tier_means(fleet, *run_scores(fleet, w)))
    regraded = grades_of(new_span, candidate.gold_line, candidate.platinum_line, candidate)
    del new_span
    # Both backends order certificate ids by their bytes (SQLite's BINARY, PostgreSQL's
    # COLLATE "C"), which is Python's str order: card order is id order unless the pages
    # came from elsewhere, and only then are the changed cards sorted by id.
    candidate_shares = shares(regraded, candidate)
    moved = np.flatnonzero(regraded != grades).astype(np.int32)
    if not fleet.ordered:
        moved = np.array(sorted(moved.tolist(), key=fleet.card_id), dtype=np.int32)
    before, after = grades[moved], regraded[moved]
    del regraded
    # A higher grade is a lower index in both lists (PLATINUM, GOLD, SILVER).
    up_mask = after < before
    platinum = (before == 0) | (after == 0)
    by_gate = {gate: GateTotals(up=int(np.count_nonzero(up_mask & on)),
                                down=int(np.count_nonzero(~up_mask & on)))
               for gate, on in (("platinum_one_tier", platinum),
                                ("gold_every_tier", ~platinum))}
    up = int(np.count_nonzero(up_mask))
    return CandidateReview(
        rules=candidate.sop, rules_version=candidate.rules_version,
        weights_recomputed=not same_weights,
        grade_shares=candidate_shares,
        changes=_change_list(fleet, moved, before, after, rules, candidate), up=up,
        down=int(moved.size) - up, by_gate=by_gate)


def _change_list(fleet: FleetArrays, moved: Int32Array, before: npt.NDArray[np.int8],
                 after: npt.NDArray[np.int8], rules: Rules, candidate: Rules) -> ChangeList:
    """The changes as a ChangeList over the changed cards' indices and grades (a few bytes a
    change) and the fleet's packed ids, each row made when read."""
    ids, offsets = fleet.ids, fleet.offsets
    names_now, names_then = rules.grades, candidate.grades

    def row(i: int) -> tuple[str, str, str, str]:
        card, was, now = int(moved[i]), int(before[i]), int(after[i])
        return (ids[int(offsets[card]):int(offsets[card + 1])].decode("utf-8"), names_now[was],
                names_then[now], changed_gate(was, now, rules))

    return ChangeList(int(moved.size), row)
