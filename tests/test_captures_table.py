"""The format table (captures/formats.py) is the one place a capture format is described, and
the readers compute no figures (issue 22, item 4).

A new format is one row of FORMAT_TABLE and one reader: the `--format` choices, detection, the
refusal of an unknown file, the `--process` refusal's noun and the record's tool name all follow
from the row (proved by adding a row in a fresh interpreter). captures/ holds no function-level
import of certgen and no import cycle; no reader imports the figures' arithmetic, and the
figures a benchmark-page CSV states are checked after the reader, by certgen.metrics.pagefigures.
"""

from __future__ import annotations

import ast
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from certgen.captures import detect, formats
from certgen.captures.benchcsv import read_bench_csv
from certgen.captures.formats import FORMAT_TABLE, FORMATS
from certgen.compare.statistics import METRIC_ROWS, SideInput, count_side, metric_value
from certgen.errors import NoProcessGroupsError
from certgen.metrics import pagefigures
from certgen.metrics.pagefigures import page_figures

CAPTURES = Path(__file__).resolve().parent.parent / "certgen" / "captures"
READERS = ("benchcsv", "capframex", "framestats", "mangohud", "presentmon")
SAMPLES = {
    "presentmon": "Application,ProcessID,SwapChainAddress,MsBetweenPresents\na.exe,1,0x1,10\n",
    "ocat": "Application,ProcessID,SwapChainAddress,MsBetweenPresents,Motherboard\n"
            "a.exe,1,0x1,10,X\n",
    "frameview": "Application,ProcessID,SwapChainAddress,MsBetweenPresents,GPU,CPU,Resolution\n"
                 "a.exe,1,0x1,10,G,C,R\n",
    "capframex-json": '{"Info": {}, "Runs": [{"CaptureData": {"MsBetweenPresents": [10.0]}}]}\n',
    "capframex-csv": "//GPU=G\nApplication,ProcessID,SwapChainAddress,MsBetweenPresents\n"
                     "a.exe,1,0x1,10\n",
    "mangohud": "fps,frametime,cpu_load,gpu_load,elapsed\n100,10,1,1,0\n100,10,1,1,10000000\n",
    "frame-stats": '{"schema_version":1,"tick":0,"present_interval_ms":null,"kind":"full"}\n',
    "bench-csv": "side,kind,name,value\nbefore,frame,,10\n",
}
"""A first line (and a little more) of each format, for detection and the --process refusal."""


def test_every_view_of_the_formats_comes_from_the_table() -> None:
    from certgen.commands.metrics import command as metrics_command
    from certgen.pipeline import CAPTURE_TOOLS

    ids = tuple(f.id for f in FORMAT_TABLE)
    assert FORMATS == detect.FORMATS == ids == (
        "presentmon", "ocat", "frameview", "capframex-json", "capframex-csv", "mangohud",
        "frame-stats", "bench-csv")
    [choice] = [p for p in metrics_command.params if p.name == "fmt"]
    assert tuple(choice.type.choices) == ids  # type: ignore[attr-defined]
    assert CAPTURE_TOOLS == {f.id: f.tool for f in FORMAT_TABLE}
    assert sorted(SAMPLES) == sorted(ids)


@pytest.mark.parametrize("fmt", FORMATS)
def test_detection_and_the_process_refusal_follow_the_row(fmt: str) -> None:
    row = formats.format_of(fmt)
    data = SAMPLES[fmt].encode()
    assert detect.detect_format(data, "x") == fmt
    if row.grouped:
        return
    with pytest.raises(NoProcessGroupsError) as info:
        detect.read_capture(data, name="x", process="Game.exe")
    assert info.value.what == row.noun


def test_a_new_format_is_one_row_of_the_table(tmp_path: Path) -> None:
    """A row added to FORMAT_TABLE (and nothing else) is detected, read, offered by
    `--format`, listed by the refusal of an unknown file, refused `--process` by its noun and
    named in the record by its tool."""
    source = (CAPTURES / "formats.py").read_text(encoding="utf-8")
    row = textwrap.dedent('''\
        Format(id="toy", tool="Toy Recorder", listed="Toy", grouped=False, noun="a toy log",
               sniff=_starts("toy-ms"), sniff_order=3,
               read=lambda data, request: [Capture(
                   frame_times_ms=np.asarray([float(v) for v in bytes(data).split()[1:]]),
                   source=request.name, format="toy", interval_column="toy-ms")]),
    ''')
    marker = "\n)\n\"\"\"Every format certgen reads"
    assert source.count(marker) == 1
    patched = source.replace(marker, "\n    " + row.replace("\n", "\n    ").rstrip() + marker)
    patched = patched.replace("from dataclasses import dataclass\n",
                              "from dataclasses import dataclass\n\nimport numpy as np\n")
    (tmp_path / "formats_toy.py").write_text(patched, encoding="utf-8")
    script = textwrap.dedent(f'''\
        import importlib, importlib.util, sys
        import certgen.captures
        spec = importlib.util.spec_from_file_location(
            "certgen.captures.formats", {str(tmp_path / "formats_toy.py")!r})
        module = importlib.util.module_from_spec(spec)
        sys.modules["certgen.captures.formats"] = module
        spec.loader.exec_module(module)
        import certgen.captures.detect as detect
        importlib.reload(detect)
        from click.testing import CliRunner
        from certgen.commands.metrics import command
        from certgen.errors import CaptureFormatError, NoProcessGroupsError
        from certgen.pipeline import CAPTURE_TOOLS

        assert detect.FORMATS[-1] == "toy", detect.FORMATS
        [capture] = detect.read_capture(b"toy-ms\\n10\\n20\\n", name="t.toy")
        assert (capture.format, capture.frame_times_ms.tolist()) == ("toy", [10.0, 20.0])
        [capture] = detect.read_capture(b"toy-ms\\n10\\n", name="t.toy", format="toy")
        try:
            detect.read_capture(b"toy-ms\\n10\\n", name="t.toy", process="Game.exe")
        except NoProcessGroupsError as exc:
            assert exc.what == "a toy log", exc.what
        else:
            raise AssertionError("--process applied to a toy log")
        try:
            detect.read_capture(b"time,value\\n", name="u.csv")
        except CaptureFormatError as exc:
            assert "frame-stats, benchmark CSV or Toy file)" in str(exc), str(exc)
        assert CAPTURE_TOOLS["toy"] == "Toy Recorder"
        [choice] = [p for p in command.params if p.name == "fmt"]
        assert "toy" in choice.type.choices
        print("ok")
    ''')
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"


def test_the_refusal_of_an_unknown_file_lists_the_table() -> None:
    assert formats.listed_formats() == (
        "PresentMon, OCAT, FrameView, CapFrameX, MangoHud, frame-stats or benchmark CSV")


def test_a_row_without_process_groups_needs_a_noun() -> None:
    row = formats.format_of("mangohud")
    with pytest.raises(ValueError, match="a noun is given exactly when"):
        formats.Format(id="x", tool="X", listed="X", grouped=False, noun=None, sniff=row.sniff,
                       sniff_order=0, read=row.read)


# --------------------------------------------------------------------------- imports


def _certgen_imports(path: Path, *, in_functions: bool) -> list[str]:
    """The certgen modules `path` imports at its top level, or inside functions."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    nested: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            nested.update(id(n) for n in ast.walk(node) if n is not node)
    found = []
    for node in ast.walk(tree):
        if (id(node) in nested) != in_functions:
            continue
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        else:
            continue
        found += [n for n in names if n == "certgen" or n.startswith("certgen.")]
    return found


def test_captures_has_no_function_level_certgen_import() -> None:
    """Function-level imports stay only for heavy third-party libraries (polars here)."""
    found = {p.name: _certgen_imports(p, in_functions=True) for p in sorted(CAPTURES.glob("*.py"))}
    assert {name: mods for name, mods in found.items() if mods} == {}


def test_captures_modules_import_no_cycle() -> None:
    graph = {p.stem: {m.rpartition(".")[2] for m in _certgen_imports(p, in_functions=False)
                      if m.startswith("certgen.captures.")}
             for p in CAPTURES.glob("*.py") if p.stem != "__init__"}
    seen: dict[str, int] = {}

    def visit(node: str, path: tuple[str, ...]) -> None:
        assert node not in path, " -> ".join((*path, node))
        if seen.get(node):
            return
        for nxt in sorted(graph.get(node, ())):
            visit(nxt, (*path, node))
        seen[node] = 1

    for node in sorted(graph):
        visit(node, ())
    assert "detect" not in graph["presentmon"]


@pytest.mark.parametrize("reader", READERS)
def test_no_reader_imports_the_figures(reader: str) -> None:
    """Readers return frames and facts: nothing of certgen beyond the captures' own helpers,
    the vocabulary's capture facts, the error tree and the strict JSON loader."""
    allowed = {"certgen", "certgen.support", "certgen.captures.common", "certgen.captures.model",
               "certgen.errors",
               "certgen.support.jsonload", "certgen.support.untrusted", "certgen.model.capture"}
    path = CAPTURES / f"{reader}.py"
    imports = set(_certgen_imports(path, in_functions=False))
    imports |= set(_certgen_imports(path, in_functions=True))
    assert imports <= allowed, sorted(imports - allowed)


# --------------------------------------------------------------------------- stated figures


def test_the_bench_csv_reader_returns_the_stated_figures_unchecked() -> None:
    """The reader gives the metric rows as what the file states (sorted, the last of a name
    given twice); the check happens after it, in the readers' callers (pagefigures.checked)."""
    data = (b"side,kind,name,value\nbefore,frame,,10\nbefore,frame,,20\n"
            b"before,metric,avg_fps,1\nbefore,metric,colour,\nbefore,metric,avg_fps,66.7\n")
    [capture] = read_bench_csv(data, "b.csv")
    assert capture.stated_figures == (("avg_fps", 66.7), ("colour", None))
    assert capture.warnings == ()
    [read] = detect.read_capture(data, name="b.csv")
    assert read.warnings == ()  # a reader computes no figure, so checks none
    [checked] = pagefigures.checked(detect.read_capture(data, name="b.csv"))
    assert checked.stated_figures == capture.stated_figures
    assert checked.warnings == ("side 'before': metric 'colour' is not recomputed",)


@pytest.mark.parametrize("frames", [
    [10.0, 10.0, 10.0, 20.0],
    [16.7] * 950 + [250.0, 40.0, 300.0, -1.0, 0.0],
    [8.0, 9.0] * 700 + [55.0] * 3,
    [],
])
def test_the_stated_figure_check_is_the_exports_own_arithmetic(frames: list[float]) -> None:
    """page_figures gives every metric row the benchmark-page export writes, with the value it
    writes (certgen.compare.statistics.count_side), so an export always reads back without a warning."""
    values = np.asarray(frames, dtype=np.float64)
    side = count_side(SideInput(frame_times_ms=values, source="x")).summary
    computed = page_figures(values)
    assert tuple(computed) == METRIC_ROWS
    assert computed == {name: metric_value(side, name) for name in METRIC_ROWS}
