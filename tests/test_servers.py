"""TFM101 train-server and TFM102 cluster-spec."""

import pytest
from helpers import check_noop, check_transformed, run

# The same TF1 program in every import spelling: (imports, how `train` is reached).
SERVER_SPELLINGS = {
    "tf alias": ("import tensorflow as tf\n", "tf.train.Server", "import tensorflow as tf\n"),
    "tf.compat.v1": ("import tensorflow as tf\n", "tf.compat.v1.train.Server", "import tensorflow as tf\n"),
    "tf1 alias": ("import tensorflow.compat.v1 as tf1\n", "tf1.train.Server", "import tensorflow as tf\n"),
    "compat.v1 as tf": ("import tensorflow.compat.v1 as tf\n", "tf.train.Server", "import tensorflow as tf2\n"),
    "from compat.v1 import train": ("from tensorflow.compat.v1 import train\n", "train.Server", "import tensorflow as tf\n"),
    "from compat.v1.train import Server": ("from tensorflow.compat.v1.train import Server\n", "Server", "import tensorflow as tf\n"),
    "from compat import v1": ("from tensorflow.compat import v1\n", "v1.train.Server", "import tensorflow as tf\n"),
    "import compat.v1": ("import tensorflow.compat.v1\n", "tensorflow.compat.v1.train.Server", "import tensorflow as tf\n"),
    "internal server_lib": ("from tensorflow.python.training import server_lib\n", "server_lib.Server", "import tensorflow as tf\n"),
    "plain import": ("import tensorflow\n", "tensorflow.train.Server", "import tensorflow\n"),
}


@pytest.mark.parametrize("spelling", SERVER_SPELLINGS)
def test_server_every_import_spelling(spelling):
    imports, server, new_import = SERVER_SPELLINGS[spelling]
    tf2 = new_import.split()[-1]
    check_transformed(
        f"{imports}\nserver = {server}(cluster, job_name='ps', task_index=0)\nserver.join()\n",
        f"{new_import}\nserver = {tf2}.distribute.Server(cluster, job_name='ps', task_index=0)\nserver.join()\n",
        findings=("TFM101",),
    )


def test_server_keeps_an_import_that_is_still_used():
    check_transformed(
        """\
        import tensorflow.compat.v1 as tf1

        tf1.disable_eager_execution()
        server = tf1.train.Server(cluster, job_name="worker", task_index=1, start=True)
        """,
        """\
        import tensorflow.compat.v1 as tf1
        import tensorflow as tf

        tf1.disable_eager_execution()
        server = tf.distribute.Server(cluster, job_name="worker", task_index=1, start=True)
        """,
    )


def test_server_after_tf_is_rebound_to_compat_v1():
    check_transformed(
        """\
        import tensorflow as tf
        tf = tf.compat.v1
        server = tf.train.Server(cluster)
        """,
        """\
        import tensorflow as tf
        import tensorflow as tf2

        tf = tf.compat.v1
        server = tf2.distribute.Server(cluster)
        """,
    )


def test_server_referenced_without_a_call():
    check_transformed(
        """\
        import tensorflow.compat.v1 as tf1

        def is_server(obj):
            return isinstance(obj, tf1.train.Server)
        """,
        """\
        import tensorflow as tf

        def is_server(obj):
            return isinstance(obj, tf.distribute.Server)
        """,
    )


def test_server_arguments_and_layout_kept():
    check_transformed(
        """\
        import tensorflow as tf
        server = tf.train.Server(
            cluster,  # the whole cluster
            job_name=FLAGS.job_name,
            task_index=FLAGS.task_index,
            config=tf.ConfigProto(log_device_placement=True),
        )
        """,
        """\
        import tensorflow as tf
        server = tf.distribute.Server(
            cluster,  # the whole cluster
            job_name=FLAGS.job_name,
            task_index=FLAGS.task_index,
            config=tf.ConfigProto(log_device_placement=True),
        )
        """,
    )


def test_finding_points_at_the_server():
    (finding,) = run("import tensorflow as tf\n\n\nx = 1; s = tf.train.Server(c)\n").findings
    assert (finding.rule, finding.line, finding.col, finding.safety) == ("TFM101", 4, 12, "exact")
    assert finding.format() == "example.py:4:12: TFM101 [exact] tf.train.Server -> tf.distribute.Server"


@pytest.mark.parametrize(
    "imports, cluster_spec, new_import",
    [
        ("import tensorflow as tf\n", "tf.compat.v1.train.ClusterSpec", "import tensorflow as tf\n"),
        ("import tensorflow.compat.v1 as tf1\n", "tf1.train.ClusterSpec", "import tensorflow as tf\n"),
        ("import tensorflow.compat.v1 as tf\n", "tf.train.ClusterSpec", "import tensorflow as tf2\n"),
        ("from tensorflow.compat.v1.train import ClusterSpec\n", "ClusterSpec", "import tensorflow as tf\n"),
        ("from tensorflow.compat.v1 import train\n", "train.ClusterSpec", "import tensorflow as tf\n"),
        ("from tensorflow.python.training import server_lib\n", "server_lib.ClusterSpec", "import tensorflow as tf\n"),
    ],
)
def test_cluster_spec_every_compat_spelling(imports, cluster_spec, new_import):
    tf2 = new_import.split()[-1]
    check_transformed(
        f"{imports}\ncluster = {cluster_spec}({{'ps': ps_hosts}})\n",
        f"{new_import}\ncluster = {tf2}.train.ClusterSpec({{'ps': ps_hosts}})\n",
        findings=("TFM102",),
    )


@pytest.mark.parametrize(
    "source",
    [
        # already TF2
        "import tensorflow as tf\nserver = tf.distribute.Server(cluster)\n",
        "import tensorflow as tf\ncluster = tf.train.ClusterSpec({'ps': hosts})\n",
        "from tensorflow.train import ClusterSpec\ncluster = ClusterSpec({'ps': hosts})\n",
        # something else called Server in a TensorFlow file
        "import tensorflow as tf\nfrom http.server import HTTPServer as Server\nServer(('', 8000), handler)\n",
        "import tensorflow as tf\nclass Server:\n    pass\nServer()\n",
        "import tensorflow as tf\nserver = self.train.Server(cluster)\n",
        "import tensorflow as tf\ndef f(tf):\n    return tf.train.Server(cluster)\n",
        # TF2 compat spelling of the TF2 API is left alone
        "import tensorflow as tf\ncluster = tf.compat.v2.train.ClusterSpec({})\n",
        # the words, but no TensorFlow import at all
        "from mylib import train\nserver = train.Server(cluster)\n",
    ],
)
def test_noop(source):
    check_noop(source)


def test_ignored_rule_changes_nothing():
    check_noop("import tensorflow as tf\nserver = tf.train.Server(c)\n", enabled={"TFM102"})
