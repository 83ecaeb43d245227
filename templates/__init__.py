"""jinja2 templates: generated code blocks and HTML reports, rendered by name.

The templates ship inside the package (package data), so a plain, non-editable
install has them; jinja2 is imported only when something is rendered.
"""

from __future__ import annotations

import io
import textwrap
import tokenize
from functools import lru_cache
from pathlib import Path

FOLDER = Path(__file__).parent
WIDTH = 100  # of generated code lines, as rendered (four-space indentation)


@lru_cache(maxsize=None)
def _environment():
    import jinja2

    environment = jinja2.Environment(
        loader=jinja2.FileSystemLoader(FOLDER),
        autoescape=jinja2.select_autoescape(("html", "html.j2")),
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        undefined=jinja2.StrictUndefined,
    )
    environment.filters["wrap"] = wrap
    return environment


def render(name: str, **context) -> str:
    return _environment().get_template(name).render(**context)


def _items(tokens: list, opening) -> tuple[list[int], int]:
    """The columns of the commas between ``opening`` and its closing bracket, and the closing bracket's."""
    depth, commas, in_lambda = 0, [], False  # a lambda's parameters: their commas separate no items
    for token in tokens[tokens.index(opening):]:
        depth += token.string in "([{" and token.type == tokenize.OP
        depth -= token.string in ")]}" and token.type == tokenize.OP
        if depth == 1 and token.string in ("lambda", ":"):
            in_lambda = token.string == "lambda"
        if depth == 1 and token.string == "," and not in_lambda:
            commas.append(token.start[1])
        if depth == 0:
            return commas, token.start[1]
    raise ValueError(f"unbalanced brackets in {tokens[0].line!r}")


def wrap(code: str, column: int = 0) -> str:
    """One line of code starting at ``column``, its first call's arguments (or list's or dict's items) moved to
    lines of their own when it is longer than WIDTH: all on one continuation line if they fit, else one to a line."""
    if "\n" in code or column + len(code) <= WIDTH:
        return code
    tokens = list(tokenize.generate_tokens(io.StringIO(code).readline))
    # The outermost calls with arguments (or list and dict displays: a subscript's bracket is neither).
    openings, depth = [], 0
    for before, token, after in zip([None, *tokens], tokens, [*tokens[1:], None]):
        if depth == 0 and after is not None and after.string not in ")]}" and (token.string in "({" or (
                token.string == "[" and not (before and (before.type == tokenize.NAME or before.string in ")]")))):
            openings.append((_items(tokens, token)[1] - token.start[1], -len(openings), token))
        depth += token.string in "([{" and token.type == tokenize.OP
        depth -= token.string in ")]}" and token.type == tokenize.OP
    # The one holding the most, unless what follows its closing still runs past WIDTH and another fits.
    wrapped = [_wrap_at(code, tokens, opening, column) for *_, opening in sorted(openings, reverse=True)]
    return next((text for text in wrapped if all(column + len(line) <= WIDTH for line in text.splitlines())),
                wrapped[0]) if wrapped else code


def _wrap_at(code: str, tokens: list, opening, column: int) -> str:
    """``code`` with the items of the bracket ``opening`` on lines of their own."""
    commas, closing = _items(tokens, opening)
    inner = tokens[tokens.index(opening) + 1]
    if opening.string == "(" and inner.string == "[" and not commas:  # `f([...])`: the list's items
        commas, inner_closing = _items(tokens, inner)
        if code[inner_closing + 1:closing].strip() == "":
            opening, closing = inner, inner_closing
        else:
            commas = []
    start = opening.start[1] + 1
    arguments = [code[a:b].strip() for a, b in zip([start, *(c + 1 for c in commas)], [*commas, closing])]
    head, tail, indent = code[:start], code[closing:], " " * 4  # the caller indents it all by `column`
    if column + len(indent) + len(", ".join(arguments)) + len(tail) <= WIDTH:
        return f"{head}\n{indent}{', '.join(arguments)}{tail}"
    return f"{head}\n" + ",\n".join(textwrap.indent(wrap(argument, column + 4), indent) for argument in arguments) + tail
