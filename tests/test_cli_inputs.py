"""Bad inputs to the command line: one line on stderr, exit 2, before anything runs; and
the report folder replaced whole."""

from __future__ import annotations

import errno
import json
import os
import subprocess
from pathlib import Path

import pytest

from acl_conformance.conformance.command_line import cli
from acl_conformance.conformance.command_line import runner
from acl_conformance.conformance.command_line import staging
from acl_conformance.conformance.session.suite_command import suite_command
from acl_conformance.conformance.traces import trace_schema

SCHEMA_FILE = Path(__file__).resolve().parent.parent / "reports" / "schema" / "trace-1.schema.json"


def _one_line_exit_2(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    rc = cli.main(list(argv))
    err = capsys.readouterr().err
    assert rc == 2, err
    assert err.count("\n") == 1 and err.endswith("\n"), err
    assert "Traceback" not in err
    return err


@pytest.fixture
def no_suite(monkeypatch: pytest.MonkeyPatch) -> None:
    """The suite must not run: what is tested is refused before it starts."""

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("the suite ran before the report folder was checked")

    monkeypatch.setattr(runner, "run_pytest", refuse)


def test_a_report_dir_through_a_file_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], no_suite: None
) -> None:
    f = tmp_path / "file"
    f.write_text("x")
    err = _one_line_exit_2(capsys, "run", "--report-dir", str(f / "x"))
    assert f"--report-dir {f / 'x'}: cannot be made" in err
    err = _one_line_exit_2(capsys, "selfcheck", "--report-dir", str(f / "x"))
    assert "--report-dir" in err


def test_a_report_dir_on_a_read_only_filesystem_is_found_before_the_run(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    no_suite: None,
) -> None:
    d = tmp_path / "report"
    d.mkdir()
    real_touch = Path.touch

    def read_only(self: Path, *args: object, **kwargs: object) -> None:
        if self.parent == d.resolve():
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(self))
        real_touch(self)

    # root writes anywhere: the read-only filesystem is the probe's answer
    monkeypatch.setattr(Path, "touch", read_only)
    err = _one_line_exit_2(capsys, "run", "--report-dir", str(d))
    assert f"--report-dir {d}: cannot be written (Read-only file system)" in err
    assert list(tmp_path.iterdir()) == [d]


def test_expectations_and_skips_that_are_not_utf8_are_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], no_suite: None
) -> None:
    bad = tmp_path / "known.txt"
    bad.write_bytes(b"test_kinds.py::x \xff\xfe reason\n")
    err = _one_line_exit_2(capsys, "run", "--expectations", str(bad))
    assert "not UTF-8" in err and str(bad) in err
    err = _one_line_exit_2(capsys, "run", "--skips", str(bad))
    assert "--skips" in err and "not UTF-8" in err


def test_an_expectations_line_cut_at_a_space_is_one_line_before_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], no_suite: None
) -> None:
    """Issue 34: a backslash-escaped space was cut there, the rest glued into the reason."""
    bad = tmp_path / "known.txt"
    bad.write_text(
        "# ours\nPAGEABLE-BLOCKS in test_bounds.py::test_x[async\\ pageable-g_arr1m]  early\n"
    )
    err = _one_line_exit_2(capsys, "run", "--expectations", str(bad))
    assert f"expectations file {bad}, line 2: 'test_bounds.py::test_x[async\\\\' is cut" in err
    assert "double quotes" in err


def test_conformance_mode_refuses_skips_and_pytest_arguments(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], no_suite: None
) -> None:
    skips = tmp_path / "skips.txt"
    skips.write_text("")
    for extra in (["--skips", str(skips)], ["--pytest-args=-x"], ["--", "-x"]):
        err = _one_line_exit_2(capsys, "run", "--mode", "conformance", *extra)
        assert "--mode conformance locks" in err


def test_pass_through_reaches_the_pytest_command_line(tmp_path: Path) -> None:
    # the command line only: --acl-skips and --acl-heartbeat belong to the plugin
    skips = tmp_path / "skips.txt"
    opts = runner.RunOptions(
        verbose=True, skips=skips, pytest_args=["-k", "bounds", "-x"], report_dir=tmp_path
    )
    cmd = runner.pytest_command(opts)
    assert "--acl-progress" in cmd and "-q" in cmd
    assert cmd[cmd.index("--acl-heartbeat") + 1] == str(runner.HEARTBEAT_S) == "30"
    assert cmd[cmd.index("--acl-skips") + 1] == str(skips.resolve())
    assert cmd[-3:] == ["-k", "bounds", "-x"]
    quiet = runner.pytest_command(runner.RunOptions(report_dir=tmp_path))
    assert "--acl-progress" not in quiet and "--acl-heartbeat" not in quiet
    assert "--acl-skips" not in quiet


def test_pytest_args_and_the_arguments_after_double_dash_are_passed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[runner.RunOptions] = []
    monkeypatch.setattr(runner, "run", lambda opts, argv: seen.append(opts) or 0)
    assert cli.main(["run", "--pytest-args", "-k 'a b'", "--", "-x", "--lf"]) == 0
    assert seen[0].pytest_args == ["-k", "a b", "-x", "--lf"]


def test_bringing_up_nodes_is_said_once() -> None:
    import io

    out = io.StringIO()
    runner._pass_through(
        ["bringing up nodes...\n", "bringing up nodes...\n", "\n", "..  [100%]\n"], out
    )
    assert out.getvalue().count("bringing up nodes") == 1
    assert out.getvalue().endswith("..  [100%]\n")


def _trace(calls: list[dict]) -> dict:
    return {
        "format": "acl-conformance-trace/1",
        "test": "test_x.py::test_y",
        "adapter": "sim",
        "profile": "spec",
        "requirement": "KIND-REJECTED",
        "message": "m",
        "adapter_options": {},
        "fixtures": [{"name": "g_u8", "size": 1, "address": 4096}],
        "capabilities": None,
        "invalid_handle": None,
        "calls": calls,
    }


GOOD_CALLS = [
    {"seq": 1, "name": "set_device", "args": {"device_id": 0}, "code": 0, "outputs": {}},
    {"seq": 2, "name": "malloc_host", "args": {"size": 64}, "code": 0, "outputs": {"host_ptr": 1}},
    {"seq": 3, "name": "write_host", "args": {"dst": 1, "data": {"hex": "00ff"}}, "code": 0},
]


def test_a_trace_whose_calls_lack_arguments_is_the_suites_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.trace.json"
    bad.write_text(json.dumps(_trace([{**GOOD_CALLS[0], "args": {}}, *GOOD_CALLS[1:]])))
    for argv in (["reproducer", str(bad), "-o", "-"], ["replay", str(bad)]):
        err = _one_line_exit_2(capsys, *argv)
        assert f"trace {bad}: not a valid trace" in err
        assert "calls[1] (set_device).args: 'device_id' is missing" in err
        assert "CRASH" not in err and "reproduced" not in err
    wrong_type = tmp_path / "wrong.trace.json"
    wrong_type.write_text(json.dumps(_trace([{**GOOD_CALLS[1], "args": {"size": [64]}}])))
    err = _one_line_exit_2(capsys, "replay", str(wrong_type))
    assert "calls[1] (malloc_host).args.size" in err
    not_utf8 = tmp_path / "latin.trace.json"
    not_utf8.write_bytes(b'{"calls": ["\xff"]}')
    assert "not UTF-8" in _one_line_exit_2(capsys, "replay", str(not_utf8))


def test_a_valid_trace_passes_the_schema_check(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = tmp_path / "good.trace.json"
    good.write_text(json.dumps(_trace(GOOD_CALLS)))
    assert trace_schema.errors(json.loads(good.read_text())) == []
    assert cli.main(["reproducer", str(good), "-o", str(tmp_path / "r.c")]) == 0
    assert "aclrtSetDevice" in (tmp_path / "r.c").read_text()


def test_the_shipped_trace_schema_is_the_contracts_and_agrees_with_jsonschema() -> None:
    jsonschema = pytest.importorskip("jsonschema")
    assert json.loads(SCHEMA_FILE.read_text()) == trace_schema.generate() == trace_schema.schema()
    schema = trace_schema.schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    samples = [
        _trace(GOOD_CALLS),
        _trace([{**GOOD_CALLS[0], "args": {}}]),
        _trace([{**GOOD_CALLS[1], "args": {"size": True}}]),
        _trace([{**GOOD_CALLS[2], "args": {"dst": "x", "data": {"hex": "00"}}}]),
        _trace([{**GOOD_CALLS[2], "args": {"dst": 1, "data": 5}}]),
        _trace([{**GOOD_CALLS[2], "args": {"dst": 1, "data": {"hex": 1}}}]),
        _trace([{**GOOD_CALLS[0], "name": "launch_missiles"}]),
        {**_trace(GOOD_CALLS), "profile": "cuda"},
        {"calls": "none"},
        [],
    ]
    for doc in samples:
        ours = trace_schema.errors(doc, schema)
        theirs = list(jsonschema.Draft202012Validator(schema).iter_errors(doc))
        assert bool(ours) == bool(theirs), (doc, ours, theirs)


def _results(tmp_path: Path) -> Path:
    out = tmp_path / "results.json"
    proc = subprocess.run(
        suite_command(
            "spec",
            hypothesis_profile=None,
            results=out,
            workers=0,
            rootdir=tmp_path,
            extra=["--acl-requirement", "INIT-CALLS", "--acl-examples", "1"],
        ),
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,
    )
    assert out.is_file(), proc.stdout[-2000:] + proc.stderr[-2000:]
    return out


def test_report_builds_the_reports_from_a_pytest_results_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from acl_conformance import reports

    results = _results(tmp_path)
    d = tmp_path / "rep"
    assert cli.main(["report", str(results), "--report-dir", str(d)]) == 0
    out = capsys.readouterr().out
    assert "verdict:" in out and str(d / "report.json") in out
    for name in ("report.json", "report.md", "report.html", "junit.xml"):
        assert (d / name).is_file(), name
    doc = json.loads((d / "report.json").read_text())
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.validate(doc, reports.schema(), cls=jsonschema.Draft202012Validator)
    assert [r["id"] for r in doc["requirements"]] == ["INIT-CALLS"]

    not_results = tmp_path / "other.json"
    not_results.write_text('{"a": 1}')
    assert "not a results file" in _one_line_exit_2(capsys, "report", str(not_results))
    assert "cannot be read" in _one_line_exit_2(capsys, "report", str(tmp_path / "none.json"))


def test_a_new_report_replaces_the_old_one_whole(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    d = tmp_path / "report"
    (d / "traces").mkdir(parents=True)
    (d / "traces" / "old.trace.json").write_text("{}")
    (d / "report.json").write_text('{"old": true}')
    (d / "notes.txt").write_text("mine")
    rc = cli.main(
        [
            "run",
            "--requirement",
            "INIT-CALLS",
            "--examples",
            "1",
            "--jobs",
            "1",
            "--report-dir",
            str(d),
        ]
    )
    out = capsys.readouterr().out
    assert rc == 0, out[-3000:]
    assert "verdict: CONFORMANT" in out
    assert not (d / "traces").exists()  # the old run's traces went with its report
    assert json.loads((d / "report.json").read_text())["verdict"] == "conformant"
    assert (d / "notes.txt").read_text() == "mine"  # not the report's: left alone
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report"]  # no staging left


def test_staged_paths_name_the_report_folder(tmp_path: Path) -> None:
    where = staging.prepare(tmp_path / "r")
    try:
        doc = {"a": [str(where / "traces" / "t.json")], "b": "elsewhere"}
        moved = staging.relocate(doc, where, tmp_path / "r")
        assert moved == {
            "a": [str((tmp_path / "r").resolve() / "traces" / "t.json")],
            "b": "elsewhere",
        }
    finally:
        staging.discard(where)


def test_verbose_skips_and_pytest_arguments_reach_pytest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    skips = tmp_path / "skips.txt"
    skips.write_text("test_kinds.py::test_any_int32_kind too slow on this board\n")
    d = tmp_path / "report"
    common = ["run", "--requirement", "KIND-ACCEPTED", "--examples", "1", "--jobs", "1"]
    rc = cli.main([*common, "--report-dir", str(d), "--verbose", "--skips", str(skips)])
    rc2 = cli.main([*common, "--report-dir", str(d), "--", "-k", "test_supported_kinds_copy"])
    out = capsys.readouterr().out
    first, second = out.split("reports: ", 1)
    assert rc == 0 and rc2 == 0, out[-3000:]
    assert "pass test_kinds.py::test_supported_kinds_copy[pinned-DEFAULT]" in first
    assert "skipped test_kinds.py::test_any_int32_kind" in first
    assert first.count("bringing up nodes") == 1
    # the second run into the same folder: only the -k selection, no names
    assert "4 passed in" in second and "pass test_kinds.py" not in second
    assert json.loads((d / "report.json").read_text())["run"]["tests"] == 4
    assert sorted(p.name for p in d.iterdir()) == sorted(staging.REPORT_ENTRIES[:-1])
