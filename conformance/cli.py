"""The ``acl-conformance`` command line.

- ``run``: the suite against a backend; reports, a per-requirement table, a verdict;
- ``list``: the requirement catalogue;
- ``replay``: a saved failing trace re-run against any backend, judged call by call;
- ``reproducer``: a saved trace as a standalone C program for a vendor's runtime;
- ``selfcheck``: the suite against its own mutants and legal variants.

Exit status: 0 success (conformant), 1 a finding (not conformant, a mismatch, a
surviving mutant), 2 a usage or set-up error, said in one line.
"""

from __future__ import annotations

import argparse
import json
import sys
import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from acl_conformance.reference_impl.catalogue import CATALOGUE, PROFILES, Requirement, for_profile

from . import runner


def _requirement_json(r: Requirement, profile: str | None) -> dict[str, object]:
    return {
        "id": r.id,
        "clause": r.clause,
        "title": r.title,
        "levels": {p: lv.value for p, lv in r.levels.items()},
        **({"level": r.levels[profile].value} if profile else {}),
        "quote": list(r.quote),
        "cann": r.cann,
        "facts": list(r.facts),
        "silent": r.silent,
        "ambiguity": list(r.ambiguity),
        "reason": r.reason,
    }


def _level_text(r: Requirement, profile: str | None) -> str:
    if profile:
        return r.levels[profile].value
    return "/".join(f"{p}:{lv.value}" for p, lv in r.levels.items())


def cmd_list(args: argparse.Namespace) -> int:
    reqs = for_profile(args.profile) if args.profile else CATALOGUE
    if args.format == "json":
        doc = {
            "profile": args.profile,
            "requirements": [_requirement_json(r, args.profile) for r in reqs],
        }
        json.dump(doc, sys.stdout, indent=2, ensure_ascii=False)
        sys.stdout.write("\n")
        return 0
    out = sys.stdout
    for r in reqs:
        out.write(f"{r.id}  [{_level_text(r, args.profile)}]  ({r.clause})\n")
        out.write(textwrap.indent(textwrap.fill(r.title, 96), "    ") + "\n")
        for q in r.quote:
            out.write(textwrap.indent(textwrap.fill(f'"{q}"', 96), "    > ") + "\n")
        if r.silent:
            out.write(textwrap.indent(textwrap.fill("silent: " + r.silent, 96), "    ") + "\n")
    which = f"profile {args.profile}" if args.profile else "all profiles"
    out.write(f"{len(reqs)} requirements ({which})\n")
    return 0


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


def cmd_run(args: argparse.Namespace) -> int:
    opts = runner.RunOptions(
        adapter=args.adapter,
        adapter_options=list(args.adapter_option),
        profile=args.profile,
        examples=args.examples,
        jobs=args.jobs,
        seed=args.seed,
        report_dir=Path(args.report_dir),
        expectations=Path(args.expectations) if args.expectations else None,
        mode=args.mode,
        call_timeout=args.call_timeout,
        given=set(getattr(args, "given", set())),
    )
    return runner.run(opts, list(args.argv))


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="acl-conformance",
        description="Conformance suite for the ACL runtime call aclrtMemcpyToSymbolAsync.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    p_run = sub.add_parser(
        "run",
        help="run the suite against a backend and write the reports",
        description="Run the conformance suite against a backend (default: the bundled "
        "simulator); write report.json, report.md, report.html and junit.xml; exit 0 when "
        "conformant, 1 when not, 2 on a usage or set-up error.",
    )
    p_run.add_argument("--adapter", default="sim", action=_Given, help="backend (default sim)")
    p_run.add_argument(
        "--adapter-option",
        default=[],
        action=_Given,
        metavar="KEY=VALUE",
        help="an option for the backend's adapter (repeatable)",
    )
    p_run.add_argument("--profile", default="spec", choices=PROFILES, action=_Given)
    p_run.add_argument("--examples", type=int, action=_Given, metavar="N")
    p_run.add_argument("--jobs", type=int, action=_Given, metavar="N", help="pytest-xdist workers")
    p_run.add_argument("--seed", type=int, action=_Given, metavar="S")
    p_run.add_argument(
        "--report-dir", default=runner.DEFAULT_REPORT_DIR, action=_Given, metavar="DIR"
    )
    p_run.add_argument(
        "--expectations", action=_Given, metavar="FILE", help="known failures (ci mode)"
    )
    p_run.add_argument("--mode", default="ci", choices=("conformance", "ci"), action=_Given)
    p_run.add_argument(
        "--call-timeout",
        type=float,
        action=_Given,
        metavar="SECONDS",
        help="per-call limit before a backend is reported as TIMEOUT (default 60)",
    )
    p_run.set_defaults(func=cmd_run)
    p_list = sub.add_parser(
        "list", help="print the requirement catalogue (id, level, quoted sentence)"
    )
    p_list.add_argument("--profile", choices=PROFILES, help="only the requirements of this profile")
    p_list.add_argument("--format", choices=("text", "json"), default="text")
    p_list.set_defaults(func=cmd_list)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    raw = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    args = parser.parse_args(raw)
    args.argv = raw
    try:
        rc: int = args.func(args)
    except BrokenPipeError:  # e.g. piped into head
        return 0
    except runner.RunError as exc:
        sys.stderr.write(f"acl-conformance {args.command}: {exc}\n")
        return 2
    except KeyboardInterrupt:
        sys.stderr.write(f"acl-conformance {args.command}: interrupted\n")
        return 2
    return rc


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
