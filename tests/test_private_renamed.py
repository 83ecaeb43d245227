"""TFM011: private TF 1.x names TF 2 keeps in the same module under another name take TF 2's name."""

from __future__ import annotations

import importlib

import pytest

from helpers import ALL_RULES, check_noop, run
from rewrites.private_successors import RENAMED


def test_an_import_of_the_old_name_imports_the_new_one_under_it():
    result = run("""\
        from tensorflow.python.platform.tf_logging import _get_logger
        from tensorflow.python.platform.tf_logging import _get_logger as logger_of_tf, info

        _get_logger().setLevel(10)
        logger_of_tf().info("x")
        """)
    assert result.source.splitlines()[:2] == [
        "from tensorflow.python.platform.tf_logging import get_logger as _get_logger",
        "from tensorflow.python.platform.tf_logging import get_logger as logger_of_tf, info",
    ]
    assert [(f.line, f.rule) for f in result.findings] == [(1, "TFM011"), (2, "TFM011")]


def test_the_module_imported_under_any_name_is_followed():
    result = run("""\
        import tensorflow.python.platform.tf_logging as tfl
        from tensorflow.python.platform import tf_logging as logs

        a = tfl._get_logger()
        b = logs._get_logger()
        """)
    assert "a = tfl.get_logger()\nb = logs.get_logger()\n" in result.source


@pytest.mark.parametrize("source", [
    # Another module's _get_logger, or the program's own.
    "import mylogs\n\nlog = mylogs._get_logger()\n",
    "def _get_logger():\n  return None\n\nlog = _get_logger()\n",
    # The name is TF 2's already.
    "from tensorflow.python.platform import tf_logging\n\nlog = tf_logging.get_logger()\n",
])
def test_other_names_stay(source):
    check_noop(source)


def test_ignoring_the_rule_leaves_the_old_name():
    source = "from tensorflow.python.platform import tf_logging\n\nlog = tf_logging._get_logger()\n"
    check_noop(source, enabled=ALL_RULES - {"TFM011"})


@pytest.mark.tensorflow
def test_each_new_name_is_the_very_object_tf_2_exports():
    pytest.importorskip("tensorflow")
    import tensorflow as tf

    for qualified, name in RENAMED.items():
        module = importlib.import_module(qualified.rpartition(".")[0])
        assert not hasattr(module, qualified.rpartition(".")[2])  # gone, so the program could not start
        assert getattr(module, name) is tf.get_logger
