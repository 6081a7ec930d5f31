"""The one reader of SOURCE_DATE_EPOCH (DESIGN rule 4): documents are dated from their bundle or
from this variable, never from the clock."""

from __future__ import annotations

import datetime as dt
import os

from certgen.errors import BuildDateError


def source_date_epoch() -> dt.datetime | None:
    """SOURCE_DATE_EPOCH as an aware UTC datetime, None when unset or empty; malformed refused."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH", "").strip()
    if not epoch:
        return None
    # ASCII digits only ('²' is a digit to str.isdigit), and at most the end of year 9999.
    if not (epoch.isascii() and epoch.isdigit()):
        raise BuildDateError(
            f"SOURCE_DATE_EPOCH: expected whole seconds since 1970-01-01, got {epoch[:40]!r}")
    if len(epoch) > 12 or int(epoch) > MAX_EPOCH:
        raise BuildDateError(
            f"SOURCE_DATE_EPOCH: expected at most {MAX_EPOCH} (9999-12-31), got {epoch[:40]!r}")
    return dt.datetime.fromtimestamp(int(epoch), tz=dt.UTC)


MAX_EPOCH = 253_402_300_799
"""9999-12-31T23:59:59Z: the last second a date can show."""
