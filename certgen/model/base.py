"""The base of every record model (frozen, strict, unknown keys refused; keys added by a later
certgen left out when absent) and lab-written text in several languages.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar, Final, Literal, overload

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    JsonValue,
    SerializerFunctionWrapHandler,
    model_serializer,
    model_validator,
)
from pydantic.json_schema import GenerateJsonSchema


class Frozen(BaseModel):
    """Every record object: frozen, strict (no coercion), unknown keys refused."""

    model_config = ConfigDict(frozen=True, strict=True, extra="forbid", allow_inf_nan=False)


class WithLaterKeys(Frozen):
    """An object some of whose keys came in a later certgen: a record from before has no such
    key, and it is not written back either (so an older record.json reads back byte for byte).
    `build_record` always sets them."""

    LATER_KEYS: ClassVar[tuple[str, ...]] = ()

    @model_serializer(mode="wrap")
    def _omit_absent(self, handler: SerializerFunctionWrapHandler) -> dict[str, JsonValue]:
        data: dict[str, JsonValue] = handler(self)
        for key in self.LATER_KEYS:
            if key not in self.model_fields_set:
                del data[key]
        return data


Language = Literal["en", "ru", "pt"]


GradeName = Literal["PLATINUM", "GOLD", "SILVER"]


class LocalText(Frozen):
    """Lab-written text per language, at least one given (a lab profile always gives the
    English). A document in a language without its own text shows the English, else the first
    given (en, ru, pt), marked as written in that language."""

    en: str | None = Field(default=None, description="English, or null.")
    ru: str | None = Field(default=None, description="Russian, or null.")
    pt: str | None = Field(default=None, description="Portuguese, or null.")

    @model_validator(mode="after")
    def _one_given(self) -> LocalText:
        if self.en is None and self.ru is None and self.pt is None:
            raise ValueError("expected the text in at least one of en, ru, pt")
        return self


LabText = str | LocalText
"""A plain string (English, shown in every language) or text per language."""


TEXT_ORDER: Final = ("en", "ru", "pt")
"""The fallback order of lab-written text: a language's own text, else the first given."""


def text_for(value: LabText, lang: str) -> tuple[str, Language]:
    """Lab-written text as a document in `lang` shows it, and the language it is written in:
    `lang`'s own text, else the English, else the first given (en, ru, pt). A plain string is
    English."""
    if isinstance(value, str):
        return value, "en"
    texts: tuple[tuple[Language, str | None], ...] = (
        ("en", value.en), ("ru", value.ru), ("pt", value.pt))
    # A stable sort: the document's own language first, then en, ru, pt.
    for source, text in sorted(texts, key=lambda item: item[0] != lang):
        if text is not None:
            return text, source
    raise AssertionError("LocalText gives at least one language")


@overload
def lab_text(value: LabText | Mapping[str, str | None]) -> LabText: ...
@overload
def lab_text(value: None) -> None: ...
@overload
def lab_text(value: LabText | Mapping[str, str | None] | None) -> LabText | None: ...
def lab_text(value: LabText | Mapping[str, str | None] | None) -> LabText | None:
    """Lab-written text as the record holds it: a plain string stays one (an older record's
    bytes do not change), a mapping of languages becomes a LocalText."""
    if value is None or isinstance(value, str | LocalText):
        return value
    return LocalText.model_validate(dict(value))


def code_tag(known: Sequence[str]) -> Callable[[object], str]:
    def tag(value: object) -> str:
        code = value.get("code") if isinstance(value, dict) else getattr(value, "code", None)
        return code if isinstance(code, str) and code in known else "other"
    return tag


class _KeptNames(GenerateJsonSchema):
    NAMES: ClassVar[Mapping[str, str]] = {}

    def normalize_name(self, name: str) -> str:
        name = super().normalize_name(name)
        return self.NAMES.get(name, name)


def schema_keeping_names(model: type[BaseModel], names: Mapping[str, str]) -> dict[str, object]:
    """`model`'s validation JSON Schema with the `$defs` of renamed classes under their old
    names (`names`: class name -> name in the schema). The input files' models carry a prefix
    (CardRun, LabSignatory) so no class name is defined twice in certgen, while the published
    schemas keep `$defs/Run` and `$defs/Signatory`, which other tools refer to."""
    generator = type("KeptNames", (_KeptNames,), {"NAMES": dict(names)})
    schema: dict[str, Any] = model.model_json_schema(mode="validation",
                                                     schema_generator=generator)
    for definition in schema.get("$defs", {}).values():
        if definition.get("title") in names:
            definition["title"] = names[definition["title"]]
    return schema
