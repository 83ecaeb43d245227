"""rewrites/program/edits.py: two programs' edits of one module merge when they change a statement alike (a function
that evaluates each program's model); a conflicting change merges nothing of them."""

from __future__ import annotations

import libcst as cst
import pytest

from rewrites.program.edits import ModuleEdits
from rewrites.program.modules import Tree
from rewrites.syntax import Unsupported

SOURCE = "a = 1\nb = 2\n"


def edits_of(view, replacements: dict[int, str]) -> ModuleEdits:
    edits = ModuleEdits(view)
    for index, code in replacements.items():
        edits.replace(view.module.body[index], [cst.parse_statement(code)])
    return edits


def test_programs_changing_a_shared_statement_alike_merge():
    view = Tree({"m.py": SOURCE}, exists=lambda path: False).view("m.py")
    merged = edits_of(view, {0: "a = 10\n"})
    merged.merge(edits_of(view, {0: "a = 10\n", 1: "b = 20\n"}))
    assert merged.apply() == "a = 10\nb = 20\n"


def test_a_conflicting_change_merges_nothing_of_the_other_program():
    view = Tree({"m.py": SOURCE}, exists=lambda path: False).view("m.py")
    merged = edits_of(view, {0: "a = 10\n"})
    with pytest.raises(Unsupported, match="two parts of the migration change this statement"):
        merged.merge(edits_of(view, {1: "b = 20\n", 0: "a = 11\n"}))
    assert merged.apply() == "a = 10\nb = 2\n"
