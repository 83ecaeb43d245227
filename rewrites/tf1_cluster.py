"""TFM107: TF1 cluster code that stays TF1 is never left without a word.

This family changes no code: it runs after the program rewrites (between-graph, Estimator) and reports what
they left; a module starting a Server whose Estimator they left gets the program's TFM104 from it
(rewrites/between_graph/unread.py).

TFM107 cluster-code-left

What it does: reports each use of TF1's between-graph machinery still in a module after the rewrites
(replica_device_setter, MonitoredTrainingSession, a Supervisor, SyncReplicasOptimizer, a device string naming
/job:ps, and beside them the module's ClusterSpec, Server and server.join()), each at its line and column with
what to do. A module whose cluster code was migrated, or that only starts a server and joins it (a parameter
server launcher, which is TF2 as it stands), gets none; nor do /job:ps device strings in a module that connects to
its cluster (tf.config.experimental_connect_to_cluster: TF2's in-graph program names remote devices so).
Why: the program around such code was not migrated (TFM103 migrates one shape of program, and a TFM104 finding
says why a program of that shape was left); a rename by TFM101 must not be the only word on the file.
What may differ: the code is unchanged; migrate it by hand as the finding says.

Before:

    import tensorflow.compat.v1 as tf1


    def device_fn(cluster):
      return tf1.train.replica_device_setter(cluster=cluster)

After:

    import tensorflow.compat.v1 as tf1


    def device_fn(cluster):
      return tf1.train.replica_device_setter(cluster=cluster)

Finding:

    5:10: TFM107 [manual] replica_device_setter left as TF1: the program around it is not migrated (TFM103's
    shape: a replica_device_setter graph trained in a MonitoredTrainingSession or Supervisor loop; a TFM104
    finding says why one was left); ParameterServerStrategy places variables on the ps tasks itself: create
    them in strategy.scope()
"""

from __future__ import annotations

import libcst as cst

from rewrites.base import TFCodemod
from rewrites.syntax import VisitsWhatMentions

WHY = ("the program around it is not migrated (TFM103's shape: a replica_device_setter graph trained in a "
       "MonitoredTrainingSession or Supervisor loop; a TFM104 finding says why one was left)")
# TF1-only: their presence means the module's cluster code stays TF1. API -> what to do with it.
TF1_ONLY = {
    "train.replica_device_setter": "ParameterServerStrategy places variables on the ps tasks itself: create them in "
    "strategy.scope()",
    "train.MonitoredTrainingSession": "drive the steps with a ClusterCoordinator of ParameterServerStrategy; hooks "
    "become code around the loop, checkpoints a tf.train.CheckpointManager",
    "train.Supervisor": "drive the steps with a ClusterCoordinator of ParameterServerStrategy; its checkpoints become "
    "a tf.train.CheckpointManager",
    "train.SyncReplicasOptimizer": "ParameterServerStrategy trains asynchronously: synchronous updates across workers "
    "are MultiWorkerMirroredStrategy's (all-reduce, no ps tasks), which TFM103 moves a SyncReplicasOptimizer(opt, "
    "R, R) program to in the shape it migrates",
}
PS_DEVICE = ("under a TF2 strategy, variables created in strategy.scope() are placed on the ps tasks by the strategy, "
             "not by device strings")
# TF2 has them too: worth a word only beside TF1-only cluster code.
ALONGSIDE = {
    "train.ClusterSpec": "keep it as tf.train.ClusterSpec for the strategy's cluster resolver once the training is "
    "migrated",
    "train.Server": "a ps or worker task serves a ParameterServerStrategy cluster with tf.distribute.Server once the "
    "training is migrated",
    "distribute.Server": "a ps or worker task serves a ParameterServerStrategy cluster once the training is migrated",
}
JOIN = "ps tasks keep serving with server.join() once the training is migrated"


class Rewrite(VisitsWhatMentions, TFCodemod):
    MENTIONS = (*(api.rpartition(".")[2] for api in (*TF1_ONLY, *ALONGSIDE)), "join", "experimental_connect_to_cluster")
    FRAGMENTS = ("/job:ps",)

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._uses: list[tuple[cst.CSTNode, str, str]] = []   # (node, what, what to do)
        self._tf1_only = False
        self._ps_devices = False  # TF1-only unless the module connects to the cluster (TF2's in-graph program)
        self._connects = False
        self._servers: set[str] = set()
        self._serving = False  # the module starts a Server

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        return self._reference(node)

    def visit_Name(self, node: cst.Name) -> None:
        self._reference(node)

    def _reference(self, node: cst.CSTNode) -> bool:
        api = self.api(node)
        if api in TF1_ONLY:
            self._tf1_only = True
            self._uses.append((node, f"{api.rpartition('.')[2]} left as TF1", TF1_ONLY[api]))
        elif api in ALONGSIDE:
            self._serving |= api in ("train.Server", "distribute.Server")
            self._uses.append((node, f"{api.rpartition('.')[2]} of TF1 cluster code", ALONGSIDE[api]))
        return api is None  # the parts of a named API are not APIs of their own

    def visit_Expr(self, node: cst.Expr) -> bool:
        """A string that is a statement of its own (a docstring) names no device, whatever it shows."""
        return not isinstance(node.value, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString))

    def visit_SimpleString(self, node: cst.SimpleString) -> None:
        if "/job:ps" in node.value:
            self._ps_devices = True
            self._uses.append((node, f"device {node.value} left as TF1", PS_DEVICE))

    def visit_FormattedStringText(self, node: cst.FormattedStringText) -> None:
        if "/job:ps" in node.value:
            self._ps_devices = True
            self._uses.append((node, "a /job:ps device left as TF1", PS_DEVICE))

    def visit_Assign(self, node: cst.Assign) -> None:
        if isinstance(node.value, cst.Call) and self.api(node.value.func) in ("train.Server", "distribute.Server"):
            self._servers |= {target.target.value for target in node.targets if isinstance(target.target, cst.Name)}

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        self._connects |= self.api(func) == "config.experimental_connect_to_cluster"
        if isinstance(func, cst.Attribute) and func.attr.value == "join" and not node.args and (
                isinstance(func.value, cst.Name) and func.value.value in self._servers
                or isinstance(func.value, cst.Call) and self.api(func.value.func) in ("train.Server", "distribute.Server")):
            self._uses.append((func.attr, "server.join() of TF1 cluster code", JOIN))

    def leave_Module(self, original_node: cst.Module, updated_node: cst.Module) -> cst.Module:
        # The program's own Server: an Estimator migrated beside the one left may have made a tf.distribute.Server.
        if self._serving and "Server" in self.run.get(self.path, "Server"):
            from rewrites.between_graph.unread import estimator_left  # it reads TF1_ONLY of this module

            left = estimator_left(original_node, self.api)
            if left is not None:
                self.report("TFM104", left[0], f"between-graph program left as it is: {left[1]}")
        if self._tf1_only or self._ps_devices and not self._connects:
            for node, what, todo in self._uses:
                self.report("TFM107", node, f"{what}: {WHY}; {todo}")
        return super().leave_Module(original_node, updated_node)
