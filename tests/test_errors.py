"""One error tree (certgen.errors): every class lives there and pickles with all its fields."""

from __future__ import annotations

import importlib
import inspect
import pickle
import pkgutil
from typing import Any

import pytest

import certgen
from certgen import errors
from certgen.errors import CertgenError

# Every error class lives in certgen/errors.py (record.py's RecordError twin went in issue 22).
PENDING_MOVES: set[str] = set()

# Constructor arguments for the classes whose __init__ is not CertgenError's own. A new class
# with its own __init__ fails the pickling test until it has an entry here.
EXAMPLES: dict[str, tuple[tuple[Any, ...], dict[str, Any]]] = {
    "LabError": ((["lab.yaml: contact: required key missing",
                   "lab.yaml: contakt: unknown key (did you mean 'contact'?)"],), {}),
    "RevocationsError": ((["revocations.yaml:2: [0].date: expected a date YYYY-MM-DD, got 'x'",
                           "revocations.yaml:4: [1].id: expected a text, got an empty one"],), {}),
    "RefusalError": (
        (['runs[1].soft_limit: run "Game 1 2560x1440" has stutter 0.6132 > 0.60',
          "runs[2].first_capture: sha256 mismatch"],),
        {"file": "card.yaml"},
    ),
    "BundleErrors": (
        (["card.yaml:3: certificate.id: expected a text", "card.yaml: runs: missing"],), {}),
    "FleetImportError": (
        ([f"fleet.jsonl:{n}: stutter: expected a number or null, got \"x\"" for n in range(1, 23)],),
        {},
    ),
    "NoProcessGroupsError": (("Game.exe", "a MangoHud log"), {"file": "captures/run1.csv"}),
}


def _error_classes() -> list[type[CertgenError]]:
    return sorted(
        (value for value in vars(errors).values()
         if inspect.isclass(value) and issubclass(value, CertgenError)
         and value.__module__ == errors.__name__),
        key=lambda cls: cls.__name__,
    )


def _instance(cls: type[CertgenError]) -> CertgenError:
    if cls.__init__ is CertgenError.__init__:
        return cls("expected a number, got 'abc'", file="captures/run1.csv", line=17,
                   field="MsBetweenPresents")
    assert cls.__name__ in EXAMPLES, f"{cls.__name__} has its own __init__: add it to EXAMPLES"
    args, kwargs = EXAMPLES[cls.__name__]
    return cls(*args, **kwargs)


def _public(error: BaseException) -> dict[str, Any]:
    """Every public data attribute (OSError's unset characters_written raises: skipped)."""
    public = {}
    for name in dir(error):
        if not name.startswith("_") and hasattr(error, name):
            value = getattr(error, name)
            if not callable(value):
                public[name] = value
    return public


def test_the_tree_holds_every_class_and_the_examples_are_all_used() -> None:
    names = {cls.__name__ for cls in _error_classes()}
    assert {"BundleErrors", "BuildDateError", "FleetImportError", "ExplainerError",
            "NoProcessGroupsError", "CompareError", "RecordError", "RefusalError"} <= names
    assert set(EXAMPLES) <= names


@pytest.mark.parametrize("cls", _error_classes(), ids=lambda cls: cls.__name__)
@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
def test_every_error_class_pickles_with_all_its_fields(
    cls: type[CertgenError], protocol: int
) -> None:
    error = _instance(cls)
    error.add_note("a note added on the way")
    copy = pickle.loads(pickle.dumps(error, protocol=protocol))
    assert type(copy) is cls
    assert str(copy) == str(error) and copy.args == error.args
    public = _public(error)
    assert {"message", "file", "line", "field"} <= set(public)
    assert _public(copy) == public
    assert copy.__notes__ == ["a note added on the way"]


def test_subclass_fields_survive_pickling() -> None:
    """The fields a subclass adds come back as they were, not re-derived from the message."""
    refusal = pickle.loads(pickle.dumps(_instance(errors.RefusalError)))
    assert isinstance(refusal, errors.RefusalError)
    assert refusal.reasons == EXAMPLES["RefusalError"][0][0]
    assert (refusal.file, refusal.line, refusal.field) == ("card.yaml", None, None)
    fleet = pickle.loads(pickle.dumps(_instance(errors.FleetImportError)))
    assert isinstance(fleet, errors.FleetImportError)
    assert len(fleet.errors) == 22 and str(fleet).endswith("; … and 2 more")
    groups = pickle.loads(pickle.dumps(_instance(errors.NoProcessGroupsError)))
    assert isinstance(groups, errors.NoProcessGroupsError)
    assert (groups.process, groups.what, groups.file) == (
        "Game.exe", "a MangoHud log", "captures/run1.csv")


def test_no_error_class_is_defined_outside_certgen_errors() -> None:
    outside = []
    for info in pkgutil.walk_packages(certgen.__path__, "certgen."):
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            if (inspect.isclass(value) and issubclass(value, CertgenError)
                    and value.__module__ == module.__name__ != errors.__name__):
                outside.append(f"{module.__name__}.{name}")
    assert sorted(outside) == sorted(PENDING_MOVES)


@pytest.mark.parametrize(("module", "name"), [
    # certgen.fleet no longer carries FleetImportError (its alias dropped, issue 22): the class
    # is certgen.errors.FleetImportError (and certgen.fleet.model's, until that file moves).
    ("certgen.inputs.bundle", "BundleErrors"), ("certgen.support.builddate", "BuildDateError"),
    ("certgen.fleet.model", "FleetImportError"), ("certgen.render.explainers", "ExplainerError"),
    ("certgen.captures.detect", "NoProcessGroupsError"), ("certgen.builders.report", "CompareError"),
])
def test_old_import_paths_give_the_same_class(module: str, name: str) -> None:
    assert getattr(importlib.import_module(module), name) is getattr(errors, name)
