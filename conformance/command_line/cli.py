"""The ``acl-conformance`` command line.

- ``run``: the suite against a backend; reports, a per-requirement table, a verdict;
- ``list``: the requirement catalogue;
- ``replay``: a saved failing trace re-run against any backend, judged call by call;
- ``reproducer``: a saved trace as a standalone C program for a vendor's runtime;
- ``selfcheck``: the suite against its own mutants and legal variants;
- ``report``: report.json/md/html and junit.xml from a results.json of a pytest run.

Exit status: 0 success (conformant), 1 a finding (not conformant, a mismatch, a
surviving mutant), 2 a usage or set-up error, said in one line; 130 / 143 when
interrupted by SIGINT / SIGTERM (pytest and its workers stopped; the report of what
finished is written, marked interrupted).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from typing import NoReturn

from acl_conformance import __version__
from acl_conformance.conformance.session import settings
from acl_conformance.conformance.session.supervise import Interrupted
from acl_conformance.reference_impl.catalogue import PROFILES

from . import commands
from . import runner


class _Given(argparse.Action):
    """Stores the value and remembers that the option was given (for locked modes)."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        if self.nargs == 0:
            values = self.const
        if isinstance(getattr(namespace, self.dest, None), list) and self.default == []:
            values = [*getattr(namespace, self.dest), values]
        setattr(namespace, self.dest, values)
        namespace.given = {*getattr(namespace, "given", set()), self.dest}


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is the one line that says what is wrong (exit 2);
    --help still shows the usage."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="acl-conformance",
        description="Conformance suite for the ACL runtime call aclrtMemcpyToSymbolAsync.",
    )
    parser.add_argument("--version", action="version", version=f"acl-conformance {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    p_run = sub.add_parser(
        "run",
        help="run the suite against a backend and write the reports",
        usage="%(prog)s [options] [-- PYTEST-ARGS ...]",
        description="Run the conformance suite against a backend (default: the bundled "
        "simulator); write report.json, report.md, report.html and junit.xml.  Exit status: "
        "in ci mode the gate's (0: nothing changed against the expectations file), in "
        "conformance mode the verdict's (0: conformant); 1 otherwise (and for a run that did "
        "not reach its end: a worker lost, an internal error, a report not written whole), 2 "
        "on a usage or set-up error, 130 / 143 when interrupted (SIGINT / SIGTERM; the report of what finished is "
        "written, marked interrupted).  Arguments after -- go to pytest (ci mode).",
    )
    p_run.add_argument(
        "--adapter",
        default="sim",
        action=_Given,
        help="backend: sim, an entry point name, or module:attribute (default: sim)",
    )
    p_run.add_argument(
        "--adapter-option",
        default=[],
        action=_Given,
        metavar="KEY=VALUE",
        help="an option for the backend's adapter (repeatable; default: none)",
    )
    p_run.add_argument(
        "--profile",
        default="spec",
        choices=PROFILES,
        action=_Given,
        help="what the backend is judged against: spec (the text) or cann (CANN's exact "
        "codes and order of checks) (default: spec)",
    )
    p_run.add_argument(
        "--examples",
        type=int,
        action=_Given,
        metavar="N",
        help="Hypothesis examples per stateful test (default: the budget of the standard "
        "Hypothesis settings profile)",
    )
    p_run.add_argument(
        "--jobs",
        type=int,
        action=_Given,
        metavar="N",
        help="pytest-xdist workers (default: the CPUs this process may use, its affinity "
        f"and cgroup quota; here {runner.default_jobs()}; allowed in conformance mode)",
    )
    p_run.add_argument(
        "--devices-per-worker",
        type=int,
        action=_Given,
        metavar="K",
        help="give each worker K devices of its own: worker I gets devices I*K .. I*K+K-1, "
        "shown to it as 0 .. K-1 (default --jobs: the usable CPUs or the devices // K, "
        "whichever is fewer; K=1: the two-device tests are not supported; default: "
        "every worker sees every device)",
    )
    p_run.add_argument(
        "--seed",
        type=int,
        action=_Given,
        metavar="S",
        help="seed every Hypothesis test from S and its id (default: derandomised)",
    )
    p_run.add_argument(
        "--report-dir",
        default=runner.DEFAULT_REPORT_DIR,
        action=_Given,
        metavar="DIR",
        help="where the reports and traces go; a new report replaces the old one whole "
        f"(default: {runner.DEFAULT_REPORT_DIR})",
    )
    p_run.add_argument(
        "--expectations",
        action=_Given,
        metavar="FILE",
        help="known failures, one per line (ci mode; default: none)",
    )
    p_run.add_argument(
        "--skips",
        action=_Given,
        metavar="FILE",
        help="tests not to run, in the expectations file's format (ci mode; default: none)",
    )
    p_run.add_argument(
        "--mode",
        default="ci",
        choices=("conformance", "ci"),
        action=_Given,
        help="conformance: locked options, exit status the verdict's; ci: every option, "
        "exit status the gate's (default: ci)",
    )
    p_run.add_argument("--call-timeout", action=_Given, **settings.CALL_TIMEOUT_OPTION)  # type: ignore[arg-type]
    p_run.add_argument(
        "--time-budget",
        type=float,
        action=_Given,
        metavar="MINUTES",
        help="stop the run after MINUTES and report what finished (the rest unknown, not "
        "reached; the gate fails), so that a CI job ends cleanly before its own timeout "
        "(default: no limit)",
    )
    p_run.add_argument(
        "--requirement",
        default=[],
        action=_Given,
        metavar="ID",
        help="run and report only the tests of this requirement (repeatable; ci mode; "
        "default: all)",
    )
    p_run.add_argument(
        "--no-shrink",
        action=_Given,
        nargs=0,
        const=True,
        default=False,
        help="report each failure as first found, without shrinking it (faster, longer "
        "counterexamples; default: shrink)",
    )
    p_run.add_argument(
        "-v",
        "--verbose",
        action=_Given,
        nargs=0,
        const=True,
        default=False,
        help=f"name each test as it finishes and each test still running after "
        f"{runner.HEARTBEAT_S} s (default: pytest's dots)",
    )
    p_run.add_argument(
        "--flakes",
        action=_Given,
        metavar="FILE",
        help="flaky failures the gate accepts, in the expectations file's format: a "
        "requirement or test whose failure did not fail again when its trace was replayed "
        "against a fresh backend (ci mode; default: none)",
    )
    p_run.add_argument(
        "--pytest-args",
        action=_Given,
        metavar='"ARGS"',
        help='more pytest arguments, one string, e.g. --pytest-args="-k bounds -x" (or give '
        "them after --; ci mode; default: none)",
    )
    # Shards (issue 22): a deterministic part of the suite per job, merged by `report`.
    p_run.add_argument(
        "--shard",
        action=_Given,
        metavar="K/N",
        help="run part K of N of the suite's tests (the N parts together are the tests of "
        "the run without --shard); merge the N results.json with 'acl-conformance report' "
        "(allowed in conformance mode: merged, the shards are the run; default: the whole suite)",
    )
    p_run.add_argument(
        "--durations",
        action=_Given,
        metavar="RESULTS.json",
        help="with --shard: balance the parts by the seconds each test took in this earlier "
        "run's results.json (default: the same number of tests in each part)",
    )
    p_run.add_argument(
        "--replay",
        action=_Given,
        metavar="DIR",
        help="first replay every find a bug hunt saved in DIR (its --database folder): the "
        "gate fails on any that still fails (ci mode; default: none)",
    )
    p_run.set_defaults(func=commands.cmd_run)

    # the bug hunt (hunt.py): HypoFuzz, an optional extra
    p_hunt = sub.add_parser(
        "hunt",
        help="hunt for bugs that need more search: the machines under HypoFuzz",
        description="Run the suite's stateful machines under HypoFuzz for --minutes, in "
        "--workers processes sharing Hypothesis' example database (--database: a directory, "
        "on shared storage for several hosts, or redis://...).  Same adapters, profiles, "
        "capability skips and judgement as run.  Each failure is saved in DATABASE/finds "
        "(trace, C reproducer, identity); replay them with run --replay DATABASE.  Needs "
        'HypoFuzz: pip install "acl-conformance[hunt]".  Exit 1 when finds are saved, 0 '
        "when none, 2 on a usage error.",
    )
    p_hunt.add_argument("--adapter", default="sim", help="backend (default: sim)")
    p_hunt.add_argument(
        "--adapter-option",
        default=[],
        action="append",
        metavar="KEY=VALUE",
        help="an option for the backend's adapter (repeatable; default: none)",
    )
    p_hunt.add_argument(
        "--profile", default="spec", choices=PROFILES, help="the profile (default: spec)"
    )
    p_hunt.add_argument("--minutes", type=float, default=10.0, help="how long (default: 10)")
    p_hunt.add_argument("--workers", type=int, default=1, help="processes (default: 1)")
    p_hunt.add_argument(
        "--database",
        default="acl-conformance-hunt",
        metavar="DIR",
        help="the example database and finds folder, or redis://... (default: "
        "acl-conformance-hunt)",
    )
    p_hunt.add_argument(
        "--finds",
        metavar="DIR",
        help="where finds go (default: DATABASE/finds; needed with Redis)",
    )
    p_hunt.add_argument("--call-timeout", **settings.CALL_TIMEOUT_OPTION)  # type: ignore[arg-type]
    p_hunt.set_defaults(func=commands.cmd_hunt)

    p_replay = sub.add_parser(
        "replay",
        help="re-run a saved failing trace against a backend, judged call by call",
        description="Re-run the calls of a trace file (written for every failure into "
        "<report dir>/traces) against a backend (default: the one that was recorded) and "
        "print each call's result beside what the profile allows.  The trace is checked "
        "against the trace schema first.  Exit 1 when the failure reproduces, 0 when it "
        "does not, 2 on a usage error.",
    )
    p_replay.add_argument("trace", metavar="TRACE", help="a .trace.json file")
    p_replay.add_argument("--adapter", help="backend (default: the recorded one)")
    p_replay.add_argument(
        "--adapter-option",
        default=[],
        action="append",
        metavar="KEY=VALUE",
        help="an option for --adapter (repeatable; default: the recorded ones, without --adapter)",
    )
    p_replay.add_argument(
        "--profile", choices=PROFILES, help="judge by this profile (default: the recorded one)"
    )
    p_replay.add_argument(
        "--call-timeout",
        default=settings.CALL_TIMEOUT_SECONDS,
        **settings.CALL_TIMEOUT_OPTION,  # type: ignore[arg-type]
    )
    p_replay.set_defaults(func=commands.cmd_replay)

    p_repro = sub.add_parser(
        "reproducer",
        help="write a saved failing trace as a standalone C program",
        description="Write the calls of a trace file as a C program (ACL headers, aclInit ... "
        "aclFinalize, every call checked against what the profile allows, each mismatch "
        "printed) that a vendor compiles against their runtime.  The trace is checked "
        "against the trace schema first.",
    )
    p_repro.add_argument("trace", metavar="TRACE", help="a .trace.json file")
    p_repro.add_argument(
        "-o", "--output", required=True, metavar="OUT.c", help="the C file (- for stdout)"
    )
    p_repro.set_defaults(func=commands.cmd_reproducer)

    p_self = sub.add_parser(
        "selfcheck",
        help="run the suite against its catalogue of mutants and legal variants",
        description="The suite's proof of power: the whole suite runs against every mutant of "
        "the simulator, as a vendor runs it, and the requirement the mutant breaks must fail; "
        "every legal variant must pass.  Prints a row per variant as each finishes, the "
        "matrix and the mutation score, writes selfcheck.json; exit 1 if a mutant survives "
        "or a legal variant fails.  'acl-conformance list --variants' names the variants.",
    )
    p_self.add_argument(
        "--report-dir",
        default=runner.DEFAULT_REPORT_DIR,
        metavar="DIR",
        help=f"where selfcheck.json goes (default: {runner.DEFAULT_REPORT_DIR})",
    )
    p_self.add_argument(
        "--jobs", type=int, default=1, metavar="N", help="variants checked at a time (default: 1)"
    )
    p_self.add_argument(
        "--workers",
        type=int,
        default=2,
        metavar="N",
        help="pytest-xdist workers of each run (0: none; default: 2)",
    )
    p_self.add_argument(
        "--targeted",
        action="store_true",
        help="run each mutant against the tests of its requirement only (fast), "
        "not the whole suite (default: the whole suite)",
    )
    p_self.add_argument(
        "--profile",
        action="append",
        choices=PROFILES,
        help="only this profile (repeatable; default: both)",
    )
    p_self.add_argument(
        "--variant",
        action="append",
        default=[],
        metavar="NAME",
        help="only this variant (repeatable; see list --variants; default: all)",
    )
    p_self.set_defaults(func=commands.cmd_selfcheck)

    p_list = sub.add_parser(
        "list",
        help="print the requirement catalogue (id, level, quoted sentence), or the variants",
        description="Print the requirement catalogue, or with --variants the names of "
        "selfcheck's mutants and legal variants.",
    )
    p_list.add_argument(
        "--profile",
        choices=PROFILES,
        help="only the requirements of this profile (default: all profiles)",
    )
    p_list.add_argument(
        "--format",
        choices=("text", "json"),
        default="text",
        help="the catalogue as text or JSON (default: text)",
    )
    p_list.add_argument(
        "--variants",
        action="store_true",
        help="print selfcheck's variants instead (name, and per profile what it is)",
    )
    p_list.set_defaults(func=commands.cmd_list)

    p_report = sub.add_parser(
        "report",
        help="build report.json/md/html and junit.xml from a results.json, or merge shards'",
        description="Build the reports of a run made with pytest directly (pytest --pyargs "
        "acl_conformance.conformance.suite --acl-results RESULTS.json ...) from its results "
        "file; given the results.json of each shard of a run (run --shard K/N), merge them "
        "into the reports of the one run.  Shards that do not belong together (another "
        "suite version, adapter, profile, seed or option; a shard missing or given twice) "
        "are a usage error (exit 2).",
    )
    p_report.add_argument(
        "results",
        metavar="RESULTS.json",
        nargs="+",
        help="the file --acl-results wrote, or one per shard",
    )
    p_report.add_argument(
        "--mode",
        choices=("conformance", "ci"),
        help="exit status as run's in this mode: ci the gate's, conformance the verdict's "
        "(default: 0 once the reports are written)",
    )
    p_report.add_argument(
        "--report-dir",
        default=runner.DEFAULT_REPORT_DIR,
        metavar="DIR",
        help=f"where the reports go (default: {runner.DEFAULT_REPORT_DIR})",
    )
    p_report.set_defaults(func=commands.cmd_report)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    raw = list(sys.argv[1:] if argv is None else argv)
    # everything after "--" goes to pytest as it is (run, ci mode)
    own, rest = (raw[: raw.index("--")], raw[raw.index("--") + 1 :]) if "--" in raw else (raw, [])
    parser = build_parser()
    args = parser.parse_args(own)
    if rest and args.command != "run":
        parser.error(f"arguments after -- are for pytest, only with run: {' '.join(rest)}")
    args.argv = raw
    args.rest = rest
    try:
        rc: int = args.func(args)
    except BrokenPipeError:  # e.g. piped into head
        return 0
    except runner.RunError as exc:
        sys.stderr.write(f"acl-conformance {args.command}: {exc}\n")
        return exc.status
    except Interrupted as exc:
        written = " (the report of what finished is written)" if exc.reported else ""
        sys.stderr.write(f"acl-conformance {args.command}: interrupted ({exc}){written}\n")
        return exc.exit_status or 1
    except KeyboardInterrupt:
        sys.stderr.write(f"acl-conformance {args.command}: interrupted (SIGINT)\n")
        return 130
    except Exception as exc:  # a MemoryError too: one line, never a traceback, never a pass
        tb = exc.__traceback__
        while tb is not None and tb.tb_next is not None:
            tb = tb.tb_next
        where = (
            f" (in {Path(tb.tb_frame.f_code.co_filename).name} {tb.tb_frame.f_code.co_name})"
            if tb
            else ""
        )
        what = " ".join(str(exc).split())[:300]
        ended = "; the run did not reach its end" if args.command == "run" else ""
        sys.stderr.write(
            f"acl-conformance {args.command}: {type(exc).__name__}{': ' + what if what else ''}"
            f"{where}{ended}\n"
        )
        return 1
    return rc


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
