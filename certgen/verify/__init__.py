"""Offline verification of a certificate PDF (`certgen verify`, docs/verify.md).

Every check gives one verdict (pass, fail, or skip when its input was not given):

- signature: the PDF carries exactly one signature, in the name of the record's signatory, by an
  end-entity certificate made out to that name that may sign (and, where lab.yaml pins one, is
  that certificate);
- intact: the signature's digest matches, its /ByteRange (read from the signed revision) ends at
  the end of the file, and the gap it leaves holds exactly its /Contents as a hex string: no
  incremental update, restated dictionary or second signature follows (pdfsig's "total document
  signed", checked from the bytes, not from a size equation);
- trust: the signer's certificate chains to the CA given with --trust and is valid both at the
  signing time the signature carries and now (without --trust the check fails);
- revocation: the certificate id is not revoked in the lab's revocations.yaml or the registry's
  verify/index.json (skipped when none is given: the verdict is then VERIFIED EXCEPT);
- record: the attached record.json is present, within its size limit and schema-valid;
- record-sha256: its SHA-256 is the one printed in the verification block;
- content: what a reader sees is what the record says. Rendering is deterministic, so the file
  must be, byte for byte, the certificate this certgen renders from the attached record, signed
  by certgen with the signature it carries (certgen.render.sign.replay_signature). When the
  record names another software stack, every page's text in reading order and every drawn image
  must equal this certgen's rendering instead, with no action, script or extra annotation; the
  verdict says which comparison was made. Not compared (skip) when the signature does not hold:
  nothing then vouches for the record, and rendering a hostile one costs time;
- derivation: every Fluidity Score (with its gap and stutter), tier mean and the grade follow
  from the record's FPS figures under the rules file the record names (certgen.rules.verdict), and
  that file's SHA-256 is the one the record cites;
- with a bundle folder (read as `certgen check` reads it: only the files its card.yaml names,
  inside the bundle): captures (every capture the certificate cites, archived first captures
  included, has the record's SHA-256) and recomputed (every run's and first capture's figures,
  recomputed from the captures, equal the record's).

Nothing here reads the network. pyHanko's own log lines and tracebacks never reach the
terminal: a failure is one reason in plain words (digest mismatch, signed range does not cover
the file, untrusted signer, expired, not yet valid, revoked, record damaged).

Issue 40 added: the revisions after a timestamped signature read strictly (`revisions`), what
readers draw of them (`drawn`: PDFium and poppler pixel for pixel, pyHanko, pypdf and qpdf reading
the same page tree), the signer bound to one CN and the laboratory's O (or the record's
certificate), the registry's list as the source of issuance and freshness, and the CA's CRL
(--crl).

The package is cut by what each module checks (issue 43): `signature` (signature, intact, trust:
the signature and what it covers; `revisions` and `drawn` what may follow it), `seen` (what a reader sees of a PDF, which both the coverage
and the content checks compare), `content` (record-sha256's printed address and content: the
render), `derivation` (derivation, captures, recomputed: the record and the bundle),
`revocation` (revocation: the list, its signature, the id). `outcome` holds the Check and the
Verification every module returns (each detail a Said: a msgid of locales/*/verify.po and its
values, printed in the PDF's language or --lang's), `reading` verify's own inputs and their limits, and `verdict`
is the hub that runs the checks in order (`verify_pdf`).
"""
