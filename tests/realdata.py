"""Where the tests find the real captures: ../shared/captures/real beside the checkout.

Real captures are never copied into the repository (their licences and SOURCES.md live with them
in the shared folder; CI always has it). Every test that reads one goes through REAL, resolved
here once. A missing folder is an error, never a skip: a suite that silently stops reading real
files would pass while testing nothing.
"""

from __future__ import annotations

import os
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[1]
# CERTGEN_REAL_CAPTURES: the folder elsewhere (a worktree whose parent has no shared/).
REAL = pathlib.Path(os.environ.get("CERTGEN_REAL_CAPTURES")
                    or ROOT.parent / "shared" / "captures" / "real")

# The captures the suite reads. Tests name files explicitly instead of globbing: a new file in
# the shared folder must not change what an existing test (or its snapshot) covers.
FILES = (
    "CapFrameXFileWithHeader.csv",
    "OCAT-MetroExodus.exe-2019-02-20T101522.csv",
    "PresentMonTestOutputFilename.csv",
    "test_case_5.csv",
    "test_case_5_v1.csv",
    "test_case_5_v2.csv",
    "PresentMon-1.5_trivflip.csv",
    "PresentMon-2.0.0_test_case_0.csv",
    "PresentMon-2.1.0_test_case_0.csv",
)

if not REAL.is_dir():
    raise RuntimeError(
        f"real captures not found: expected the folder {REAL} (shared/captures/real beside the "
        "checkout; CI always provides it). Real captures are not copied into the repository."
    )
_missing = [name for name in FILES if not (REAL / name).is_file()]
if _missing:
    raise RuntimeError(f"real captures missing from {REAL}: {', '.join(_missing)}")
