"""The vocabulary of following values: where code is read (Place), an expression there (Value), a call site, and
what a name is bound to (Binding)."""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from rewrites.program.modules import ModuleView
from rewrites.syntax import Unsupported, source


@dataclass(eq=False)
class Place:
    """Where code is read: a module, maybe a function in it, and maybe the call that gave its parameters."""

    view: ModuleView
    function: cst.FunctionDef | cst.Lambda | None = None
    call: CallSite | None = None
    outer: Place | None = None    # a nested function's enclosing place

    def __repr__(self) -> str:
        name = getattr(getattr(self.function, "name", None), "value", "lambda" if self.function else "module")
        return f"Place({self.view.path}: {name}{', called' if self.call else ''})"

    def same_scope(self, other: Place) -> bool:
        return self.view is other.view and self.function is other.function


@dataclass(eq=False)
class CallSite:
    node: cst.Call
    place: Place


@dataclass(eq=False)
class Value:
    """An expression at a place. ``module``: set when the expression names a module of the run."""

    node: cst.CSTNode
    place: Place
    module: ModuleView | None = None

    def __repr__(self) -> str:
        return f"Value({' '.join(source(self.node).split())[:60]!r} at {self.place!r})"

    @property
    def view(self) -> ModuleView:
        return self.place.view

    def api(self) -> str | None:
        """The TensorFlow API this value's node names (for a call: its function)."""
        node = self.node.func if isinstance(self.node, cst.Call) else self.node
        return self.view.api(node)

    def fail(self, message: str) -> Unsupported:
        return Unsupported(self.node, message, self.view.path)

    def is_partial(self) -> bool:
        """A call of ``functools.partial`` with the function it binds."""
        from libcst.metadata import QualifiedNameProvider

        if not isinstance(self.node, cst.Call) or not self.node.args:
            return False
        names = self.view.get_metadata(QualifiedNameProvider, self.node.func, set())
        return any(name.name == "functools.partial" for name in names)


@dataclass
class Binding:
    """What a name refers to at a place (see Values.binding)."""

    kind: str                      # "value", "parameter", "definition", "module", "import", "builtin", "unknown"
    value: Value | None = None     # value / definition / module / the parameter's default
    assignment: object = None      # libcst's Assignment, when there is one
    detail: str = ""
    outside: str | None = None     # an import of a module on disk that is not among the files of the run: its path
    home: Value | None = None      # "unknown" for a module-level name another module sets: its own assignment
