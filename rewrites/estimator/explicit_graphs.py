"""Code a program runs in a graph of its own (`with graph.as_default():`, `with tf.Session(graph=graph):`), which
TF 2 runs in graph mode as TF1 did, so it may keep graph mode's APIs in a migrated module.

Notebooks train a small model by hand before their Estimator (word2vec vectors the Estimator then loads): a
``graph = tf.Graph()``, its ops built under ``with graph.as_default():``, run under ``with tf.Session(graph=graph)
as session:``. Eager TF 2 builds and runs that graph as TF1 did: ``as_default()`` of a graph made by the program
enters graph mode, and a session given that graph makes it the default graph in its block too. So the blocks do
not keep the module in TF1's graph mode; placeholders, initializers and sessions elsewhere still do.

Before (TF1, graph mode switched on for the whole module)::

    graph = tf.Graph()
    with graph.as_default():
      inputs = tf.placeholder(tf.int32, [BATCH])
      init = tf.global_variables_initializer()
    with tf.Session(graph=graph) as session:
      init.run()

After: the same blocks, respelled (``tf.compat.v1.placeholder``, ``tf.compat.v1.Session``), in a TF2 module.
"""

from __future__ import annotations

import libcst as cst

from rewrites.program.modules import ModuleView
from rewrites.syntax import Bindings, bound_values, is_name, single_assign, subtree

SESSION = ("target", "graph", "config")
SESSIONS = {"Session", "compat.v1.Session"}
GRAPHS = {"Graph"}


def graph_blocks(view: ModuleView) -> set[cst.With]:
    """The `with` statements of ``view`` entering a graph the module makes (a name bound once to `tf.Graph()`):
    its `as_default()`, or a session of it."""
    bindings = Bindings()
    view.module.visit(bindings)
    graphs = {assign[0] for statement in subtree(view.module) if isinstance(statement, cst.SimpleStatementLine)
              and (assign := single_assign(statement)) and isinstance(assign[1], cst.Call)
              and view.api(assign[1].func) in GRAPHS and not assign[1].args and bindings.counts[assign[0]] == 1}
    return {node for node in subtree(view.module) if isinstance(node, cst.With)
            and any(_enters(view, item.item, graphs) for item in node.items)}


def _enters(view: ModuleView, item: cst.BaseExpression, graphs: set[str]) -> bool:
    if not isinstance(item, cst.Call):
        return False
    func = item.func
    if isinstance(func, cst.Attribute) and func.attr.value == "as_default" and not item.args:
        return isinstance(func.value, cst.Name) and func.value.value in graphs
    if view.api(func) not in SESSIONS or any(arg.star for arg in item.args):
        return False
    graph = bound_values(item, SESSION).get("graph")
    return any(is_name(graph, name) for name in graphs)
