"""`certgen verify` in the PDF's language (issue 40, item 6): every detail of certgen/verify is
a message (certgen.verify.outcome.Said) with a Russian and a Portuguese translation carrying the
same placeholders; a Russian and a Portuguese certificate print their passing and failing lines
and the summary's words in their language, while PASS/FAIL/SKIP, the check names, the VERIFIED
tokens and --json's English `detail` stay as they are; --lang chooses another language."""

from __future__ import annotations

import ast
import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from babel.messages.pofile import read_po
from conftest import EXAMPLES, SIGNED_AT
from pkikit import PASSPHRASE, make_pki

from certgen.cli import main
from certgen.inputs.lab import load_lab
from certgen.render.i18n import translations
from certgen.support.paths import locales_dir
from certgen.verify.outcome import Check, Said, Verification, joined
from certgen.verify.verdict import verify_pdf

LAB_NAME = load_lab(EXAMPLES / "lab.yaml").lab.name
VERIFY = Path(__file__).resolve().parent.parent / "certgen" / "verify"
PLACEHOLDER = re.compile(r"%\((\w+)\)s")
CHECKS = ("signature", "intact", "trust", "revocation", "record", "record-sha256", "content",
          "derivation")


def _msgids(node: ast.expr) -> list[str] | None:
    """The msgid(s) a Said's first argument can be: a literal, or either side of `a if c else b`."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.IfExp):
        body, orelse = _msgids(node.body), _msgids(node.orelse)
        return None if body is None or orelse is None else body + orelse
    return None


def _calls(name: str) -> Iterator[tuple[Path, ast.Call]]:
    for path in sorted(VERIFY.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                    and node.func.id == name:
                yield path, node


def used_msgids() -> dict[str, str]:
    """Every msgid a Said of certgen/verify is made with, and where."""
    found: dict[str, str] = {}
    for path, call in _calls("Said"):
        ids = _msgids(call.args[0])
        if ids is None and path.name == "outcome.py":  # `verbatim`, the wrapper for data
            continue
        assert ids is not None, f"{path.name}:{call.lineno}: a Said's msgid must be a literal"
        for msgid in ids:
            found.setdefault(msgid, f"{path.name}:{call.lineno}")
    return found


def _catalog(lang: str) -> dict[str, str]:
    with (locales_dir() / lang / "LC_MESSAGES" / "verify.po").open("rb") as fh:
        return {str(m.id): str(m.string) for m in read_po(fh, locale=lang) if m.id}


def test_every_message_has_a_russian_and_a_portuguese_translation_with_its_placeholders() -> None:
    used = used_msgids()
    assert len(used) > 200  # every check module says its details through Said
    assert sorted(_catalog("en")) == sorted(used), "verify.po (en) lists exactly the msgids used"
    problems = []
    for lang in ("ru", "pt"):
        catalog = _catalog(lang)
        for msgid, where in used.items():
            text = catalog.get(msgid, "")
            if not text.strip():
                problems.append(f"{lang}: {where}: untranslated {msgid!r}")
            elif sorted(PLACEHOLDER.findall(text)) != sorted(PLACEHOLDER.findall(msgid)) \
                    or text.count("%") != msgid.count("%"):
                problems.append(f"{lang}: {where}: placeholders differ: {text!r}")
            else:  # it formats, and says something else than the English words
                values = {name: "X" for name in PLACEHOLDER.findall(msgid)}
                assert (text % values if values else text)
    assert problems == []


def test_a_message_renders_its_nested_reasons_in_the_same_language() -> None:
    where = Said("revision %(number)s after the signed one (bytes %(start)s–%(end)s)",
                 number=1, start=10, end=20)
    said = Said("%(where)s: object %(number)s", where=where, number=5)
    assert said.render("en") == "revision 1 after the signed one (bytes 10–20): object 5"
    assert said.render("ru") == "редакция 1 после подписанной (байты 10–20): объект 5"
    assert said.render("pt") == "revisão 1 após a assinada (bytes 10–20): objeto 5"
    both = joined([Said("today"), Said("unsigned")])
    assert (both.render("en"), both.render("ru")) == ("today; unsigned", "сегодня; без подписи")
    # A terminal line carries plain spaces, not the documents' no-break ones.
    assert "\u00a0" not in Said("the PDF is not signed").render("ru")
    assert "\u00a0" in translations("ru").gettext("the PDF is not signed")


def test_no_check_is_built_from_english_text() -> None:
    """Every Check, CrlFinding and Refused of certgen/verify is given a message, never an
    f-string or a literal (a str would print in English whatever the PDF's language)."""
    bare = []
    for name, index in (("Check", 2), ("CrlFinding", 1), ("Refused", 0)):
        for path, call in _calls(name):
            said = [call.args[index]] if len(call.args) > index else []
            said += [k.value for k in call.keywords if k.arg in ("detail", "short")]
            for arg in said:
                if isinstance(arg, ast.Constant | ast.JoinedStr | ast.BinOp):
                    bare.append(f"{path.name}:{call.lineno}")
    assert bare == []


def test_the_summary_keeps_its_tokens_and_translates_its_words() -> None:
    checks = (Check("signature", "pass", Said("the PDF is not signed")),
              Check("revocation", "skip", Said("unsigned"), short=Said("status list out of date")),
              Check("trust", "skip", Said("today")))
    excepted = Verification("x.pdf", "ID-1", checks, lang="ru")
    assert excepted.summary() == ("VERIFIED EXCEPT: список статусов устарел, не проверено: trust: "
                                  "x.pdf (ID-1)")
    assert excepted.summary("en") == ("VERIFIED EXCEPT: status list out of date, trust not "
                                      "checked: x.pdf (ID-1)")
    failed = Verification("x.pdf", "ID-1", (Check("intact", "fail", Said("today")),), lang="pt")
    assert failed.summary() == "NOT VERIFIED: x.pdf: verificações reprovadas: 1 (intact)"
    assert failed.lines() == ["FAIL intact: hoje"]
    data = failed.as_json(localized=True)
    assert data["lang"] == "pt" and data["checks"] == [
        {"check": "intact", "verdict": "fail", "detail": "today", "detail_localized": "hoje"}]
    assert "lang" not in failed.as_json()  # the pinned form, unchanged


# --- a Russian and a Portuguese certificate, signed ------------------------------------------

# English words that appear in no Russian or Portuguese detail (data aside: see _prose).
ENGLISH = re.compile(r"\b(the|is|are|of|and|not|was|with|by|its|after|signed|checked|follows?|"
                     r"printed|chains|valid|file|record|certificate|attached|every)\b",
                     re.IGNORECASE)


def _prose(line: str) -> str:
    """A line's detail without the data it quotes (hashes, ids, file names, the lab's name)."""
    detail = line.split(": ", 1)[1].replace(LAB_NAME, " ")
    detail = re.sub(r"[0-9a-f]{64}", " ", detail)
    detail = re.sub(r"\S+\.(?:json|yaml|pdf|pem)\b", " ", detail)
    return re.sub(r"Common Name: [^,;)]+|Organization: [^,;)]+|SAMPLE-\S+|A\. Sample", " ",
                  detail)


@pytest.fixture(scope="module")
def signed_ru_pt(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """GOLD built in Russian and Portuguese with the sample lab, signed as `signed_gold` is
    (the English build renders no Russian or Portuguese PDF to reuse)."""
    from certgen.builders.certificate import build_bundle
    from certgen.render.sign import signing_key

    key = signing_key(make_pki().lab_p12, PASSPHRASE, source="lab.p12").at(SIGNED_AT, given=True)
    out = tmp_path_factory.mktemp("signed-ru-pt")
    return Path(build_bundle(EXAMPLES / "gold-rx7800xt", out, languages=["ru", "pt"],
                             lab=load_lab(EXAMPLES / "lab.yaml"), sign=key).folder)


@pytest.mark.parametrize("lang", ["ru", "pt"])
def test_a_certificate_s_lines_come_out_in_its_language(signed_ru_pt: Path, lang: str) -> None:
    pdf = (signed_ru_pt / f"certificate.{lang}.pdf").read_bytes()
    result = verify_pdf(pdf, source="cert.pdf", trust=make_pki().ca_pem, revocations=())
    assert result.lang == lang and result.verdict == "verified", "\n".join(result.lines())
    lines = result.lines()
    assert [line.split(":", 1)[0] for line in lines] == [f"PASS {name}" for name in CHECKS]
    assert [ENGLISH.findall(_prose(line)) for line in lines] == [[]] * len(lines), lines
    for check, line in zip(result.checks, lines, strict=True):
        assert line != check.line("en")  # each one translated, none left as it was
    english = [c.detail for c in result.checks]
    assert english[0].startswith("signed in the name of A. Sample, by its own certificate")
    assert result.summary() == "VERIFIED: cert.pdf (SAMPLE-GOLD-0002)"

    # A byte changed inside the signed range: the failing and skipped lines in the language too.
    tampered = bytearray(pdf)
    tampered[len(pdf) // 3] ^= 0x01
    broken = verify_pdf(bytes(tampered), source="cert.pdf", trust=make_pki().ca_pem,
                        revocations=())
    assert broken.verdict == "not-verified"
    bad = [line for line, c in zip(broken.lines(), broken.checks, strict=True)
           if c.verdict != "pass"]
    assert bad and all(re.match(r"(FAIL|SKIP) [a-z0-9-]+: ", line) for line in bad), bad
    assert [ENGLISH.findall(_prose(line)) for line in bad] == [[]] * len(bad), bad
    words = {"ru": "не пройдено проверок", "pt": "verificações reprovadas"}[lang]
    assert broken.summary().startswith(f"NOT VERIFIED: cert.pdf: {words}: ")


def test_the_cli_prints_the_pdf_s_language_and_lang_overrides_it(
        signed_ru_pt: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shutil.copy(signed_ru_pt / "certificate.ru.pdf", tmp_path / "cert.pdf")
    (tmp_path / "ca.pem").write_bytes(make_pki().ca_pem)
    base = ["verify", str(tmp_path / "cert.pdf"), "--trust", str(tmp_path / "ca.pem")]
    assert main(base) == 3  # no revocation list: VERIFIED EXCEPT
    russian = capsys.readouterr().out.splitlines()
    assert russian[0].startswith("PASS signature: подписано от имени A. Sample")
    assert russian[-1] == f"VERIFIED EXCEPT: не проверено: revocation: {tmp_path / 'cert.pdf'} " \
                          "(SAMPLE-GOLD-0002)"
    assert main([*base, "--lang", "en"]) == 3
    english = capsys.readouterr().out.splitlines()
    assert english[0].startswith("PASS signature: signed in the name of A. Sample")
    assert english[-1].startswith("VERIFIED EXCEPT: revocation not checked: ")
    assert main([*base, "--lang", "pt", "--json"]) == 3
    data = json.loads(capsys.readouterr().out)
    assert data["lang"] == "pt"
    signature = data["checks"][0]
    assert signature["detail"].startswith("signed in the name of A. Sample")  # pinned: English
    assert signature["detail_localized"].startswith("assinado em nome de A. Sample")
    assert data["summary_localized"].startswith("VERIFIED EXCEPT: não verificado: revocation: ")


def test_a_crl_address_s_failure_is_said_in_the_line_s_language() -> None:
    """crlfetch's English stays build's note; verify says the same in the line's language."""
    from certgen.support.crlfetch import CrlFetchError, fetch_crl
    from certgen.verify.revocation import _fetch_said

    for url in ("file:///etc/passwd", "http://127.0.0.1:1/ca.crl"):
        with pytest.raises(CrlFetchError) as info:
            fetch_crl(url, timeout=5)
        said = _fetch_said(info.value)
        assert said.render("en") == str(info.value)
        assert said.render("ru") != str(info.value) and said.render("pt") != str(info.value)
    assert _fetch_said(CrlFetchError("answered HTTP 404", "http", "404")).render("ru") == (
        "ответил HTTP 404")


def test_the_uncertainty_findings_are_said_in_the_line_s_language() -> None:
    """certgen.rules words its uncertainty findings in English; verify says each kind in the
    line's language, in English exactly as rules does."""
    from certgen.rules.uncertainty import Finding
    from certgen.verify.derivation import _finding_said

    findings = [
        Finding("uncertainty: decision rule 'guard' at 0.95 does not follow from the rules "
                "('simple' at 0.95)", "rule", (("stated_rule", "'guard'"), ("stated_level",
                "0.95"), ("rule", "'simple'"), ("level", "0.95"))),
        Finding("uncertainty.gates: 2 entries, the figures give 3", "count",
                (("part", "gates"), ("count", "2"), ("derived", "3"))),
        Finding("uncertainty.gates[0]: verdict do not follow from the record's figures",
                "fields", (("part", "gates"), ("index", "0"), ("fields", "verdict"))),
        Finding("run 1: the record cites 2 repeats, the bundle has 3", "repeat-count",
                (("run", "1"), ("count", "2"), ("found", "3"))),
        Finding("run 1: repeat a.csv has SHA-256 b in the bundle (c.csv), the record's is d",
                "repeat-sha256", (("run", "1"), ("file", "a.csv"), ("sha256", "b"),
                                  ("found", "c.csv"), ("recorded", "d"))),
        Finding("run 1: repeat 1 (captures/A-1.csv): fluidity_score recomputed differently",
                "repeat-figures", (("run", "1"), ("number", "1"), ("file", "captures/A-1.csv"),
                                   ("fields", "fluidity_score"))),
        Finding("run 1: the within-capture intervals recomputed differently", "within",
                (("run", "1"),)),
    ]
    for finding in findings:
        said = _finding_said(finding)
        assert said.render("en") == finding.text
        assert not ENGLISH.findall(_prose("x: " + said.render("ru"))), said.render("ru")
        assert said.render("pt") != finding.text
