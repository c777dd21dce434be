"""The JSON Schema of trace files, and a check of a trace against it before it is used.

A trace names each call's arguments (``CallRecord.to_json`` in reference_impl/record.py,
read by :meth:`~.trace.Trace.from_json`).  One that does not (a call without its arguments, a
string where a handle goes) would make ``replay`` call the backend wrongly and blame
it, or make ``reproducer`` stop in a traceback: it is refused first, in one line,
as the suite's error.

The schema ships with the package (``reports/schema/trace-1.schema.json``) and is
made from the contract's call table (:func:`generate`; a test keeps the file equal to
it).  jsonschema is not a runtime dependency, so :func:`errors` checks the part of
JSON Schema the file uses (type, const, enum, required, properties,
additionalProperties, items, allOf, if/then, minimum).
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

from acl_conformance.reference_impl.calls import CALLS
from acl_conformance.reference_impl.catalogue import PROFILES

from .trace import TRACE_FORMAT

SCHEMA_FILE = "trace-1.schema.json"

_DATA = {
    "type": "object",
    "required": ["at", "size", "stored", "sha256"],
    "properties": {
        "at": {"type": "integer", "minimum": 0},
        "size": {"type": "integer", "minimum": 0},
        "stored": {"type": "integer", "minimum": 0},
        "zlib": {"type": "boolean"},
        "sha256": {"type": "string"},
    },
    "additionalProperties": False,
}
"""Bytes kept in the trace's data file: where (``at``, ``stored`` bytes, zlib-compressed
or not), how many once read back (``size``) and their SHA-256."""

_BYTES = {
    "oneOf": [
        {
            "type": "object",
            "required": ["hex"],
            "properties": {"hex": {"type": "string"}},
            "additionalProperties": False,
        },
        {
            "type": "object",
            "required": ["data"],
            "properties": {"data": _DATA},
            "additionalProperties": False,
        },
    ]
}

_VALUE = {"oneOf": [{"type": ["integer", "boolean", "string", "null"]}, {"$ref": "#/$defs/bytes"}]}


def _arg(name: str, ctype: str) -> dict[str, Any]:
    """What a recorded argument holds: text for a C string, bytes (as hex, or kept in the
    data file) for the data written into host memory, a number (NULL as 0 or null) for everything else."""
    if ctype == "const char*":
        return {"type": ["string", "null"]}
    if name == "data":
        return {"$ref": "#/$defs/bytes"}
    return {"type": ["integer", "null"]}


def generate() -> dict[str, Any]:
    """The trace schema, from the contract's call table (each call's parameters required)."""
    per_call = [
        {
            "if": {"properties": {"name": {"const": name}}},
            "then": {
                "properties": {
                    "args": {
                        "required": [p.name for p in spec.params],
                        "properties": {p.name: _arg(p.name, p.ctype) for p in spec.params},
                    }
                }
            },
        }
        for name, spec in CALLS.items()
        if spec.params
    ]
    call = {
        "type": "object",
        "required": ["seq", "name", "args"],
        "properties": {
            "seq": {"type": "integer", "minimum": 0},
            "name": {"enum": list(CALLS)},
            "args": {"type": "object", "additionalProperties": {"$ref": "#/$defs/value"}},
            "code": {"type": ["integer", "null"]},
            "outputs": {"type": "object", "additionalProperties": {"$ref": "#/$defs/value"}},
            "thread": {"type": "integer"},
            "started": {"type": "number"},
            "ended": {"type": "number"},
            "error": {"type": ["string", "null"]},
        },
        "allOf": per_call,
    }
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://acl-conformance/schema/trace-1.schema.json",
        "title": "acl-conformance trace (one failing test's calls)",
        "type": "object",
        "required": ["calls"],
        "properties": {
            "format": {"const": TRACE_FORMAT},
            "test": {"type": "string"},
            "adapter": {"type": "string"},
            "adapter_options": {"type": "object", "additionalProperties": {"type": "string"}},
            "profile": {"enum": list(PROFILES)},
            "status": {"type": "string"},
            "requirement": {"type": ["string", "null"]},
            "message": {"type": "string"},
            "fixtures": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["name", "size", "address"],
                    "properties": {
                        "name": {"type": "string"},
                        "size": {"type": "integer", "minimum": 0},
                        "address": {"type": "integer", "minimum": 0},
                    },
                },
            },
            "capabilities": {"type": ["object", "null"]},
            "invalid_handle": {"type": ["integer", "null"]},
            "data_file": {"type": "string"},
            "calls": {"type": "array", "items": {"$ref": "#/$defs/call"}},
        },
        "$defs": {"value": _VALUE, "bytes": _BYTES, "call": call},
    }


def schema() -> dict[str, Any]:
    """The trace schema shipped with the package."""
    text = (
        resources.files("acl_conformance.reports")
        .joinpath("schema")
        .joinpath(SCHEMA_FILE)
        .read_text("utf-8")
    )
    doc: dict[str, Any] = json.loads(text)
    return doc


_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,),
    "array": (list,),
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "null": (type(None),),
}


def _is(value: Any, name: str) -> bool:
    if isinstance(value, bool) and name in ("integer", "number"):
        return False
    return isinstance(value, _TYPES[name])


def errors(doc: Any, schema_doc: dict[str, Any] | None = None) -> list[str]:
    """Where ``doc`` breaks the trace schema: ``path: what`` lines, empty if it is valid."""
    root = schema() if schema_doc is None else schema_doc
    out: list[str] = []
    _check(doc, root, root, "trace", out)
    return out


def _check(v: Any, s: dict[str, Any], root: dict[str, Any], at: str, out: list[str]) -> None:
    if "$ref" in s:
        node: Any = root
        for part in s["$ref"].removeprefix("#/").split("/"):
            node = node[part]
        s = node
    types = s.get("type")
    if types is not None:
        names = [types] if isinstance(types, str) else list(types)
        if not any(_is(v, t) for t in names):
            out.append(f"{at}: {json.dumps(v)[:40]} is not {' or '.join(names)}")
            return
    if "const" in s and v != s["const"]:
        out.append(f"{at}: {json.dumps(v)[:40]} is not {json.dumps(s['const'])}")
    if "enum" in s and v not in s["enum"]:
        out.append(f"{at}: {json.dumps(v)[:40]} is not one of the known values")
    if "minimum" in s and _is(v, "number") and v < s["minimum"]:
        out.append(f"{at}: {v} is less than {s['minimum']}")
    if "oneOf" in s:
        fits = sum(not _sub(v, alt, root, at) for alt in s["oneOf"])
        if fits != 1:
            out.append(f"{at}: {json.dumps(v)[:40]} is not a value a trace holds")
    for part in s.get("allOf", []):
        _check(v, part, root, at, out)
    if "if" in s and not _sub(v, s["if"], root, at):
        _check(v, s.get("then", {}), root, at, out)
    if isinstance(v, dict):
        _check_object(v, s, root, at, out)
    if isinstance(v, list) and "items" in s:
        for k, item in enumerate(v):
            name = f" ({item['name']})" if isinstance(item, dict) and "name" in item else ""
            _check(item, s["items"], root, f"{at}[{k + 1}]{name}", out)


def _check_object(
    v: dict[str, Any], s: dict[str, Any], root: dict[str, Any], at: str, out: list[str]
) -> None:
    for key in s.get("required", []):
        if key not in v:
            out.append(f"{at}: {key!r} is missing")
    props = s.get("properties", {})
    extra = s.get("additionalProperties", True)
    for key, value in v.items():
        if key in props:
            _check(value, props[key], root, f"{at}.{key}", out)
        elif extra is False:
            out.append(f"{at}: {key!r} is not expected")
        elif isinstance(extra, dict):
            _check(value, extra, root, f"{at}.{key}", out)


def _sub(v: Any, s: dict[str, Any], root: dict[str, Any], at: str) -> list[str]:
    found: list[str] = []
    _check(v, s, root, at, found)
    return found
