"""What a capture records about the system and the capture (`Capture.recorded`;
docs/spec/captures.md, "What a capture records"): each reader, from the real files where they
exist and from the examples and small inline samples otherwise; both paths of the PresentMon
reader; and hostile values (long, blank, invisible), which are kept or cut, never a refusal.
FrameView's columns are tested with its exact layout in test_captures_frameview.py."""

from __future__ import annotations

import csv
import io
import json
import pathlib

import pydantic
import pytest
from bundlekit import run_cli
from capturekit import differing_fields
from realdata import REAL

from certgen.captures import presentmon
from certgen.captures.detect import read_capture, read_capture_file
from certgen.captures.formats import format_of
from certgen.captures.model import Capture
from certgen.model import RECORDED_MAX, Recorded

ROOT = pathlib.Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"

PINNED = ["gpu", "driver", "os", "cpu", "ram", "motherboard", "resolution", "runtime",
          "captured_at", "tool", "tool_version", "game"]
"""The pinned keys of `recorded` (issue 23), in their order."""

SYSTEM = ("gpu", "driver", "os", "cpu", "ram", "motherboard")

PRESENTMON_FILES = (
    "PresentMonTestOutputFilename.csv", "test_case_5.csv", "test_case_5_v1.csv",
    "test_case_5_v2.csv", "PresentMon-1.5_trivflip.csv", "PresentMon-2.0.0_test_case_0.csv",
    "PresentMon-2.1.0_test_case_0.csv", "PresentMon-2.5_test_case_1.csv",
    "PresentMon-2.5_test_case_2.csv", "PresentMon-2.5_test_case_3.csv",
)


def read_one(data: bytes | str, name: str = "c.csv", **kw: str) -> Capture:
    [capture] = read_capture(data.encode() if isinstance(data, str) else data, name=name, **kw)
    return capture


def both_paths(data: bytes | str, name: str = "c.csv", *, capframex: bool = False,
               process: str | None = None) -> Recorded:
    """What the fast path and the csv module record of a PresentMon-family file: they must
    agree, field for field (and on every other field of the Capture)."""
    raw = data.encode() if isinstance(data, str) else data
    fast, slow = presentmon.read_each_path(raw, name, capframex=capframex, process=process)
    assert fast is not None  # the fast path reads it, so the comparison means something
    assert differing_fields(fast, slow) == []
    return slow.recorded


# --- The record itself -----------------------------------------------------------------------

def test_the_fields_are_the_pinned_keys_in_order() -> None:
    assert list(Recorded.model_fields) == PINNED
    assert Recorded().model_dump() == dict.fromkeys(PINNED)


@pytest.mark.parametrize("value", [" RTX 4090", "RTX 4090\n", "", "x" * (RECORDED_MAX + 1), 4090])
def test_a_value_is_trimmed_text_within_the_cap_or_refused(value: object) -> None:
    """The type holds only what a reader gives: trimmed, non-empty text of at most
    RECORDED_MAX characters (or None); a reader never hands it anything else."""
    with pytest.raises(pydantic.ValidationError):
        Recorded(gpu=value)  # type: ignore[arg-type]


def test_the_record_is_frozen() -> None:
    recorded = Recorded(gpu="RTX 4090")
    with pytest.raises(pydantic.ValidationError):
        recorded.gpu = "RTX 4080"  # type: ignore[misc]


# --- PresentMon family: the real files --------------------------------------------------------

OCAT_RECORDED = Recorded(
    gpu="GeForce RTX 2080 Ti",
    driver="r418_77",
    os="Windows 10 Pro 1809 (OS Build 17763.1.amd64fre.rs5_release.180914-1434)",
    cpu="Intel(R) Core(TM) i9-9900K CPU @ 3.60GHz",
    ram="32 GB DDR4 3200 MT/s",
    motherboard="Micro-Star International Co. Ltd. MPG Z390 GAMING PRO CARBON (MS-7B17)",
    runtime="DXGI",
    tool="OCAT",
)


def test_the_ocat_file_records_its_system_exactly() -> None:
    """GPU "GeForce RTX 2080 Ti" and driver "r418_77" (the Driver Package cell; the Base
    Driver Version cell says 41891), the other system cells of the first data row as written
    (the quoted ones unquoted), the group's Runtime; no date, version or game."""
    name = "OCAT-MetroExodus.exe-2019-02-20T101522.csv"
    [capture] = read_capture_file(REAL / name)
    assert capture.recorded == OCAT_RECORDED
    assert both_paths((REAL / name).read_bytes(), name) == OCAT_RECORDED


CAPFRAMEX_RECORDED = Recorded(
    gpu="NVIDIA GeForce RTX 2080 Ti",
    driver="bla",
    os="Windows OS",
    cpu="Intel(R) Core(TM) i9-9900K CPU @ 3.60GHz",
    ram="32 GB 3800 MT/s",
    motherboard="ASUSTeK COMPUTER INC. ROG MAXIMUS XI HERO",
    runtime="DXGI",
    captured_at="2019-03-30 12:01:36",
    tool="CapFrameX",
    game="re2.exe",
)


def test_the_capframex_csv_records_its_header_values_exactly() -> None:
    name = "CapFrameXFileWithHeader.csv"
    [capture] = read_capture_file(REAL / name)
    assert capture.recorded == CAPFRAMEX_RECORDED
    assert both_paths((REAL / name).read_bytes(), name, capframex=True) == CAPFRAMEX_RECORDED


def first_row_runtime(path: pathlib.Path, capture: Capture) -> str:
    """The Runtime (or PresentRuntime) cell of the read group's first row, found here with the
    csv module alone."""
    rows = csv.DictReader(io.StringIO(path.read_text("utf-8-sig"), newline=""))
    assert capture.group is not None
    for row in rows:
        key = (row["Application"], row["ProcessID"], row["SwapChainAddress"])
        if key == (capture.group.application, capture.group.process_id, capture.group.swap_chain):
            return (row.get("Runtime") or row["PresentRuntime"]).strip()
    raise AssertionError("no row of the group")


@pytest.mark.parametrize("name", PRESENTMON_FILES)
def test_presentmon_files_record_no_system_field(name: str) -> None:
    """PresentMon records no system, date, tool or game: only the present runtime of the group
    read, at its first row."""
    [capture] = read_capture_file(REAL / name)
    assert capture.recorded == Recorded(runtime=first_row_runtime(REAL / name, capture))
    assert all(getattr(capture.recorded, field) is None for field in SYSTEM)


def test_the_runtime_is_the_groups_not_the_files_first_row() -> None:
    """test_case_0's first data row is dwm.exe's (DXGI); the group read presents through D3D9."""
    path = REAL / "PresentMon-2.0.0_test_case_0.csv"
    first = next(csv.DictReader(io.StringIO(path.read_text("utf-8-sig"), newline="")))
    assert (first["Application"], first["Runtime"]) == ("dwm.exe", "DXGI")
    [capture] = read_capture_file(path)
    assert capture.recorded.runtime == "D3D9"
    assert both_paths(path.read_bytes(), path.name).runtime == "D3D9"


@pytest.mark.parametrize(("name", "forced", "expected"), [
    ("PresentMonTestOutputFilename.csv", "frameview", Recorded(runtime="DXGI")),
    ("PresentMonTestOutputFilename.csv", "ocat", Recorded(runtime="DXGI")),
    ("CapFrameXFileWithHeader.csv", "presentmon", CAPFRAMEX_RECORDED),
])
def test_a_forced_format_changes_nothing_recorded(name: str, forced: str,
                                                  expected: Recorded) -> None:
    [capture] = read_capture_file(REAL / name, format=forced)
    assert capture.format == forced
    assert capture.recorded == expected


# --- PresentMon family: small files -----------------------------------------------------------

HEADER = "Application,ProcessID,SwapChainAddress,Runtime,Dropped,MsBetweenPresents"


def test_each_group_records_its_own_first_row() -> None:
    """A launcher's rows come first (D3D9), the game's later (DXGI): the group read decides."""
    rows = ["Launcher.exe,10,0x1,D3D9,0,16.6"] * 2 + ["Game.exe,20,0x2,DXGI,0,8.3"] * 5
    text = HEADER + "\n" + "\n".join(rows) + "\n"
    assert both_paths(text).runtime == "DXGI"
    assert both_paths(text, process="Launcher.exe").runtime == "D3D9"
    assert read_one(text, process="Launcher.exe").recorded == Recorded(runtime="D3D9")


@pytest.mark.parametrize(("cell", "expected"), [
    ("NA", None), ("-", None), ("", None), ("  DXGI  ", "DXGI"), ('"DX,GI"', "DX,GI"),
])
def test_no_value_marks_and_blanks_record_nothing(cell: str, expected: str | None) -> None:
    text = HEADER + "\n" + "".join(f"Game.exe,20,0x2,{cell},0,8.3\n" for _ in range(3))
    assert both_paths(text).runtime == expected


OCAT_HEADER = (
    "Application,ProcessID,SwapChainAddress,Runtime,SyncInterval,PresentFlags,AllowsTearing,"
    "PresentMode,Dropped,TimeInSeconds,MsBetweenPresents,MsBetweenDisplayChange,MsInPresentAPI,"
    "MsUntilRenderComplete,MsUntilDisplayed,MsEstimatedDriverLag,Width,Height,Motherboard,OS,"
    "Processor,System RAM,Base Driver Version,Driver Package,GPU #,GPU,GPU Core Clock (MHz),"
    "GPU Memory Clock (MHz),GPU Memory (MB)"
)


def ocat_log(system: str, frames: int = 5) -> str:
    """An OCAT 1.5+ log (Width and Height on every row): the system cells on the first row."""
    row = "Game.exe,7,0x1,DXGI,0,0,1,Hardware: Independent Flip,0,{t:.6f},10.0,10.0,0.2,1.0,1.0,0.0,2560,1440"
    rows = [row.format(t=i / 100) for i in range(frames)]
    rows[0] += "," + system
    return OCAT_HEADER + "\n" + "\n".join(rows) + "\n"


def test_an_ocat_1_5_log_records_width_and_height_as_a_resolution() -> None:
    text = ocat_log("ASRock B650,Windows 11 Pro,AMD Ryzen 7 7700X,32 GB,24.5.1,"
                    "32.0.11021.1011,1,AMD Radeon RX 7800 XT,2430,2425,16368")
    expected = Recorded(gpu="AMD Radeon RX 7800 XT", driver="32.0.11021.1011",
                        os="Windows 11 Pro", cpu="AMD Ryzen 7 7700X", ram="32 GB",
                        motherboard="ASRock B650", resolution="2560x1440", runtime="DXGI",
                        tool="OCAT")
    assert read_one(text).recorded == expected
    assert both_paths(text) == expected


@pytest.mark.parametrize(("base", "package", "driver"), [
    ("-", "-", None), ("41891", "-", "41891"), ("41891", "r418_77", "r418_77"),
])
def test_ocat_takes_the_driver_package_else_the_base_driver_version(
        base: str, package: str, driver: str | None) -> None:
    text = ocat_log(f"MB,OS,CPU,16 GB,{base},{package},1,GPU,1,-,8192")
    assert read_one(text).recorded.driver == driver


def test_an_ocat_first_row_longer_than_the_head_records_no_system_cell() -> None:
    """OCAT's system cells are read from the file's first 64 KiB: a longer first row records
    none of them (never a row cut in the middle), and the file still reads."""
    text = ocat_log("M" * 70_000 + ",OS,CPU,16 GB,1,2,1,GPU,1,-,8192")
    capture = read_one(text)
    assert capture.recorded == Recorded(resolution="2560x1440", runtime="DXGI", tool="OCAT")
    assert capture.frame_times_ms.size == 5


# --- CapFrameX --------------------------------------------------------------------------------

INFO = {
    "AppVersion": "1.7.2.0", "Id": "00000000-0000-4000-8000-000000000000",
    "Processor": "AMD Ryzen 7 7800X3D 8-Core Processor", "GameName": "Cyberpunk 2077",
    "ProcessName": "Cyberpunk2077.exe", "CreationDate": "2024-05-01T10:11:12.123Z",
    "Motherboard": "ASUS ROG STRIX X670E-E", "OS": "Microsoft Windows 11 Pro 23H2",
    "SystemRam": "2x16GB (DDR5-6000)", "BaseDriverVersion": "55214", "DriverPackage": "r552_12",
    "GPUDriverVersion": "552.22", "GPU": "NVIDIA GeForce RTX 4080", "GPUCount": "1",
    "Comment": "", "ApiInfo": "DirectX 12", "PresentationMode": "Hardware: Independent Flip",
    "ResolutionInfo": "3840x2160",
}


def session(info: dict[str, object]) -> str:
    return json.dumps({"Hash": "h", "Info": info, "Runs": [
        {"CaptureData": {"MsBetweenPresents": [10.0] * 4}},
        {"CaptureData": {"MsBetweenPresents": [11.0] * 4}}]})


def test_a_capframex_session_records_its_info_block() -> None:
    """Every field from its Info key; the version CapFrameX wrote; the same for every run."""
    first, second = read_capture(session(INFO).encode(), name="s.json")
    assert first.recorded == second.recorded == Recorded(
        gpu="NVIDIA GeForce RTX 4080", driver="552.22", os="Microsoft Windows 11 Pro 23H2",
        cpu="AMD Ryzen 7 7800X3D 8-Core Processor", ram="2x16GB (DDR5-6000)",
        motherboard="ASUS ROG STRIX X670E-E", resolution="3840x2160", runtime="DirectX 12",
        captured_at="2024-05-01T10:11:12.123Z", tool="CapFrameX", tool_version="1.7.2.0",
        game="Cyberpunk 2077")


@pytest.mark.parametrize(("left_out", "driver"), [
    ((), "552.22"), (("GPUDriverVersion",), "r552_12"),
    (("GPUDriverVersion", "DriverPackage"), "55214"),
    (("GPUDriverVersion", "DriverPackage", "BaseDriverVersion"), None),
])
def test_the_session_driver_is_the_first_key_given(left_out: tuple[str, ...],
                                                   driver: str | None) -> None:
    info = {k: v for k, v in INFO.items() if k not in left_out}
    assert read_capture(session(info).encode(), name="s.json")[0].recorded.driver == driver


def test_a_value_that_is_not_text_is_not_recorded() -> None:
    info = {**INFO, "GPU": 4080, "OS": None, "Processor": {"name": "x"}, "SystemRam": ["32"],
            "AppVersion": True, "GameName": "   "}
    recorded = read_capture(session(info).encode(), name="s.json")[0].recorded
    assert (recorded.gpu, recorded.os, recorded.cpu, recorded.ram, recorded.tool_version,
            recorded.game) == (None,) * 6
    assert read_capture(json.dumps({"Runs": [{"CaptureData": {"MsBetweenPresents": [1.0]}}]})
                        .encode(), name="s.json")[0].recorded == Recorded(tool="CapFrameX")


def test_the_example_sessions_record_their_info() -> None:
    [capture] = read_capture_file(EXAMPLES / "silver-gtx1660s" / "captures" / "cp2077-1080p.json")
    assert capture.recorded == Recorded(
        gpu="NVIDIA GeForce GTX 1660 SUPER", driver="566.14", os="Microsoft Windows 11 Pro",
        cpu="Illustrative 6-core CPU", ram="32 GB", motherboard="Illustrative B550 board",
        runtime="DirectX 12", captured_at="2026-11-24T10:00:00", tool="CapFrameX",
        tool_version="1.7.2", game="Cyberpunk 2077")


# --- MangoHud ---------------------------------------------------------------------------------

MANGOHUD_TABLE = "fps,frametime,cpu_load,gpu_load,elapsed\n" + "".join(
    f"100,10.000,10,20,{i * 10_000_000}\n" for i in range(5))
SYSTEM_LINES = ("os,cpu,gpu,ram,kernel,driver,cpuscheduler\n"
                "Arch Linux,AMD Ryzen 7 5800X 8-Core Processor,AMD Radeon RX 6800 (RADV NAVI21),"
                "32768000,6.9.1-arch1-1,Mesa 24.1.0,\n")
MANGOHUD_RECORDED = Recorded(gpu="AMD Radeon RX 6800 (RADV NAVI21)", driver="Mesa 24.1.0",
                             os="Arch Linux", cpu="AMD Ryzen 7 5800X 8-Core Processor",
                             ram="32768000", tool="MangoHud")


def test_a_mangohud_log_records_its_system_line() -> None:
    assert read_one(SYSTEM_LINES + MANGOHUD_TABLE).recorded == MANGOHUD_RECORDED


def test_a_versioned_mangohud_log_records_its_version() -> None:
    text = ("v1\n0.7.2\n---------------------SYSTEM INFO---------------------\n" + SYSTEM_LINES
            + "--------------------FRAME METRICS--------------------\n" + MANGOHUD_TABLE)
    assert read_one(text).recorded == MANGOHUD_RECORDED.model_copy(update={"tool_version": "0.7.2"})


def test_a_mangohud_frame_table_alone_records_nothing() -> None:
    assert read_one(MANGOHUD_TABLE).recorded == Recorded()


def test_the_example_mangohud_logs_record_what_they_say() -> None:
    """The GOLD sample's logs say Linux and Mesa, as its card.yaml now declares (issue 23,
    step 5; tests/test_provenance.py holds them against it)."""
    [capture] = read_capture_file(EXAMPLES / "gold-rx7800xt" / "captures" / "run1-1440p.csv")
    assert capture.recorded == Recorded(gpu="AMD Radeon RX 7800 XT", driver="Mesa 24.2.0",
                                        os="Illustrative Linux", cpu="Illustrative 8-core CPU",
                                        ram="32803468", tool="MangoHud")


# --- Engine frame stats, benchmark-page CSV -----------------------------------------------------

def frame_stats(size: object, device: object = "desktop") -> str:
    lines = [{"schema_version": 1, "tick": t, "t_ms": 10.0 * t, "sim_ms": 0.01, "submit_ms": 1.0,
              "gpu_ms": None, "gpu_tick": None, "present_interval_ms": None if t == 0 else 10.0,
              "kind": "full", "size": size if t == 0 else [1, 1], "device": device,
              "hud_ms": None} for t in range(6)]
    return "".join(json.dumps(line) + "\n" for line in lines) + json.dumps(
        {"schema_version": 1, "end": True, "frames": 6, "dropped": 0}) + "\n"


@pytest.mark.parametrize(("size", "resolution"), [
    ([2560, 1440], "2560x1440"), ([True, 1440], None), ("2560x1440", None), ([2560], None),
    ([-1, 1440], None), ([2560.0, 1440], None), (None, None),
])
def test_frame_stats_record_the_first_lines_size_only(size: object, resolution: str | None) -> None:
    """The first frame line's size; the device (a kind of device, not a GPU) is not recorded."""
    capture = read_one(frame_stats(size, device="steam-deck-oled"), name="f.jsonl")
    assert capture.recorded == Recorded(resolution=resolution)


def test_the_example_frame_stats_record_their_size() -> None:
    [capture] = read_capture_file(EXAMPLES / "silver-gtx1660s" / "captures" / "rdr2-1080p.jsonl")
    assert capture.recorded == Recorded(resolution="1920x1080")


def test_a_benchmark_csv_records_nothing() -> None:
    captures = read_capture_file(EXAMPLES / "compare" / "inside-floor" / "both.csv")
    assert len(captures) == 2 and all(c.recorded == Recorded() for c in captures)


# --- Hostile values ---------------------------------------------------------------------------

LONG = "A" * 5000
CUT = "A" * (RECORDED_MAX - 1) + "…"
INVISIBLE = "RTX\x1b[31m 4090\u202egnp.exe\u200b"


def capframex_csv(gpu: str) -> str:
    return (f"//GameName=g.exe\n//GPU={gpu}\n//Processor=   \n" + HEADER + "\n"
            + "".join("g.exe,1,0x1,DXGI,0,10.0\n" for _ in range(3)))


def test_a_5000_character_value_is_cut_to_the_cap_and_the_capture_reads() -> None:
    recorded = both_paths(capframex_csv(LONG), capframex=True)
    assert (recorded.gpu, recorded.cpu, recorded.game) == (CUT, None, "g.exe")
    assert len(CUT) == RECORDED_MAX
    text = SYSTEM_LINES.replace("Arch Linux", LONG) + MANGOHUD_TABLE
    assert read_one(text).recorded.os == CUT
    info = {**INFO, "GPU": LONG, "Comment": LONG}
    assert read_capture(session(info).encode(), name="s.json")[0].recorded.gpu == CUT


def test_invisible_characters_are_kept_in_the_value_and_escaped_when_shown(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert both_paths(capframex_csv(INVISIBLE), capframex=True).gpu == INVISIBLE
    (tmp_path / "c.csv").write_text(capframex_csv(INVISIBLE), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    code, out, err = run_cli(["metrics", "--json", "c.csv"], capsys)
    assert (code, err) == (0, "")
    assert json.loads(out)[0]["recorded"]["gpu"] == INVISIBLE
    code, out, err = run_cli(["metrics", "c.csv"], capsys)
    assert (code, err) == (0, "")
    assert ("  - recorded by the capture: gpu RTX\\u001b[31m 4090\\u202egnp.exe\\u200b; runtime "
            "DXGI; tool CapFrameX; game g.exe\n") in out
    assert "\u202e" not in out and "\x1b" not in out


def test_a_quoted_multi_line_cell_is_kept_as_written() -> None:
    text = ocat_log('"Micro-Star\nMPG Z390",OS,CPU,16 GB,1,2,1,GPU,1,-,8192')
    assert read_one(text).recorded.motherboard == "Micro-Star\nMPG Z390"


# --- The tool ---------------------------------------------------------------------------------

@pytest.mark.parametrize("path", [
    REAL / "OCAT-MetroExodus.exe-2019-02-20T101522.csv", REAL / "CapFrameXFileWithHeader.csv",
    EXAMPLES / "silver-gtx1660s" / "captures" / "cp2077-1080p.json",
    EXAMPLES / "gold-rx7800xt" / "captures" / "run1-1440p.csv",
], ids=lambda p: p.name)
def test_a_recorded_tool_is_named_as_the_format_table_names_it(path: pathlib.Path) -> None:
    [capture] = read_capture_file(path)
    assert capture.recorded.tool == format_of(capture.format).tool
