"""Between-graph programs holding TF1 objects that change nothing: an initializer or a Saver made beside a
MonitoredTrainingSession and read nowhere (the session makes its own), and an `if` in the loop that the loop's own
code decides (`step = 0` just before `if step < 2000:`)."""

from __future__ import annotations

import pytest
from helpers import run, tfm104 as left

PROGRAM = '''import tensorflow.compat.v1 as tf
import numpy as np

tf.app.flags.DEFINE_string("job_name", "", "ps or worker")
tf.app.flags.DEFINE_integer("task_index", 0, "task")
FLAGS = tf.app.flags.FLAGS


def main(_):
    cluster = tf.train.ClusterSpec({"ps": ["localhost:2222"], "worker": ["localhost:2223", "localhost:2224"]})
    server = tf.train.Server(cluster, job_name=FLAGS.job_name, task_index=FLAGS.task_index)
    if FLAGS.job_name == "ps":
        server.join()
    elif FLAGS.job_name == "worker":
        with tf.device(tf.train.replica_device_setter(worker_device="/job:worker/task:%d" % FLAGS.task_index,
                                                      cluster=cluster)):
            x = tf.placeholder(tf.float32, [None, 2])
            w = tf.Variable(tf.zeros([2, 1]))
            global_step = tf.train.get_or_create_global_step()
            loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - 1.0))
            train_op = tf.train.AdagradOptimizer(0.5).minimize(loss, global_step=global_step)
            saver = tf.train.Saver()
            init_op = tf.global_variables_initializer()
        hooks = [tf.train.StopAtStepHook(last_step=100)]
        with tf.train.MonitoredTrainingSession(master=server.target, is_chief=(FLAGS.task_index == 0),
                                               checkpoint_dir="/tmp/ckpt", hooks=hooks) as mon_sess:
            while not mon_sess.should_stop():
                batch = np.ones([4, 2])
                _, step = mon_sess.run([train_op, global_step], feed_dict={x: batch})


if __name__ == "__main__":
    tf.app.run(main=main)
'''
RUN = "                _, step = mon_sess.run([train_op, global_step], feed_dict={x: batch})\n"


def decided(test: str, before: str = "step = 0") -> str:
    """PROGRAM, its step's runs under `if <test>:` after `<before>` in the loop, breaking after one pass."""
    return PROGRAM.replace("                batch = np.ones([4, 2])\n" + RUN,
                           f"                {before}\n                if {test}:\n"
                           "                    batch = np.ones([4, 2])\n    " + RUN + "                break\n")


def migrated(source: str) -> str:
    result = run(source)
    assert "TFM103" in {f.rule for f in result.findings}, result.findings
    assert not [f for f in result.findings if f.rule == "TFM104"], result.findings
    assert run(result.source).source == result.source, "a second run changes nothing"
    compile(result.source, "migrated.py", "exec")
    return result.source


def test_an_initializer_and_a_saver_read_nowhere_go_with_the_session():
    code = migrated(PROGRAM)
    assert "Saver" not in code and "global_variables_initializer" not in code
    assert "coordinator.schedule(train_step, args=(batch,))" in code


def test_a_saver_read_otherwise_is_still_left_with_the_reason():
    source = PROGRAM.replace(RUN, RUN + "                saver.save(mon_sess, '/tmp/x')\n")
    line, message = left(source)
    assert "saver = tf.train.Saver()" in line and "serves a TF1 session" in message, (line, message)


def test_an_if_the_loop_decides_to_take_is_the_step():
    code = migrated(decided("step < 2000"))
    assert ("            step = 0\n            batch = np.ones([4, 2])\n"
            "            coordinator.schedule(train_step, args=(batch,))\n") in code, code
    assert "            break\n" in code and "if step < 2000" not in code


@pytest.mark.parametrize("test, before", [
    ("step > 2000", "step = 0"),                  # never taken: no step runs
    ("step < 2000", "step = FLAGS.task_index"),   # not decided by the loop
    ("limit < 2000", "step = 0"),                 # another name
], ids=["not taken", "not a literal", "another name"])
def test_an_if_the_loop_does_not_decide_is_left_with_the_reason(test, before):
    line, message = left(decided(test, before).replace("def main(_):\n", "def main(_):\n    limit = 0\n"))
    assert f"if {test}:" in line and "chooses the runs of a step" in message, (line, message)


def test_an_if_whose_name_changes_before_it_is_left_with_the_reason():
    source = decided("step < 2000").replace("                step = 0\n",
                                            "                step = 0\n                step += FLAGS.task_index\n")
    line, message = left(source)
    assert "if step < 2000:" in line and "chooses the runs of a step" in message, (line, message)
