"""A notebook's JSON text with some cells' ``source`` replaced, every other byte kept.

The file is not dumped again: each cell's ``source`` value is located in the text (a
small scanner over the JSON, json's own decoder skipping the values in between) and
only the values of the changed cells are rewritten, in their own style: a list of
strings stays a list of one line per string, entries separated as most of the old
ones were (so `,\\n    ` in Jupyter's layout, whatever the indent, CRLF included); a
string stays a string. Lines that were already there are written as the file spelled
them. Whatever the layout (one line, any indent, keys in any order), the result is
checked to be the original notebook with only those sources changed.
"""

from __future__ import annotations

import copy
import json
import re
from collections import Counter
from collections.abc import Iterator
from json.decoder import scanstring

_SPACE = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


def replace_sources(text: str, data: dict, sources: dict[int, str]) -> str:
    """``text`` (the JSON of ``data``) with the source of each cell index in ``sources`` replaced.
    ValueError if the result would not be that notebook (a bug: nothing must be written then)."""
    spans = _source_spans(text)
    expected = copy.deepcopy(data)
    edits = []
    for index, source in sorted(sources.items()):
        start, end = spans[index]
        value, written = _written_like(text, start, end, source)
        expected["cells"][index]["source"] = value
        edits.append((start, end, written))
    parts, last = [], 0
    for start, end, written in edits:
        parts += [text[last:start], written]
        last = end
    result = "".join(parts) + text[last:]
    if json.loads(result) != expected:
        raise ValueError("the edited JSON is not the notebook with the new sources")
    return result


def _source_spans(text: str) -> list[tuple[int, int]]:
    """Where each cell's ``source`` value lies in the text (the last one, as json reads a repeated key)."""
    cells = [(start, end) for key, start, end in _members(text, _skip(text, 0)) if key == "cells"][-1]
    return [[(start, end) for key, start, end in _members(text, cell) if key == "source"][-1]
            for cell, _ in _elements(text, cells[0])]


def _skip(text: str, position: int) -> int:
    return _SPACE.match(text, position).end()


def _members(text: str, position: int) -> Iterator[tuple[str, int, int]]:
    """(key, value start, value end) of each member of the JSON object starting at ``position``."""
    position = _skip(text, position + 1)  # past "{"
    while text[position] != "}":
        key, position = scanstring(text, position + 1)
        start = _skip(text, _skip(text, position) + 1)  # past ":"
        _, end = _DECODER.raw_decode(text, start)
        yield key, start, end
        position = _skip(text, end)
        if text[position] == ",":
            position = _skip(text, position + 1)


def _elements(text: str, position: int) -> Iterator[tuple[int, int]]:
    """(start, end) of each element of the JSON array starting at ``position``."""
    position = _skip(text, position + 1)  # past "["
    while text[position] != "]":
        _, end = _DECODER.raw_decode(text, position)
        yield position, end
        position = _skip(text, end)
        if text[position] == ",":
            position = _skip(text, position + 1)


def _written_like(text: str, start: int, end: int, source: str) -> tuple[str | list[str], str]:
    """``source`` as the JSON value it becomes and the text of that value, in the style of text[start:end]."""
    ascii_only = text.isascii()
    if text[start] == '"':
        return source, json.dumps(source, ensure_ascii=ascii_only)
    lines = source.splitlines(keepends=True)  # as Jupyter splits a source into its list
    entries = list(_elements(text, start))
    if not lines or not entries:
        return lines, json.dumps(lines, ensure_ascii=ascii_only)
    spelled = {json.loads(text[a:b]): text[a:b] for a, b in entries}
    opening, closing = text[start:entries[0][0]], text[entries[-1][1]:end]
    between = Counter(text[b:a] for (_, b), (a, _) in zip(entries, entries[1:]))
    separator = between.most_common(1)[0][0] if between else "," + opening[1:]
    written = separator.join(spelled.get(line) or json.dumps(line, ensure_ascii=ascii_only) for line in lines)
    return lines, opening + written + closing
