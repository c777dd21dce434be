"""The ``acl-conformance`` command line.

Subcommands that exist so far: ``list`` (the requirement catalogue).  Others
are added as they become real; none is registered before it can run.
"""

from __future__ import annotations

import argparse
import json
import sys
import textwrap
from collections.abc import Sequence

from acl_conformance.reference_impl.catalogue import CATALOGUE, PROFILES, Requirement, for_profile


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


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="acl-conformance",
        description="Conformance suite for the ACL runtime call aclrtMemcpyToSymbolAsync.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    p_list = sub.add_parser(
        "list", help="print the requirement catalogue (id, level, quoted sentence)"
    )
    p_list.add_argument("--profile", choices=PROFILES, help="only the requirements of this profile")
    p_list.add_argument("--format", choices=("text", "json"), default="text")
    p_list.set_defaults(func=cmd_list)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        rc: int = args.func(args)
    except BrokenPipeError:  # e.g. piped into head
        return 0
    return rc


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
