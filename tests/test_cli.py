"""acl-conformance list: the requirement catalogue on the command line."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from acl_conformance.conformance.command_line import selfcheck
from acl_conformance.conformance.command_line.cli import main
from acl_conformance.reference_impl.catalogue import CATALOGUE
from acl_conformance.reference_impl.catalogue import for_profile


def test_list_text_names_every_requirement(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    for r in CATALOGUE:
        assert f"{r.id}  [" in out
        assert f'"{r.quote[0][:40]}' in out.replace("\n    > ", " ")
    assert out.rstrip().endswith(f"{len(CATALOGUE)} requirements (all profiles)")


def test_list_json_per_profile(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list", "--profile", "cann", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["profile"] == "cann"
    ids = [r["id"] for r in doc["requirements"]]
    assert ids == [r.id for r in for_profile("cann")]
    overflow = next(r for r in doc["requirements"] if r["id"] == "BOUNDS-OVERFLOW")
    assert overflow["level"] == "MUST" and "500001" in overflow["cann"]
    assert overflow["quote"] and overflow["facts"]


def test_bad_profile_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["list", "--profile", "cuda"])
    assert exc.value.code == 2
    assert "invalid choice: 'cuda'" in capsys.readouterr().err


def test_no_subcommand_is_a_usage_error() -> None:
    with pytest.raises(SystemExit) as exc:
        main([])
    assert exc.value.code == 2


def test_console_script_runs() -> None:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "acl_conformance.conformance.command_line.cli",
            "list",
            "--profile",
            "spec",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert "KIND-ACCEPTED" in proc.stdout


def test_version_and_python_dash_m() -> None:
    from acl_conformance import __version__

    for cmd in (
        [sys.executable, "-m", "acl_conformance", "--version"],
        [sys.executable, "-m", "acl_conformance.conformance.command_line.cli", "--version"],
    ):
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.strip() == f"acl-conformance {__version__}"
    proc = subprocess.run(
        [sys.executable, "-m", "acl_conformance", "list", "--profile", "cann"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0 and "BOUNDS-OVERFLOW" in proc.stdout, proc.stderr


def test_every_option_of_every_subcommand_has_help_with_its_default() -> None:
    import argparse

    from acl_conformance.conformance.command_line.cli import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    assert set(sub.choices) >= {"run", "replay", "reproducer", "selfcheck", "list", "report"}
    for name, p in sub.choices.items():
        for action in p._actions:
            if isinstance(action, argparse._HelpAction):
                continue
            where = f"{name} {'/'.join(action.option_strings) or action.dest}"
            assert action.help, f"{where}: no help text"
            if action.option_strings and not action.required:
                assert "default" in action.help or action.dest == "variants", where
        text = p.format_help()
        for flag in ("--profile", "--report-dir"):
            if flag in text:
                assert "(default" in text, name


def test_list_variants_names_selfchecks_catalogue(capsys: pytest.CaptureFixture[str]) -> None:
    from acl_conformance.adapters.variants import CATALOGUE as VARIANTS

    assert main(["list", "--variants"]) == 0
    out = capsys.readouterr().out
    names = [line.split()[0] for line in out.splitlines()[:-1]]
    assert names == [v.name for v in VARIANTS]
    assert out.rstrip().endswith(f"{len(VARIANTS)} variants (selfcheck --variant NAME)")
    assert main(["selfcheck", "--variant", VARIANTS[0].name, "--variant", "no-such"]) == 2


def test_selfcheck_prints_a_row_per_variant_as_each_finishes(
    tmp_path, capsys: pytest.CaptureFixture[str]
) -> None:
    import re

    argv = ["selfcheck", "--targeted", "--profile", "spec", "--workers", "0"]
    argv += ["--variant", "bound-lt", "--variant", "bound-one-past", "--report-dir", str(tmp_path)]
    rc = main(argv)
    out = capsys.readouterr().out
    assert rc == 0, out
    rows = [line for line in out.splitlines() if line.startswith("[")]
    assert len(rows) == 2, out
    for k, row in enumerate(rows, 1):
        assert re.match(rf"\[{k}/2\] bound-(lt|one-past) \(spec\)\s+caught\s+\d+\.\d s$", row), row
    assert {r.split()[1] for r in rows} == {"bound-lt", "bound-one-past"}
    assert selfcheck.HEAD in out and " verdict " not in selfcheck.HEAD
    doc = json.loads((tmp_path / "selfcheck.json").read_text())
    assert doc["schema"] == selfcheck.SCHEMA == "acl-conformance-selfcheck/2"
    assert [d["variant"] for d in doc["results"]] == ["bound-lt", "bound-one-past"]
    assert [d["result"] for d in doc["results"]] == ["caught", "caught"]
    assert [p.name for p in tmp_path.parent.iterdir() if "partial" in p.name] == []


def test_a_selfcheck_json_of_schema_1_is_read() -> None:
    """selfcheck.json as an earlier suite wrote it (schema 1: the bare list, each variant
    result called ``verdict``) reads as one of schema 2."""
    r = selfcheck.VariantResult(
        "bound-lt", "mutant", "spec", "BOUNDS-END-EXACT", "caught", True, first_test="t"
    )
    new = json.loads(json.dumps(selfcheck.to_json([r])))
    assert new["schema"] == selfcheck.SCHEMA and new["results"][0]["result"] == "caught"
    old = [{("verdict" if k == "result" else k): v for k, v in new["results"][0].items()}]
    assert "result" not in old[0] and old[0]["verdict"] == "caught"
    assert selfcheck.from_json(old) == selfcheck.from_json(new) == [r]


@pytest.mark.parametrize(
    "not_passing,caught",
    [
        ({"A": "fail", "B": "fail"}, True),
        ({"A": "fail", "B": "flaky"}, True),  # a timing bug whose replay missed: still failing
        ({"A": "fail"}, False),  # one bug not found
        ({"A": "fail", "B": "fail", "C": "fail"}, False),  # a requirement wrongly charged
        ({"A": "fail", "B": "fail", "C": "unknown"}, False),  # one left undecided
        ({"A": "fail", "B": "timeout"}, False),  # a hang is not these bugs' failure
    ],
)
def test_a_combination_is_caught_when_exactly_its_requirements_fail(
    not_passing: dict[str, str], caught: bool
) -> None:
    assert selfcheck.combination_caught(not_passing, ("A", "B")) is caught
