"""acl-conformance list: the requirement catalogue on the command line."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from acl_conformance.conformance.cli import main
from acl_conformance.reference_impl.catalogue import CATALOGUE, for_profile


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
        [sys.executable, "-m", "acl_conformance.conformance.cli", "list", "--profile", "spec"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert "KIND-ACCEPTED" in proc.stdout
