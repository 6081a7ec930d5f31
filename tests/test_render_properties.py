"""Generated bundles rendered in en, ru and pt (issue 9): whole-page snapshots are not the only
guard. For any bundle the strategies draw, each language's certificate:
- renders with strict catalogs (a missing ru or pt message is an error, never English);
- shows no English beyond the glossary, units and what the lab or the capture wrote (ru), and no
  English sentence words (pt);
- prints figures from which every score re-derives exactly.
"""

from __future__ import annotations

import hashlib
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from renderkit import (
    ENGLISH_ONLY,
    KEPT_IN_ENGLISH,
    bundle_words,
    check_scores_rederive,
    visible_text,
    words,
)
from strategies import bundles, write_bundle

from certgen import api
from certgen.record import dump_record
from certgen.render.certificate import render_certificate_html
from certgen.render.i18n import LANGUAGE_NAMES, LANGUAGES

ENDONYMS = words(" ".join(LANGUAGE_NAMES.values()))
"""The language switcher names each language in itself (English, Português)."""


@settings(max_examples=25, suppress_health_check=[HealthCheck.too_slow])
@given(bundles())
def test_a_generated_record_renders_fully_translated_with_rederivable_scores(bundle) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        record = api.check_bundle(write_bundle(Path(tmp) / "bundle", bundle))
    data = dump_record(record)
    sha = hashlib.sha256(data).hexdigest()
    as_json = record.model_dump(mode="json")
    weights = as_json["rules"]["weights"]
    lab_words = bundle_words(as_json)
    recorded = sum(1 for run in as_json["runs"] if run["status"] == "recorded")
    for lang in LANGUAGES:
        html = render_certificate_html(record, lang, record_sha256=sha, languages=LANGUAGES)
        shown = words(visible_text(html))
        if lang == "ru":
            assert sorted(shown - KEPT_IN_ENGLISH - ENDONYMS - lab_words) == []
        if lang == "pt":
            assert sorted((shown & ENGLISH_ONLY) - lab_words) == []
        checked = check_scores_rederive(html, lang, weights)
        scored = sum(1 for run in as_json["runs"]
                     if run["status"] == "recorded" and run["metrics"]["fluidity_score"] is not None)
        assert checked == scored <= recorded
