"""SOURCE_DATE_EPOCH has one reader; every document date goes through it."""

from __future__ import annotations

import datetime as dt
import os
import subprocess
import sys

import pytest

from certgen.builders.report import report_date
from certgen.builders.site import DEFAULT_DATE, site_date
from certgen.errors import BuildDateError
from certgen.support.builddate import source_date_epoch


def test_unset_or_empty_is_no_date(monkeypatch):
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    assert source_date_epoch() is None
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "")
    assert source_date_epoch() is None


def test_whole_seconds_are_a_utc_date(monkeypatch):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1764374400")
    assert source_date_epoch() == dt.datetime(2025, 11, 29, tzinfo=dt.UTC)
    assert report_date(dt.date(2001, 1, 1)) == dt.date(2025, 11, 29)
    assert site_date() == dt.datetime(2025, 11, 29, tzinfo=dt.UTC)


def test_malformed_is_refused_everywhere_with_one_message(monkeypatch):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "yesterday")
    message = "SOURCE_DATE_EPOCH: expected whole seconds since 1970-01-01, got 'yesterday'"
    for reader in (source_date_epoch, report_date, site_date):
        with pytest.raises(BuildDateError) as info:
            reader()
        assert str(info.value) == message


def test_without_it_the_site_uses_the_samples_date_and_reports_stay_undated(monkeypatch):
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    assert site_date() == DEFAULT_DATE
    assert report_date(None) is None


def test_a_blank_value_is_dropped_before_any_library_reads_it():
    # numpy.f2py (imported on the way to the PDFs, e.g. by `certgen site`) calls int() on
    # SOURCE_DATE_EPOCH at import: a set-but-blank value crashed the command as a bug.
    code = ("import os\nfrom certgen.cli import main\n"
            "try:\n    main(['--version'])\nexcept SystemExit:\n    pass\n"
            "assert 'SOURCE_DATE_EPOCH' not in os.environ\nimport numpy.f2py\n")
    env = {**os.environ, "SOURCE_DATE_EPOCH": "  "}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
