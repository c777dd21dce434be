"""The requirement catalogue against the spec text it quotes."""

from __future__ import annotations

import re

import pytest

from acl_conformance.reference_impl import catalogue as cat
from acl_conformance.reference_impl.spec_text import NORMATIVE_SENTENCES
from acl_conformance.reference_impl.spec_text import PRODUCT_TABLE_HEADING
from acl_conformance.reference_impl.spec_text import SPEC_TEXT

# The facts file ends with 15 numbered ambiguities; each must be settled by a requirement.
AMBIGUITIES = range(1, 16)

CLAUSES = (
    "kinds",
    "bounds",
    "effect",
    "pinned",
    "pageable",
    "streams",
    "symbols",
    "devices",
    "hygiene",
    "concurrency",
    "companion",
)
"""Areas of the spec, in the order of DESIGN.md "What is specified" (plus the calls
around the main one): every requirement belongs to one, and each has requirements."""

STRUCTURAL = {
    "aclrtMemcpyToSymbolAsync",
    "Applicable Products",
    "Product",
    "Supported",
    "Function",
    "Prototype",
    "1",
    "Parameters",
    "Parameter",
    "Input/Output",
    "Description",
    "symbol",
    "src",
    "count",
    "offset",
    "kind",
    "stream",
    "Input",
    "Returns",
    "Restrictions",
}
"""Headings and table labels of the page: they say nothing about behaviour."""


def spec_sentences() -> list[str]:
    """Split the page into sentences and table cells."""
    out = []
    for line in SPEC_TEXT.replace("|", "\n").split("\n"):
        line = line.strip()
        if not line or set(line) <= set("-√☓ "):
            continue
        out.extend(re.split(r"(?<=\.)\s+(?=[A-Z0-9])", line))
    return out


def test_every_piece_of_the_page_is_classified() -> None:
    unknown = [s for s in spec_sentences() if s not in STRUCTURAL and s not in NORMATIVE_SENTENCES]
    assert not unknown, f"sentences of the spec text neither normative nor structural: {unknown}"


def test_every_normative_sentence_is_quoted_by_a_requirement() -> None:
    quoted = {q for r in cat.CATALOGUE for q in r.quote}
    missing = [s for s in NORMATIVE_SENTENCES if s not in quoted]
    assert not missing, f"spec sentences no requirement quotes: {missing}"


@pytest.mark.parametrize("req", cat.CATALOGUE, ids=lambda r: r.id)
def test_quotes_are_verbatim(req: cat.Requirement) -> None:
    assert req.quote, f"{req.id} quotes nothing"
    for q in req.quote:
        assert q in SPEC_TEXT, f"{req.id} quotes {q!r}, which is not in the spec text"
        assert q in NORMATIVE_SENTENCES or q == PRODUCT_TABLE_HEADING


@pytest.mark.parametrize("req", cat.CATALOGUE, ids=lambda r: r.id)
def test_requirement_is_well_formed(req: cat.Requirement) -> None:
    assert re.fullmatch(r"[A-Z][A-Z0-9]*(-[A-Z0-9]+)+", req.id), req.id
    assert req.clause in CLAUSES
    assert req.profiles and req.profiles <= set(cat.PROFILES)
    assert all(isinstance(lv, cat.Level) for lv in req.levels.values())
    assert req.title.endswith((".", ":")), f"{req.id}: title should be a sentence"
    if req.level("spec") is cat.Level.MAY:
        # What the text leaves open must say so, and say what the suite accepts.
        assert req.silent, f"{req.id} is MAY under spec but does not say where the text is silent"
    if req.cann is not None:
        assert req.facts, f"{req.id} states CANN behaviour without citing the facts"


def test_ids_are_unique_and_resolvable() -> None:
    ids = [r.id for r in cat.CATALOGUE]
    assert len(ids) == len(set(ids))
    for i in ids:
        assert cat.requirement(i).id == i
    with pytest.raises(KeyError, match="unknown requirement id 'NOPE-1'"):
        cat.requirement("NOPE-1")


def test_every_clause_has_requirements() -> None:
    for clause in CLAUSES:
        assert any(r.clause == clause for r in cat.CATALOGUE), clause


@pytest.mark.parametrize("n", AMBIGUITIES)
def test_every_ambiguity_of_the_facts_is_a_requirement(n: int) -> None:
    reqs = [r for r in cat.CATALOGUE if n in r.ambiguity]
    assert reqs, f"ambiguity {n} of cann-runtime-facts.md is not settled by any requirement"
    for r in reqs:
        # An ambiguity is settled with a reason: what is open, or why the level.
        assert r.silent or r.reason or r.cann, r.id


def test_design_clauses_are_covered() -> None:
    """The areas of docs/design.md, "What is specified", each map to specific requirement
    IDs."""
    expected = {
        "kinds": {"KIND-ACCEPTED", "KIND-REJECTED", "KIND-OUT-OF-ENUM"},
        "bounds": {"BOUNDS-END-EXACT", "BOUNDS-PAST-END", "BOUNDS-OVERFLOW"},
        "effect": {"EFFECT-BYTES", "EFFECT-NO-STRAY", "EFFECT-NEIGHBOURS"},
        "pinned": {"PINNED-ASYNC", "PINNED-COMPLETE-AFTER-SYNC", "PINNED-SOURCE-WINDOW"},
        "pageable": {"PAGEABLE-BLOCKS", "PAGEABLE-SOURCE-REUSE"},
        "streams": {"STREAM-FIFO", "STREAM-UNORDERED", "STREAM-EVENT-ORDER", "STREAM-NULL-DEFAULT"},
        "symbols": {"SYMBOL-NULL", "SYMBOL-UNREGISTERED", "SYMBOL-INTERIOR"},
        "devices": {"DEVICE-INSTANCE"},
        "hygiene": {"HYGIENE-NO-WRITE", "HYGIENE-NO-ENQUEUE", "HYGIENE-STREAM-USABLE"},
    }
    for clause, ids in expected.items():
        got = {r.id for r in cat.CATALOGUE if r.clause == clause}
        assert ids <= got, f"{clause}: missing {ids - got}"


def test_profile_selection() -> None:
    for p in cat.PROFILES:
        reqs = cat.for_profile(p)
        assert reqs and all(r.applies_to(p) for r in reqs)
    with pytest.raises(ValueError, match="unknown profile"):
        cat.for_profile("cuda")


def test_cann_exact_codes_are_stated_where_cann_is_stricter() -> None:
    """Where CANN fixes a code the text leaves open, the requirement says which."""
    for rid, code in [
        ("BOUNDS-OVERFLOW", "500001"),
        ("BOUNDS-PAST-END", "100000"),
        ("SYMBOL-UNREGISTERED", "107043"),
        ("SYMBOL-INTERIOR", "107043"),
        ("STREAM-INVALID-HANDLE", "107017"),
        ("STREAM-FOREIGN-DEVICE", "107003"),
        ("SYNC-TIMEOUT", "507046"),
    ]:
        text = cat.requirement(rid).cann
        assert text is not None and code in text, rid
