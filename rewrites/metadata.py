"""libcst metadata for the rewrites, each kind computed when first asked for and no more than asked.

``wrapper.resolve_many`` computes every provider for every node up front: four passes over
the module, most of whose results no rewrite reads (a file that wakes a family but needs
no finding never asks for a position). Here scopes are resolved up front (everything else
needs them), positions on the first question (from one printing of the module that counts
tokens, in a third of the time of PositionProvider, which makes position objects for every
node and splits every token on newlines), qualified names one node at a time from its scope (what
QualifiedNameProvider computes for each node), and parents from one walk of the node fields
(what ParentNodeProvider computes with a visitor, four times slower).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterator, Mapping
from contextlib import contextmanager
from functools import cached_property

import libcst as cst
from libcst._nodes.internal import CodegenState  # not exported; libcst's own position providers subclass it
from libcst.metadata import (CodePosition, CodeRange, MetadataWrapper, ParentNodeProvider, PositionProvider,
                             QualifiedNameProvider, ScopeProvider)

from rewrites.syntax import children


def lazily_resolved(wrapper: MetadataWrapper, providers: Collection[type]) -> dict[type, Mapping]:
    """What ``wrapper.resolve_many(providers)`` gives, computed on demand (and shared through ``wrapper``)."""
    resolved: dict[type, Mapping] = {}
    for provider in providers:
        if provider is ScopeProvider:
            resolved[provider] = wrapper.resolve(ScopeProvider)
        elif provider is QualifiedNameProvider:
            resolved[provider] = _QualifiedNames(wrapper.resolve(ScopeProvider))
        elif provider is PositionProvider:
            resolved[provider] = _OnFirstUse(lambda: _printing(wrapper).positions)
        elif provider is ParentNodeProvider:
            resolved[provider] = _OnFirstUse(lambda: _parents(wrapper))
        else:
            resolved[provider] = wrapper.resolve(provider)
    return resolved


def _printing(wrapper: MetadataWrapper) -> Printing:
    return wrapper.printing if isinstance(wrapper, Parsed) else Printing(wrapper.module)


class _OnFirstUse(Mapping):
    def __init__(self, compute: Callable[[], Mapping]) -> None:
        self._compute = compute
        self._mapping: Mapping | None = None

    def _resolved(self) -> Mapping:
        if self._mapping is None:
            self._mapping = self._compute()
        return self._mapping

    def __getitem__(self, node: cst.CSTNode):
        return self._resolved()[node]

    def __iter__(self) -> Iterator[cst.CSTNode]:
        return iter(self._resolved())

    def __len__(self) -> int:
        return len(self._resolved())


class _QualifiedNames(Mapping):
    def __init__(self, scopes: Mapping) -> None:
        self._scopes = scopes

    def __getitem__(self, node: cst.CSTNode):
        scope = self._scopes.get(node)
        return scope.get_qualified_names_for(node) if scope is not None else set()

    def __iter__(self) -> Iterator[cst.CSTNode]:
        return iter(self._scopes)

    def __len__(self) -> int:
        return len(self._scopes)


def _parents(wrapper: MetadataWrapper) -> dict[cst.CSTNode, cst.CSTNode]:
    parents = {}
    stack = [wrapper.module]
    while stack:
        node = stack.pop()
        for child in children(node):
            parents[child] = node
            stack.append(child)
    return parents


class Parsed(MetadataWrapper):
    """The MetadataWrapper of a module just parsed (so not copied), which also keeps the module's printing once it
    is made: the positions of its nodes, for every family that reports, and its code."""

    def __init__(self, module: cst.Module) -> None:
        super().__init__(module, unsafe_skip_copy=True)

    @cached_property
    def printing(self) -> Printing:
        return Printing(self.module)


class Printing:
    """libcst's printing of a module: its code, and each node's CodeRange (what PositionProvider resolves)."""

    def __init__(self, module: cst.Module) -> None:
        self._state = _CountingTokens(module)
        module._codegen(self._state)  # what libcst's PositionProvider does, with a state of its own

    @cached_property
    def code(self) -> str:
        return "".join(self._state.tokens[:self._state.code_end])

    @cached_property
    def positions(self) -> Mapping[cst.CSTNode, CodeRange]:
        return _Positions(self._state.ranges, self._state.tokens)


class _CountingTokens(CodegenState):
    """libcst's printing of a module, recording each node's range in tokens printed, by PositionProvider's rules:
    the range a node records as syntactic (a start or end taken from a child's), else all the code it prints."""

    def __init__(self, module: cst.Module) -> None:
        super().__init__(default_indent=module.default_indent, default_newline=module.default_newline)
        self.ranges: dict[cst.CSTNode, tuple[int, int]] = {}
        self.code_end: int | None = None  # the code's tokens: all but a last newline the module does not have
        self._starts: list[int] = []

    def before_codegen(self, node: cst.CSTNode) -> None:
        self._starts.append(len(self.tokens))

    def after_codegen(self, node: cst.CSTNode) -> None:
        start = self._starts.pop()
        if node not in self.ranges:
            self.ranges[node] = (start, len(self.tokens))

    @contextmanager
    def record_syntactic_position(self, node: cst.CSTNode, *, start_node: cst.CSTNode | None = None,
                                  end_node: cst.CSTNode | None = None) -> Iterator[None]:
        start = len(self.tokens)
        try:
            yield
        finally:
            self.ranges[node] = (self.ranges[start_node][0] if start_node is not None else start,
                                 self.ranges[end_node][1] if end_node is not None else len(self.tokens))

    def pop_trailing_newline(self) -> None:
        self.code_end = max(len(self.tokens) - 1, 0)  # PositionProvider still counts that newline


_NEWLINE = re.compile(r"\r\n?|\n")


class _Positions(Mapping):
    """Token ranges read as CodeRanges: lines from 1, columns from 0, a newline being "\\n", "\\r\\n" or "\\r" within
    one token (PositionProvider's counting)."""

    def __init__(self, ranges: dict[cst.CSTNode, tuple[int, int]], tokens: list[str]) -> None:
        self._ranges = ranges
        self._at = [(1, 0)]  # (line, column) after each number of tokens
        line, column = 1, 0
        for token in tokens:
            if "\n" in token or "\r" in token:
                segments = _NEWLINE.split(token)
                line, column = line + len(segments) - 1, len(segments[-1])
            else:
                column += len(token)
            self._at.append((line, column))

    def __getitem__(self, node: cst.CSTNode) -> CodeRange:
        start, end = self._ranges[node]
        return CodeRange(CodePosition(*self._at[start]), CodePosition(*self._at[end]))

    def __iter__(self) -> Iterator[cst.CSTNode]:
        return iter(self._ranges)

    def __len__(self) -> int:
        return len(self._ranges)
