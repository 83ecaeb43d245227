"""TFM103 on a Supervisor program that starts its session's queue runners where its graph has none
(`sv.start_queue_runners(sess)` after `sess = sv.prepare_or_wait_for_session(...)`, as wucng/Tensorflow's
mnist_dist.py has it, feeding MNIST arrays): the call started nothing in TF1 and goes with the session, said in a
note. Where the module makes TF1 input queues, or the call starts runners of its own, the program is left."""

from __future__ import annotations

import pytest
from test_between_graph_shapes import SUPERVISOR, manual, migrated

OPENED = "    with sv.managed_session(server.target) as sess:\n"
STARTED = "      sv.start_queue_runners(sess)\n"
SOURCE = SUPERVISOR.replace(OPENED, OPENED + STARTED)


def test_starting_no_queue_runner_goes_with_the_session_with_a_note():
    assert SOURCE != SUPERVISOR
    result = migrated(SOURCE)
    assert "start_queue_runners" not in result.source and "sv." not in result.source
    (note,) = [f for f in result.findings if "started the queue runners" in f.message]
    assert note.rule == "TFM103" and SOURCE.splitlines()[note.line - 1] == STARTED.rstrip("\n")


@pytest.mark.parametrize("before, after", [
    ("\ndef main(", "\ndef file_names():\n  return tf.train.string_input_producer([\"train.csv\"])\n\n\ndef main("),
    (STARTED, STARTED.replace("(sess)", "(sess, [])")),
], ids=["a module making TF1 input queues", "runners of its own"])
def test_queue_runners_that_may_start_something_leave_the_program(before, after):
    source = SOURCE.replace(before, after)
    assert source != SOURCE
    line, message = manual(source)
    assert "start_queue_runners" in line and "is used besides" in message, (line, message)
