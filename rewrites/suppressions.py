"""Inline suppressions, in the ruff style: `# tf-migrate: ignore[TFM302]` or a bare `# tf-migrate: ignore`.

A comment suppresses the findings of the rules it names (ids or prefixes, comma-separated; bare: every rule)
that point at its line or at any line of the statement they point at (a simple statement, all its lines; a
compound statement, the lines of its header). A suppressed finding is not reported, and a suppressed rewrite
is not made: the rewrites ask ``Suppressions.covers`` where they decide. Only a file whose text holds
``MARK`` pays for this: ``of(text)`` is None for the others, and no rewrite then asks for a position.
The rule page of TFM001, the diagnostic `tf-migrate --check` gives for a comment that suppresses nothing:

TFM001 unused-suppression

What it does: with --check, reports a `# tf-migrate: ignore` comment, or an id or prefix in its brackets,
that suppresses no finding (as ruff's RUF100 reports an unused noqa).
Why: a suppression left behind after the code changed would silently hide the next finding on that line.
What may differ: nothing: the code is unchanged; remove the comment, or the ids it no longer needs.

Before:

    import tensorflow as tf

    server = tf.distribute.Server(cluster)  # tf-migrate: ignore[TFM101]

After:

    import tensorflow as tf

    server = tf.distribute.Server(cluster)  # tf-migrate: ignore[TFM101]

Finding:

    3:41: TFM001 [manual] TFM101 in `# tf-migrate: ignore[TFM101]` suppresses nothing here: remove it
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from migrator.findings import Finding, Safety

MARK = "tf-migrate:"  # any spacing after it: the comment pattern decides
_COMMENT = re.compile(r"#\s*tf-migrate:\s*ignore(?:\[([^\]]*)\])?(?![\w\[])")
UNUSED_RULE = "TFM001"


@dataclass(frozen=True)
class Comment:
    line: int
    col: int                       # from 1
    selectors: tuple[str, ...]     # ids or prefixes; () for a bare ignore: every rule
    text: str

    def selects(self, rule: str) -> str | None:
        """The selector of this comment that covers ``rule`` ("" for a bare ignore), or None."""
        if not self.selectors:
            return ""
        return next((selector for selector in self.selectors if rule.startswith(selector)), None)


class Suppressions:
    """The suppression comments of one text, and the lines of the statement each line belongs to."""

    def __init__(self, text: str) -> None:
        self.comments = _comments(text)
        self._spans = _statement_spans(text) if self.comments else {}

    def comments_for(self, rule: str, line: int) -> list[Comment]:
        """The comments that suppress a finding of ``rule`` pointing at ``line``."""
        first, last = self._spans.get(line, (line, line))
        return [comment for comment in self.comments
                if first <= comment.line <= last and comment.selects(rule) is not None]

    def covers(self, rule: str, line: int) -> bool:
        return bool(self.comments_for(rule, line))

    def unused(self, path: str, suppressed: Iterable[Finding]) -> list[Finding]:
        """A TFM001 finding for each comment, or selector of one, that suppressed none of ``suppressed``."""
        used: dict[Comment, set[str]] = {}
        for finding in suppressed:
            for comment in self.comments_for(finding.rule, finding.line):
                used.setdefault(comment, set()).add(comment.selects(finding.rule))
        findings = []
        for comment in self.comments:
            idle = [selector for selector in comment.selectors or ("",) if selector not in used.get(comment, ())]
            if idle:
                what = f"{', '.join(idle)} in `{comment.text}`" if comment.selectors else f"`{comment.text}`"
                findings.append(Finding(path, comment.line, comment.col, UNUSED_RULE, Safety.MANUAL,
                                        f"{what} suppresses nothing here: remove it"))
        return findings


def of(text: str) -> Suppressions | None:
    """The suppressions of ``text``; None (at the cost of a text search) when it has none."""
    return _parsed(text) if MARK in text else None


@lru_cache(maxsize=8)
def _parsed(text: str) -> Suppressions:
    return Suppressions(text)


def _comments(text: str) -> list[Comment]:
    found = []
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.COMMENT and (match := _COMMENT.search(token.string)):
                selectors = tuple(part.strip().upper() for part in (match.group(1) or "").split(",") if part.strip())
                found.append(Comment(token.start[0], token.start[1] + match.start() + 1, selectors,
                                     "# " + match.group(0).lstrip("#").strip()))
    except (tokenize.TokenError, SyntaxError):  # not Python: the engine says so
        return []
    return found


def _statement_spans(text: str) -> dict[int, tuple[int, int]]:
    """Line -> (first, last) line of the innermost statement holding it: a simple statement whole, a compound
    statement's header (from its decorators to the line before its body)."""
    try:
        module = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return {}
    lines = text.splitlines()
    spans = []
    for node in ast.walk(module):
        if isinstance(node, ast.stmt):
            first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", ()))])
            body = getattr(node, "body", None)
            last = node.end_lineno if not body else _header_end(node.lineno, body[0].lineno, lines)
            spans.append((first, last))
    by_line: dict[int, tuple[int, int]] = {}
    for first, last in sorted(spans, key=lambda span: span[0] - span[1]):  # the widest first, the innermost last
        for line in range(first, last + 1):
            by_line[line] = (first, last)
    return by_line


def _header_end(header: int, body: int, lines: list[str]) -> int:
    """The last line of a compound statement's header: before its body, without the comment-only lines there."""
    end = body - 1
    while end > header and (not lines[end - 1].strip() or lines[end - 1].lstrip().startswith("#")):
        end -= 1
    return max(end, header)


def needed(rule: str, enabled: frozenset[str], message: str) -> str:
    """Why a program is left as it is when the rule of one of its rewrites is off, or suppressed there."""
    from rewrites import RULES

    state = "switched off" if rule not in enabled else "suppressed there by a `# tf-migrate: ignore` comment"
    return f"it needs {rule} ({RULES[rule].name}), which is {state}: {message}"
