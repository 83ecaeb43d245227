"""What a file may need before any rewrite parses it: the families it wakes and the imports that tie it to others.

Most files of a tree have nothing to migrate, and a tree of TensorFlow code mentions "Server" or
"estimator." in thousands of docstrings. Two tests, cheapest first, keep libcst away from them: the
words of a family in the text, then in the code itself (the names Python's own parser finds, not
strings or comments). ``scan`` runs in the workers, so a big tree's parsing is shared by the cores;
the grouping of files into programs then needs only the imports it returns.
"""

from __future__ import annotations

import ast
from collections.abc import Collection
from dataclasses import dataclass

from rewrites import FAMILIES, Family
from rewrites.program.imports import TF_AS_TF

# Words that may tie two modules into one program (an Estimator, its model_fn or input_fn, its specs, or the
# feature columns a featurizer module makes for it; a between-graph graph, whose input a function of another module
# may build: rewrites/between_graph/input_functions.py).
PROGRAM_WORDS = ("estimator", "Estimator", "model_fn", "input_fn", "feature_column", "replica_device_setter")
# File families that read the other modules of their program (a file's ``run``), so group them as a program's.
READS_ITS_PROGRAM = {"between_graph"}


@dataclass(frozen=True)
class Scan:
    families: tuple[str, ...]                      # the modules of the families the file wakes, in catalogue order
    imports: tuple[tuple[str, int], ...] | None    # (dotted module, leading dots) of each import, if it is related
                                                   # to a program (mentions one of PROGRAM_WORDS)

    @property
    def wakes_a_program(self) -> bool:
        return any(FAMILY[module].kind == "program" or module in READS_ITS_PROGRAM for module in self.families)


FAMILY: dict[str, Family] = {family.module: family for family in FAMILIES}


def may_need(source: str, enabled: Collection[str]) -> bool:
    """Could ``source`` wake a family or belong to a program (a module binding TensorFlow as `tf` may hold code a
    program's model_fn runs)? The text test alone: cheap enough for every file."""
    return bool(_by_text(source, enabled)) or any(word in source for word in PROGRAM_WORDS) or bool(
        TF_AS_TF.search(source))


def families_for(source: str, enabled: Collection[str], tree: ast.Module | None = None) -> list[Family]:
    """The families that could have anything to do in ``source``: their words in its text, then in its code."""
    candidates = _by_text(source, enabled)
    if not candidates:
        return []
    if tree is None:
        tree = _parsed(source)
    if tree is None:
        return candidates  # the rewrites' parser says what is wrong with it
    names = _names(tree)
    return [family for family in candidates if any(_in_code(word, names, source) for word in family.triggers)]


def scan(source: str, enabled: Collection[str]) -> Scan:
    """One file's Scan: Python's parser runs once for both questions, and only if the text asks for it."""
    by_text = _by_text(source, enabled)
    related = any(word in source for word in PROGRAM_WORDS)
    tree = _parsed(source) if by_text or related else None
    families = families_for(source, enabled, tree) if by_text else []
    related = related or any(family.module in READS_ITS_PROGRAM for family in families)
    return Scan(tuple(family.module for family in families), imports_of(tree) if related and tree else None)


def _by_text(source: str, enabled: Collection[str]) -> list[Family]:
    # A module that does not name TensorFlow may still drive an Estimator its package makes (`import trainer;
    # trainer.build_estimator(...).train(...)`), or get TensorFlow's names from a star import.
    tensorflow = "tensorflow" in source
    return [family for family in FAMILIES
            if (tensorflow or family.kind == "program" or "import *" in family.triggers)
            and any(rule.id in enabled for rule in family.rules) and any(word in source for word in family.triggers)]


def _parsed(source: str) -> ast.Module | None:
    try:
        return ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


@dataclass(frozen=True)
class _Names:
    """The names the code uses, one per line: all of them, those it calls, and those it reads an attribute of
    (definitions' own names are not uses)."""

    used: str
    called: str
    holders: str


def _names(tree: ast.Module) -> _Names:
    used, called, holders = set(), set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            used.add(node.id)
        elif isinstance(node, ast.Attribute):
            used.add(node.attr)
            holders.add(_last_name(node.value))
        elif isinstance(node, ast.Call):
            called.add(_last_name(node.func))
        elif isinstance(node, ast.alias):
            used.update((node.name, node.asname or ""))
            if node.asname:  # `from ... import Estimator as E`: E(...) is a call of Estimator
                called.add(node.name)
                holders.add(node.name)
        elif isinstance(node, ast.ImportFrom):
            used.add(node.module or "")
    return _Names("\n".join(used), "\n".join(called), "\n".join(holders))


def _last_name(node: ast.expr) -> str:
    return node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else ""


def _in_code(word: str, names: _Names, source: str) -> bool:
    """A trigger is a name the code calls ("Estimator(": DNNEstimator(...) too), reads an attribute of
    ("estimator.") or uses ("Server"), or else a string the code holds ("/job:ps")."""
    name = word.strip("(.")
    if not name.isidentifier():
        return word in source
    return name in (names.called if word.endswith("(") else names.holders if word.endswith(".") else names.used)


def imports_of(tree: ast.Module) -> tuple[tuple[str, int], ...]:
    """(dotted, leading dots) of each module the code imports, or may (`from a import b`: `a.b` and `a`)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(alias.name, 0) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            found += [(f"{base}.{alias.name}" if base else alias.name, node.level) for alias in node.names]
            found.append((base, node.level))
    return tuple(found)
