"""The text of a reproducer: its header, the prelude, the variables, ``main``.

``main`` initializes ACL, declares the variables to a library that wants them
(``-DACL_CONFORMANCE_REGISTER_VARIABLES``), puts into each variable the contents
the recorded run first read there (the baselines), then runs the body
:class:`~.reproducer_program.Program` wrote and prints the number of mismatches.
"""

from __future__ import annotations

from collections.abc import Iterator
from importlib import resources

from acl_conformance import __version__
from acl_conformance.conformance.authoring.fixture_pattern import c_expression
from acl_conformance.conformance.authoring.fixture_pattern import fixture_pattern
from acl_conformance.reference_impl.calls import NameOf
from acl_conformance.reference_impl.calls import render_call
from acl_conformance.reference_impl.constants import MemcpyKind

from .reproducer_program import Program
from .reproducer_program import ReproducerError
from .reproducer_program import c_string
from .trace import Trace

PRELUDE_FILE = "reproducer_prelude.c"
"""The C every program starts with (checks, gates, ``garbage``), shipped next to this module."""

_PREP = 1
"""The address standing for ``prep`` (the buffer baselines are copied from) when spelled."""

Baselines = dict[tuple[int, str], bytes]
"""(device, variable) -> the contents the recorded run first read there."""


def prelude() -> str:
    """The text of :data:`PRELUDE_FILE`, copied verbatim into every program."""
    return resources.files(__package__).joinpath(PRELUDE_FILE).read_text("utf-8")


def source(trace: Trace, prog: Program, baselines: Baselines, data_file: str | None = None) -> str:
    """The whole program: ``prog``'s body run after the variables are prepared; the arrays
    too large to embed are read from ``data_file`` (the program's first argument names
    another; ReproducerError when there are some and no file is named)."""
    init = render_call("init", {})
    lines = [
        "/*",
        f" * Reproducer written by acl-conformance {__version__} from the trace",
        f" *   {trace.path}",
        f" * test {trace.test}, profile {trace.profile}, recorded on adapter {trace.adapter};",
        f" * it failed requirement {trace.requirement or '(none)'}.",
        " *",
        " * Every call is checked against what the profile allows after the recorded calls",
        " * before it; each mismatch is printed.  Exit status: the number of mismatches.",
        " *",
        " * Build against a library exporting the ACL C functions, e.g.:",
        " *   cc -DACL_CONFORMANCE_REGISTER_VARIABLES -I<dir with acl/acl.h> repro.c -l<lib> -lpthread",
        " * against CANN: compile this file as the ASC source holding main (see the README).",
        " */",
        "",
        prelude(),
        "/* The device variables, as the recorded backend declared them. */",
    ]
    inits = {
        str(f["name"]): fixture_pattern(k, int(f["size"])) for k, f in enumerate(trace.fixtures)
    }
    for f in trace.fixtures:
        lines.append(f"__gm__ unsigned char {f['name']}[{int(f['size'])}];")
    prep = list(_preparation(prog, trace, baselines, inits))  # may embed data: first
    lines.append("")
    lines += prog.decls
    lines.append("")
    lines += prog.data
    lines += ["", "int main(int argc, char **argv)" if prog.loads else "int main(void)", "{"]
    lines.append("    aclError ret;")
    if prog.loads:
        if data_file is None:
            raise ReproducerError(
                f"trace {trace.path}: the program needs a data file beside it for its "
                f"{prog.file_size} bytes of large data: write it to a file (-o FILE)"
            )
        lines += [
            "    /* The large data (sources, expected bytes, starting contents), from the data",
            "       file written beside this program, or the file named as its argument. */",
            f"    const char *data_path = argc > 1 ? argv[1] : {c_string(data_file)};",
            f"    unsigned char *data_file = read_data_file(data_path, {prog.file_size});",
            "    if (data_file == NULL) return 100;",
            *(f"    {name} = data_file + {at};" for name, at in prog.loads),
        ]
    lines += [
        f"    ret = {init};",
        f'    if (ret != ACL_SUCCESS) {{ printf("{init} returned %d\\n", (int)ret); return 100; }}',
        "#ifdef ACL_CONFORMANCE_REGISTER_VARIABLES",
    ]
    for f in trace.fixtures:
        lines.append(
            f'    if (aclConformanceRegisterVariable({f["name"]}, "{f["name"]}", sizeof {f["name"]}) != 0) '
            f'{{ printf("cannot register {f["name"]}\\n"); return 100; }}'
        )
    lines += [
        "#endif",
        "    /* The variables' contents when the recorded run first read them. */",
        *prep,
        "    /* The recorded calls. */",
        *prog.body,
        "",
        '    printf("%d mismatch(es)\\n", mismatches);',
        f"    {render_call('finalize', {})};",
        "    return mismatches > 100 ? 100 : mismatches;",
        "}",
        "",
    ]
    return "\n".join(lines)


def _named(table: dict[int, str]) -> NameOf:
    return lambda _ctype, value: table.get(value)


def _preparation(
    prog: Program, trace: Trace, baselines: Baselines, inits: dict[str, bytes]
) -> Iterator[str]:
    """The statements that put each baseline into its variable before the calls."""
    if not baselines:
        return
    yield "    {"
    yield "        unsigned char *prep = NULL;"
    biggest = max(len(v) for v in baselines.values())
    yield f"        prep = malloc({biggest});"
    yield '        if (prep == NULL) { printf("out of memory\\n"); return 100; }'
    for (device, name), data in sorted(baselines.items()):
        k = next(i for i, f in enumerate(trace.fixtures) if f["name"] == name)
        symbol = int(trace.fixtures[k]["address"])
        yield f"        ret = {render_call('set_device', {'device_id': device}, exact=True)};"
        if data == inits[name]:
            yield (
                f"        for (size_t i = 0; i < {len(data)}; i++) "
                f"prep[i] = {c_expression(k, 'i')};"
            )
        else:
            src = prog.embed(data, f"the starting contents of {name}")
            yield f"        memcpy(prep, {src}, {len(data)});"
        copy = render_call(
            "memcpy_to_symbol",
            {
                "symbol": symbol,
                "src": _PREP,
                "count": len(data),
                "offset": 0,
                "kind": MemcpyKind.ACL_MEMCPY_HOST_TO_DEVICE,
            },
            _named({symbol: f"&{name}", _PREP: "prep"}),
            exact=True,
        )
        yield f"        if (ret == ACL_SUCCESS) ret = {copy};"
        yield (
            f'        if (ret != ACL_SUCCESS) {{ printf("cannot prepare {name} on device {device}: '
            f'%d\\n", (int)ret); return 100; }}'
        )
    yield "        free(prep);"
    yield "    }"
