"""The typed record (certgen.record): frozen strict models, byte-exact round trips, and the
schema and field reference generated from the models (docs/record.schema.json, docs/record.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pydantic
import pytest
from bundlekit import run_cli

from certgen.fleet import FleetStore
from certgen.pipeline import make_record
from certgen.record import (
    RecordError,
    dump_record,
    fields_reference,
    load_record,
    record_schema_text,
    with_fields_reference,
)

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "tests" / "data" / "records" / "sample.json"
EXAMPLES = ROOT / "examples"
BUNDLES = ("gold-rx7800xt", "platinum-rtx4070s", "silver-gtx1660s")


def sample_data() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(SAMPLE.read_bytes())
    return data


def refusal(data: dict[str, Any]) -> str:
    with pytest.raises(RecordError) as info:
        load_record(json.dumps(data).encode())
    return str(info.value)


# --- bytes in, the same bytes out ------------------------------------------------------------


def test_the_sample_record_round_trips_byte_for_byte() -> None:
    data = SAMPLE.read_bytes()
    assert dump_record(load_record(data)) == data


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Any:
    store = FleetStore.open(tmp_path_factory.mktemp("fleet") / "fleet.sqlite")
    with (EXAMPLES / "fleet.jsonl").open(encoding="utf-8") as fh:
        store.import_jsonl(fh, name="fleet.jsonl")
    yield store
    store.close()


@pytest.mark.parametrize("bundle", BUNDLES)
@pytest.mark.parametrize("with_fleet", [False, True])
def test_example_records_round_trip_byte_for_byte(bundle: str, with_fleet: bool,
                                                  fleet: FleetStore) -> None:
    record = make_record(EXAMPLES / bundle, fleet=fleet if with_fleet else None)
    data = dump_record(record)
    loaded = load_record(data)
    assert loaded == record
    assert dump_record(loaded) == data
    assert (record.fleet.fleet_runs is not None) is with_fleet


# --- frozen and strict -----------------------------------------------------------------------


def test_models_are_frozen() -> None:
    record = load_record(SAMPLE.read_bytes())
    with pytest.raises(pydantic.ValidationError, match="frozen"):
        record.customer = "someone else"  # type: ignore[misc]
    with pytest.raises(pydantic.ValidationError, match="frozen"):
        record.certificate.id = "X"  # type: ignore[misc]
    metrics = record.runs[0].metrics
    assert metrics is not None
    with pytest.raises(pydantic.ValidationError, match="frozen"):
        metrics.stutter = 0.0  # type: ignore[misc]
    assert isinstance(record.runs, tuple)  # lists inside are tuples: nothing to append to
    assert isinstance(record.runs[0].capture.groups_left_out, tuple)  # type: ignore[union-attr]


def test_unknown_keys_are_refused_with_their_path() -> None:
    data = sample_data()
    data["runs"][1]["metrics"]["smoothness"] = 1.0
    assert refusal(data) == "record.json: runs[1].metrics.smoothness: unknown field"
    data = sample_data()
    data["extra"] = True
    assert refusal(data) == "record.json: extra: unknown field"


def test_wrong_types_are_refused_with_their_path() -> None:
    data = sample_data()
    data["runs"][0]["metrics"]["frames"] = "7200"
    assert refusal(data) == 'record.json: runs[0].metrics.frames: expected an integer, got "7200"'
    data = sample_data()
    data["status"]["issuable"] = 1
    assert refusal(data) == "record.json: status.issuable: expected true or false, got 1"
    data = sample_data()
    data["certificate"]["issued"] = "29.11.2026"
    assert refusal(data).startswith("record.json: certificate.issued: ")
    data = sample_data()
    data["fleet"]["mean_stutter"] = "NaN"
    assert refusal(data) == 'record.json: fleet.mean_stutter: expected a number or null, got "NaN"'


def test_a_nan_in_the_json_is_refused() -> None:
    text = SAMPLE.read_text(encoding="utf-8").replace('"mean_stutter": 0.2556',
                                                      '"mean_stutter": NaN')
    with pytest.raises(RecordError) as info:
        load_record(text.encode())
    assert str(info.value).startswith("record.json: fleet.mean_stutter: ")


# --- generated from the models ---------------------------------------------------------------


def test_the_published_json_schema_is_the_models_schema() -> None:
    committed = (ROOT / "docs" / "record.schema.json").read_text(encoding="utf-8")
    assert committed == record_schema_text(), (
        "docs/record.schema.json is stale: run `python -m certgen.record --schema "
        "docs/record.schema.json`")


def test_certgen_schema_record_prints_the_published_schema(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli(["schema", "--record"], capsys) == (0, record_schema_text(), "")
    code, out, _ = run_cli(["schema"], capsys)
    assert code == 0 and json.loads(out)["title"] != json.loads(record_schema_text())["title"]


def test_the_field_reference_of_docs_record_md_is_current() -> None:
    text = (ROOT / "docs" / "record.md").read_text(encoding="utf-8")
    assert fields_reference() in text
    assert with_fields_reference(text) == text, (
        "docs/record.md's field reference is stale: run `python -m certgen.record --docs "
        "docs/record.md`")


def test_every_record_field_is_in_the_reference_and_the_schema() -> None:
    reference = fields_reference()
    schema = json.loads(record_schema_text())
    for name, props in [("Record", schema["properties"]),
                        *[(k, v["properties"]) for k, v in schema["$defs"].items()
                          if "properties" in v]]:
        assert f"### {name}" in reference, name
        for field in props:
            assert f"| `{field}` |" in reference, (name, field)
