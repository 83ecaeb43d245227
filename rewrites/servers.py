"""TFM101-102: the cluster's servers and spec under their TF2 names.

TFM101 train-server

What it does: tf.train.Server (TF1's spelling) becomes tf.distribute.Server; its arguments stay as they are.
Why: TensorFlow 2 has no tf.train.Server; it exports the very same class as tf.distribute.Server.
What may differ: nothing: it is the same class.

Before:

    import tensorflow.compat.v1 as tf1

    server = tf1.train.Server(cluster, job_name="ps", task_index=0)

After:

    import tensorflow as tf

    server = tf.distribute.Server(cluster, job_name="ps", task_index=0)

Finding:

    3:10: TFM101 [exact] tf.train.Server -> tf.distribute.Server

TFM102 cluster-spec

What it does: tf.compat.v1.train.ClusterSpec becomes tf.train.ClusterSpec.
Why: the cluster spec is the same class in TensorFlow 1 and 2; only its compatibility-module spelling goes,
so the module no longer needs tf.compat.v1 for it.
What may differ: nothing: it is the same class.

Before:

    import tensorflow as tf

    cluster = tf.compat.v1.train.ClusterSpec({"ps": ["ps0:2222"], "worker": ["worker0:2222"]})

After:

    import tensorflow as tf

    cluster = tf.train.ClusterSpec({"ps": ["ps0:2222"], "worker": ["worker0:2222"]})

Finding:

    3:11: TFM102 [exact] compat.v1 ClusterSpec -> tf.train.ClusterSpec
"""

from __future__ import annotations

import libcst as cst

from rewrites.base import TFCodemod
from rewrites.syntax import VisitsWhatMentions


class Rewrite(VisitsWhatMentions, TFCodemod):
    MENTIONS = ("Server", "ClusterSpec")

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.BaseExpression:
        return self._rename(original, updated)

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.BaseExpression:
        return self._rename(original, updated)

    def _rename(self, original: cst.BaseExpression, updated: cst.BaseExpression) -> cst.BaseExpression:
        name = self.tf_name(original)
        if name is None:
            return updated
        if name.api == "train.Server" and self.wants("TFM101", original):
            return self.replace("TFM101", original, self.tf2("distribute.Server"), "tf.train.Server -> tf.distribute.Server")
        if name.api == "train.ClusterSpec" and name.via != "tf" and self.wants("TFM102", original):
            return self.replace("TFM102", original, self.tf2("train.ClusterSpec"), "compat.v1 ClusterSpec -> tf.train.ClusterSpec")
        return updated
