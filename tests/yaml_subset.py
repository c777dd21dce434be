"""A reader for the part of YAML the CI examples are written in (PyYAML is not a dependency
of the project): block mappings and sequences by indentation, ``|`` block scalars, plain
and quoted scalars, comments.  Anything else (flow collections, anchors, ``>`` folding,
several documents) is refused with the line it is on, so that an example that leaves the
subset fails its test with a reason instead of being read wrongly.

Plain scalars stay strings but for integers (``timeout-minutes: 60``); ``on`` stays the
string it reads as (YAML 1.1 would make it ``true``).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any


class YamlSubsetError(ValueError):
    """The text leaves the subset this reader knows; the message names the line."""


@dataclass
class _Line:
    number: int
    indent: int
    text: str
    """Without its indentation, and (outside a block scalar) without a comment."""


_KEY = re.compile(r"""^(?P<key>"[^"]*"|'[^']*'|[^\s"'#][^:#]*?)\s*:(?:\s+(?P<value>.*))?$""")


def _strip_comment(text: str) -> str:
    """``text`` without a comment: a ``#`` at the start or after a blank, outside quotes."""
    quote = ""
    for i, ch in enumerate(text):
        if quote:
            if ch == quote:
                quote = ""
        elif ch in "\"'" and (i == 0 or text[i - 1] in " :-[{,"):
            quote = ch
        elif ch == "#" and (i == 0 or text[i - 1] in " \t"):
            return text[:i].rstrip()
    return text.rstrip()


def _scalar(text: str, number: int) -> Any:
    if text.startswith('"'):
        if not text.endswith('"') or len(text) < 2:
            raise YamlSubsetError(f"line {number}: unterminated double-quoted string")
        return json.loads(text)
    if text.startswith("'"):
        if not text.endswith("'") or len(text) < 2:
            raise YamlSubsetError(f"line {number}: unterminated single-quoted string")
        return text[1:-1].replace("''", "'")
    if text[:1] in ("[", "{", "&", "*", "!", ">", "%", "@", "`"):
        raise YamlSubsetError(f"line {number}: {text[:1]!r} is not in the subset this reader knows")
    if re.fullmatch(r"-?\d+", text):
        return int(text)
    return text


class _Reader:
    def __init__(self, text: str) -> None:
        self.raw = text.splitlines()
        self.i = 0

    def peek(self) -> _Line | None:
        """The next line that carries content (blank and comment lines skipped)."""
        while self.i < len(self.raw):
            raw = self.raw[self.i]
            if "\t" in raw[: len(raw) - len(raw.lstrip())]:
                raise YamlSubsetError(f"line {self.i + 1}: a tab in the indentation")
            body = _strip_comment(raw.strip())
            if body:
                if body in ("---", "..."):
                    raise YamlSubsetError(f"line {self.i + 1}: several documents")
                return _Line(self.i + 1, len(raw) - len(raw.lstrip(" ")), body)
            self.i += 1
        return None

    def block(self, indent: int) -> Any:
        """The node whose lines are indented by ``indent``."""
        line = self.peek()
        if line is None or line.indent != indent:
            raise YamlSubsetError(f"line {line.number if line else 'end'}: expected a block")
        if line.text == "-" or line.text.startswith("- "):
            return self.sequence(indent)
        return self.mapping(indent)

    def block_scalar(self, parent: int, number: int, header: str) -> str:
        if header not in ("|", "|-"):
            raise YamlSubsetError(f"line {number}: block scalar {header!r} is not in the subset")
        lines: list[str] = []
        at: int | None = None
        while self.i < len(self.raw):
            raw = self.raw[self.i]
            if raw.strip():
                indent = len(raw) - len(raw.lstrip(" "))
                if indent <= parent:
                    break
                at = indent if at is None else at
                if indent < at:
                    raise YamlSubsetError(f"line {self.i + 1}: less indented than its block")
                lines.append(raw[at:])
            else:
                lines.append("")
            self.i += 1
        while lines and not lines[-1]:
            lines.pop()
        return "\n".join(lines) + ("" if header == "|-" or not lines else "\n")

    def value(self, text: str | None, indent: int, number: int) -> Any:
        """The value after ``key:`` or ``-`` on a line of ``indent``."""
        if text:
            if text.startswith("|") or text.startswith(">"):
                return self.block_scalar(indent, number, text)
            return _scalar(text, number)
        nxt = self.peek()
        if nxt is None or nxt.indent < indent:
            return None
        if nxt.indent == indent and not (nxt.text == "-" or nxt.text.startswith("- ")):
            return None
        return self.block(nxt.indent)

    def mapping(self, indent: int, first: str | None = None) -> dict[str, Any]:
        out: dict[str, Any] = {}
        while True:
            line = self.peek()
            if first is not None:
                text, first = first, None
                assert line is not None
            elif line is None or line.indent != indent or line.text.startswith("- "):
                if line is not None and line.indent > indent:
                    raise YamlSubsetError(f"line {line.number}: unexpected indentation")
                return out
            else:
                text = line.text
            m = _KEY.match(text)
            if m is None:
                raise YamlSubsetError(f"line {line.number}: expected 'key: value', read {text!r}")
            key = str(_scalar(m["key"], line.number))
            if key in out:
                raise YamlSubsetError(f"line {line.number}: the key {key!r} twice")
            self.i += 1
            out[key] = self.value(m["value"], indent, line.number)

    def sequence(self, indent: int) -> list[Any]:
        out: list[Any] = []
        while True:
            line = self.peek()
            if (
                line is None
                or line.indent != indent
                or not (line.text == "-" or line.text.startswith("- "))
            ):
                if line is not None and line.indent > indent:
                    raise YamlSubsetError(f"line {line.number}: unexpected indentation")
                return out
            rest = line.text[1:].lstrip(" ")
            inner = indent + (len(line.text) - len(rest))
            if rest and not rest.startswith(("|", '"', "'")) and _KEY.match(rest):
                # "- key: value": a mapping whose first line starts after the dash
                out.append(self.mapping(inner, first=rest))
            else:
                self.i += 1
                out.append(self.value(rest, indent, line.number))


def load(text: str) -> Any:
    """The document ``text`` holds (YamlSubsetError where it leaves the subset)."""
    reader = _Reader(text)
    first = reader.peek()
    if first is None:
        return None
    doc = reader.block(first.indent)
    rest = reader.peek()
    if rest is not None:
        raise YamlSubsetError(f"line {rest.number}: unexpected indentation")
    return doc
