"""libcst metadata for the rewrites, each kind computed when first asked for and no more than asked.

``wrapper.resolve_many`` computes every provider for every node up front: four passes over
the module, most of whose results no rewrite reads (a file that wakes a family but needs
no finding never asks for a position). Here scopes are resolved up front (everything else
needs them), positions on the first question, qualified names one node at a time from its
scope (what QualifiedNameProvider computes for each node), and parents from one walk of the
node fields (what ParentNodeProvider computes with a visitor, four times slower).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator, Mapping

import libcst as cst
from libcst.metadata import MetadataWrapper, ParentNodeProvider, PositionProvider, QualifiedNameProvider, ScopeProvider

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
            resolved[provider] = _OnFirstUse(lambda: wrapper.resolve(PositionProvider))
        elif provider is ParentNodeProvider:
            resolved[provider] = _OnFirstUse(lambda: _parents(wrapper))
        else:
            resolved[provider] = wrapper.resolve(provider)
    return resolved


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
