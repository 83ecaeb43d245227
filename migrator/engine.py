"""One source text in, the migrated text and its findings out.

``migrate`` runs the enabled rewrite families in catalogue order on one parse of the
file, re-parses the result (a result that does not parse is a bug: the file is left
untouched), and is idempotent. Files that mention none of the words a family
handles are never parsed, and libcst is imported only when some file needs it.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass, field, replace

from migrator.findings import FileError, Finding
from rewrites import FAMILIES, Family

# What a Python 2 line a Python 3 parser chokes on usually looks like.
_PYTHON2_HINTS = re.compile(r"^\s*(print\s+[^\s(=]|exec\s+[\"']|except\s+[\w.]+\s*,\s*\w+\s*:)|`|\b0[0-7]+\b|\bur[\"']")


@dataclass
class Result:
    source: str
    findings: list[Finding] = field(default_factory=list)


def families_for(source: str, enabled: Collection[str]) -> list[Family]:
    """The families that could have anything to do in ``source``: a cheap text test."""
    if "tensorflow" not in source:
        return []
    return [
        family
        for family in FAMILIES
        if any(rule.id in enabled for rule in family.rules) and any(word in source for word in family.triggers)
    ]


def migrate(source: str, path: str, enabled: Collection[str], keras: str = "tf_keras") -> Result:
    """Migrate one file's text. Raises FileError when it cannot be parsed or rewritten safely.

    ``keras``: how generated code imports Keras, "tf_keras" or "tf.keras".
    """
    families = families_for(source, enabled)
    if not families:
        return Result(source)
    import libcst as cst
    from libcst.codemod import CodemodContext

    module = _parse(source, path)
    findings: list[Finding] = []
    texts = [source]  # the code each family was given, while an earlier family changed it
    for family in families:
        rewrite = family.load()(CodemodContext(filename=path), enabled, path, keras)
        try:
            module = rewrite.transform_module(module)
        except Exception as error:  # a bug in a rewrite must not cost the user their file
            raise FileError(path, f"internal error in rewrite {family.module!r}: {error!r}; file left unchanged") from error
        findings.extend(_in_original_lines(rewrite.findings, texts))
        if family is not families[-1]:
            texts.append(module.code)
    new_source = module.code
    if new_source != source:
        try:
            cst.parse_module(new_source)
        except cst.ParserSyntaxError as error:
            raise FileError(path, f"internal error: the migrated code does not parse ({error.message}); file left unchanged")
    return Result(new_source, sorted(findings))


def _in_original_lines(findings: list[Finding], texts: list[str]) -> list[Finding]:
    """Findings of a family given ``texts[-1]`` with lines counted in ``texts[0]``, the user's file:
    an import an earlier family added must not shift them."""
    for before, after in reversed(list(zip(texts, texts[1:]))):
        if before != after:
            origin = _line_origin(before, after)
            findings = [replace(finding, line=origin(finding.line)) for finding in findings]
    return findings


def _line_origin(before: str, after: str):
    """A function from a line number of ``after`` to the line of ``before`` it came from (inserted: the next one)."""
    import difflib

    opcodes = difflib.SequenceMatcher(None, before.splitlines(), after.splitlines(), autojunk=False).get_opcodes()

    def origin(line: int) -> int:
        for _, i1, i2, j1, j2 in opcodes:
            if j1 <= line - 1 < j2:
                return i1 + min(line - 1 - j1, max(i2 - i1 - 1, 0)) + 1
        return line

    return origin


def _parse(source: str, path: str):
    import libcst as cst

    try:
        return cst.parse_module(source)
    except cst.ParserSyntaxError as error:
        message, line, col = _python_syntax_error(source) or (error.message, error.raw_line, error.raw_column + 1)
        line_text = source.splitlines()[line - 1] if 0 < line <= len(source.splitlines()) else ""
        hint = " (this looks like Python 2: run 2to3 first)" if _PYTHON2_HINTS.search(line_text) else ""
        reason = message.splitlines()[0][:200] if message else "syntax error"
        raise FileError(path, f"not valid Python 3: {reason}{hint}", line, col) from None


def _python_syntax_error(source: str) -> tuple[str, int, int] | None:
    """CPython's own account of a syntax error: clearer than the parser's token list."""
    import ast

    try:
        ast.parse(source)
    except SyntaxError as error:
        return error.msg, error.lineno or 0, error.offset or 0
    except (ValueError, RecursionError):
        return None
    return None
