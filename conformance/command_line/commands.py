"""What each ``acl-conformance`` subcommand does (the parser and ``main`` are in cli.py)."""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

from acl_conformance import reports
from acl_conformance.adapters.registry import AdapterResolutionError
from acl_conformance.conformance.gating import shards
from acl_conformance.conformance.session import adapter_options
from acl_conformance.conformance.session.supervise import Supervisor
from acl_conformance.conformance.traces import replay
from acl_conformance.conformance.traces import reproducer
from acl_conformance.conformance.traces import trace
from acl_conformance.conformance.traces import trace_schema
from acl_conformance.reference_impl.catalogue import CATALOGUE
from acl_conformance.reference_impl.catalogue import PROFILES
from acl_conformance.reference_impl.catalogue import Requirement
from acl_conformance.reference_impl.catalogue import for_profile

from . import hunt
from . import runner
from . import selfcheck
from . import staging
from .buildinfo import suite_info


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


def _list_variants() -> int:
    from acl_conformance.adapters.variants import CATALOGUE as VARIANTS

    width = max(len(v.name) for v in VARIANTS)
    for v in VARIANTS:
        where = ", ".join(
            f"{p}: {'mutant, ' + str(v.catches[p]) if v.is_mutant(p) else 'legal'}"
            for p in PROFILES
            if v.is_mutant(p) or v.is_legal(p)
        )
        sys.stdout.write(f"{v.name:{width}}  {where}\n")
    sys.stdout.write(f"{len(VARIANTS)} variants (selfcheck --variant NAME)\n")
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    if args.variants:
        return _list_variants()
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


def _backend(args: argparse.Namespace) -> dict[str, Any]:
    """The options run and hunt share: which backend, how it is judged and timed."""
    return dict(
        adapter=args.adapter,
        adapter_options=list(args.adapter_option),
        profile=args.profile,
        call_timeout=args.call_timeout,
    )


def cmd_run(args: argparse.Namespace) -> int:
    opts = runner.RunOptions(
        **_backend(args),
        examples=args.examples,
        jobs=args.jobs,
        devices_per_worker=args.devices_per_worker,
        seed=args.seed,
        report_dir=Path(args.report_dir),
        expectations=Path(args.expectations) if args.expectations else None,
        mode=args.mode,
        time_budget=args.time_budget,
        requirements=list(args.requirement),
        no_shrink=bool(args.no_shrink),
        verbose=bool(args.verbose),
        skips=Path(args.skips) if args.skips else None,
        flakes=Path(args.flakes) if args.flakes else None,
        pytest_args=[*shlex.split(args.pytest_args or ""), *args.rest],
        shard=args.shard,
        durations=Path(args.durations) if args.durations else None,
        given=set(getattr(args, "given", set())) | ({"pytest_args"} if args.rest else set()),
        replay=Path(args.replay) if args.replay else None,
    )
    return runner.run(opts, list(args.argv))


def cmd_hunt(args: argparse.Namespace) -> int:
    opts = hunt.HuntOptions(
        **_backend(args),
        minutes=args.minutes,
        workers=args.workers,
        database=args.database,
        finds=Path(args.finds) if args.finds else None,
    )
    return hunt.hunt(opts)


def _load_trace(path: str) -> trace.Trace:
    """A trace file checked against the trace schema first: a malformed trace is the
    suite's one-line error, never a call the backend is blamed for."""
    p = Path(path)
    try:
        doc = json.loads(p.read_text(encoding="utf-8"))
    except OSError as exc:
        raise runner.RunError(f"trace {p}: cannot be read ({exc.strerror or exc})") from None
    except UnicodeDecodeError:
        raise runner.RunError(f"trace {p}: not UTF-8 text") from None
    except ValueError as exc:
        raise runner.RunError(f"trace {p}: not JSON ({exc})") from None
    errors = trace_schema.errors(doc)
    if errors:
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        raise runner.RunError(f"trace {p}: not a valid trace: {errors[0]}{more}")
    try:
        return trace.load(p)
    except trace.TraceError as exc:
        raise runner.RunError(str(exc)) from None


def _options(items: list[str]) -> dict[str, str]:
    try:
        return adapter_options.parse(items, "--adapter-option")
    except ValueError as exc:
        raise runner.RunError(str(exc)) from None


def cmd_replay(args: argparse.Namespace) -> int:
    if args.call_timeout is not None and not args.call_timeout > 0:
        raise runner.RunError(f"--call-timeout {args.call_timeout:g}: must be more than 0 seconds")
    t = _load_trace(args.trace)
    adapter = args.adapter or t.adapter
    options = _options(args.adapter_option) if args.adapter else t.adapter_options
    try:
        return replay.replay(
            t, adapter, options, args.profile or t.profile, sys.stdout, args.call_timeout
        )
    except AdapterResolutionError as exc:
        raise runner.RunError(str(exc)) from None


def cmd_reproducer(args: argparse.Namespace) -> int:
    t = _load_trace(args.trace)
    out = Path(args.output)
    # Large data goes to a file beside the program (OUT.data), which it reads at its start.
    data_path = out.with_name(out.name.rsplit(".", 1)[0] + ".data") if args.output != "-" else None
    try:
        if data_path is None:
            source, data = reproducer.generate(t), b""
        else:
            source, data = reproducer.generate_files(t, str(data_path.resolve()))
    except reproducer.ReproducerError as exc:
        raise runner.RunError(str(exc)) from None
    if args.output == "-":
        sys.stdout.write(source)
        return 0
    try:
        out.write_text(source)
        if data and data_path is not None:
            data_path.write_bytes(data)
    except OSError as exc:
        raise runner.RunError(f"-o {out}: cannot be written ({exc.strerror or exc})") from None
    also = f" and its data file {data_path} ({len(data)} bytes)" if data else ""
    sys.stderr.write(f"wrote {out} ({len(source.splitlines())} lines){also} from {t.path}\n")
    return 0


def cmd_selfcheck(args: argparse.Namespace) -> int:
    from acl_conformance.adapters.variants import BY_NAME

    unknown = [n for n in args.variant if n not in BY_NAME]
    if unknown:
        raise runner.RunError(f"--variant {unknown[0]!r}: unknown; known: {', '.join(BY_NAME)}")
    out = Path(args.report_dir)
    try:
        where = staging.prepare(out)
    except staging.ReportDirError as exc:
        raise runner.RunError(str(exc)) from None
    try:
        return _selfcheck(args, where, out)
    finally:
        staging.discard(where)


def _selfcheck(args: argparse.Namespace, where: Path, out: Path) -> int:
    pairs = selfcheck.plan(args.profile or ("spec", "cann"), args.variant or None)
    mode = "the tests of each mutant's requirement" if args.targeted else "the whole suite"
    sys.stdout.write(
        f"checking the suite ({mode}) against {len(pairs)} (variant, profile) pairs, "
        f"{args.jobs} at a time; a row as each finishes\n"
    )
    sys.stdout.flush()

    def progress(k: int, n: int, r: selfcheck.VariantResult) -> None:
        sys.stdout.write(selfcheck.progress_row(k, n, r) + "\n")
        sys.stdout.flush()

    t0 = time.monotonic()
    with Supervisor() as sup:
        results = selfcheck.run(
            pairs,
            jobs=args.jobs,
            workers=args.workers,
            targeted=args.targeted,
            progress=progress,
            sup=sup,
        )
    wall = time.monotonic() - t0
    sys.stdout.write("\n" + selfcheck.table(results) + "\n")
    (where / "selfcheck.json").write_text(json.dumps(selfcheck.to_json(results), indent=1) + "\n")
    try:
        staging.commit(where, out, ("selfcheck.json",))
    except staging.ReportDirError as exc:
        raise runner.RunError(str(exc)) from None
    sys.stdout.write(
        f"{selfcheck.score(results)}; {wall:.0f} s in all; written {out / 'selfcheck.json'}\n"
    )
    for r in results:
        if not r.ok:
            sys.stdout.write(f"  {r.variant} ({r.profile}): {r.result}; {r.detail}\n")
    return 0 if all(r.ok for r in results) else 1


def _load_results(src: Path) -> dict[str, Any]:
    """A results document read from ``src`` (RunError, one line, when it is not one)."""
    try:
        results = json.loads(src.read_text(encoding="utf-8"))
    except OSError as exc:
        raise runner.RunError(f"{src}: cannot be read ({exc.strerror or exc})") from None
    except ValueError as exc:
        raise runner.RunError(f"{src}: not a results file ({exc})") from None
    if not (
        isinstance(results, dict)
        and str(results.get("schema", "")).startswith("acl-conformance-results/")
        and isinstance(results.get("results"), list)
    ):
        raise runner.RunError(
            f"{src}: not a results file (written by pytest --acl-results; "
            "expected schema acl-conformance-results/N)"
        )
    return results


def cmd_report(args: argparse.Namespace) -> int:
    """report.json/md/html and junit.xml from the results.json of a pytest run, or from the
    results.json of each shard of one run, merged."""
    sources = [Path(r) for r in args.results]
    out = Path(args.report_dir)
    # Each shard's trace files are named relative to its own results file: made relative
    # to the report folder before the documents are merged.
    docs = [
        (str(src), runner.rebase_traces(_load_results(src), src.parent, out)) for src in sources
    ]
    if len(docs) == 1:
        results = docs[0][1]
    else:
        try:
            results = shards.merge(docs)
        except shards.ShardError as exc:
            raise runner.RunError(str(exc)) from None
    names: tuple[str, ...] = ("report.json", "report.md", "report.html", "junit.xml")
    try:
        where = staging.prepare(out)
    except staging.ReportDirError as exc:
        raise runner.RunError(str(exc)) from None
    try:
        opts = runner.RunOptions(
            mode=args.mode or "ci", jobs=max(1, int(results.get("workers") or 1))
        )
        try:
            report = reports.build(results, suite_info(), runner.run_info(opts, args.argv))
        except (KeyError, TypeError, ValueError) as exc:
            raise runner.RunError(
                f"{sources[0] if len(sources) == 1 else 'the shards'}: not a complete results "
                f"file ({exc!r})"
            ) from None
        reports.write(report, where)
        if len(docs) > 1:
            # The merged run's results (its trace files named from the report folder): a
            # --durations file for the next sharded run.
            (where / "results.json").write_text(json.dumps(results, indent=1) + "\n")
            names = (*names, "results.json")
        staging.commit(where, out, names)
    except staging.ReportDirError as exc:
        raise runner.RunError(str(exc)) from None
    finally:
        staging.discard(where)
    for line in (reports.interrupted_text(report["run"]), reports.shards_text(report["run"])):
        if line:
            sys.stdout.write(line + "\n")
    sys.stdout.write(runner.answers_text(report, args.mode or "ci") + "\n")
    sys.stdout.write("reports: " + ", ".join(str(out / n) for n in names) + "\n")
    return runner.exit_status(report, args.mode) if args.mode else 0
