"""A program that trains on the cluster or, without one, in its own process, as the cloudml-samples trainers do::

    if self.cluster:
      server = start_server(self.cluster, self.task)
      target = server.target
      device_fn = tf.train.replica_device_setter(cluster=self.cluster)
      config = tf.ConfigProto(device_filters=device_filters)
    else:
      target = ''
      device_fn = ''
      config = None
    with tf.device(device_fn):
      <graph>
    with sv.managed_session(target, config=config) as session:
      <loop>

TF1 built the same graph either way, placed by the setter or not, and trained it in a session of the cluster's server
or of the process. Migrated, the program chooses as TF1 did, by the same test: on the cluster, the program any
between-graph program becomes (ParameterServerStrategy, its coordinator driving the workers); without, the same
variables made in the default strategy's scope and each step run in the process, as TF1's local session ran it. The
`else:` goes: it only bound the device, the session's master and its config, which the migrated program has no more.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from rewrites.between_graph.synchronous import _unlead
from rewrites.syntax import Unsupported, is_name, single_assign, subtree

LOCAL = "local"  # the mode of the program trained without a cluster (besides True/False: synchronous or not)
NOTHING = ("''", '""', "None")  # what the local branch binds: no device, the process's own session, no config
TRAINING = ("; without a cluster (`{test}` false), the same model trains in this process, as TF1's local session "
            "trained it: its variables made in the default strategy's scope, each step run in turn")


@dataclass
class Local:
    """`if TEST: <the setter, ...> else: <the same names bound to nothing>`."""

    branch: cst.If
    spelled: cst.BaseExpression                # the test, as the migrated module spells it
    names: frozenset[str]                      # what the `else:` binds

    def branches(self, cluster: list, local: list, leading_lines) -> cst.If:
        """`if test: <cluster> else: <local>`"""
        return cst.If(test=self.spelled, body=cst.IndentedBlock(_unlead(cluster)),
                      orelse=cst.Else(cst.IndentedBlock(_unlead(local))), leading_lines=leading_lines)

    def bound_in_cluster(self, name: str) -> cst.BaseExpression | None:
        """The value `name = value` gives ``name`` in the cluster's branch."""
        for statement in self.branch.body.body:
            assign = single_assign(statement)
            if assign is not None and assign[0] == name:
                return assign[1]
        return None


def local_branch(scope: cst.CSTNode, bindings: list, code, spelled) -> Local | None:
    """The Local of a device name whose ``bindings`` ((node, value): placement._bindings) are two: a setter in the
    body of an `if` of ``scope``, and nothing (NOTHING) in its `else:`, which binds nothing but such names, each
    bound in the `if`'s body too. None for other bindings."""
    if len(bindings) != 2 or any(value is None for _, value in bindings):
        return None
    nodes = [node for node, _ in bindings]
    branch = next((node for node in subtree(scope) if isinstance(node, cst.If) and isinstance(node.orelse, cst.Else)
                   and _holds(node.body, nodes[0]) and _holds(node.orelse.body, nodes[1])), None)
    if branch is None:
        return None
    names = set()
    for statement in branch.orelse.body.body:
        assign = single_assign(statement)
        if assign is None or code(assign[1]) not in NOTHING:
            return None
        names.add(assign[0])
    local = Local(branch, spelled(branch.test), frozenset(names))
    return local if all(local.bound_in_cluster(name) is not None for name in names) else None


def _holds(block: cst.BaseSuite, small: cst.CSTNode) -> bool:
    """``small`` is (in) a statement of ``block`` itself."""
    return any(small is s or (isinstance(s, cst.SimpleStatementLine) and small in s.body) for s in block.body)


def session_master(master: cst.BaseExpression | None, local: Local | None) -> cst.BaseExpression | None:
    """The session's master: the cluster branch's `server.target` where the session is opened on a name the local
    branch binds to nothing (`target = server.target` / `target = ''`)."""
    if local is None or not (isinstance(master, cst.Name) and master.value in local.names):
        return master
    return local.bound_in_cluster(master.value)


def check(local: Local | None, flag, synchronized: bool, device: cst.With, scope: cst.CSTNode,
          opening: cst.BaseStatement) -> None:
    """A Local's names are read by the device block and the session's opening alone (they go with them); its
    training asynchronous."""
    if local is None:
        return
    if flag is not None or synchronized:
        raise Unsupported(device, "a SyncReplicasOptimizer in a program that also trains without a cluster: migrate "
                                  "the program by hand")
    head = opening.items if isinstance(opening, cst.With) else [opening]
    read = {id(node) for code in [device.items[0], *head] for node in subtree(code)}
    bound = {id(node) for node in subtree(scope) if isinstance(node, cst.AssignTarget) for node in subtree(node)}
    keywords = {id(node.keyword) for node in subtree(scope) if isinstance(node, cst.Arg) and node.keyword}
    keywords |= {id(node.attr) for node in subtree(scope) if isinstance(node, cst.Attribute)}
    for name in sorted(local.names):
        use = next((node for node in subtree(scope) if is_name(node, name) and id(node) not in read | bound | keywords),
                   None)
        if use is not None:
            raise Unsupported(use, f"`{name}`, bound to nothing where the program trains without a cluster, is used "
                                   "besides placing the graph and opening its session: migrate that use by hand")
