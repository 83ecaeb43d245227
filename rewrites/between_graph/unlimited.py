"""A training loop with no step limit: `while not sess.should_stop(): sess.run(train_op)` over an input that does
not end (tensorflow/ecosystem's docker MNIST trainer). TF1 trained until the task was stopped, saving checkpoints on
its session's timer (a MonitoredTrainingSession's `save_checkpoint_secs`, a Supervisor's `save_model_secs`: 600 by
default); the migrated loop schedules steps until the program is stopped, and its chief saves a checkpoint on the
same timer. A session saving every N steps instead (`save_checkpoint_steps`), and synchronous steps (every worker
saving on a timer of its own), are named (Unsupported).
"""

from __future__ import annotations

import libcst as cst

from rewrites.syntax import Unsupported, is_name, source

UNLIMITED_UNSAVED = ("the loop has no step limit: TF1 trained until its tasks were stopped, and so does the "
                     "migrated loop")
UNLIMITED = UNLIMITED_UNSAVED + "; its chief saves a checkpoint every {secs} seconds, as TF1's session did"
SYNCHRONOUS = ("the loop has no step limit, its steps synchronous: every worker would save on a timer of its own, "
               "out of step; say when training stops, e.g. `while not sv.should_stop() and step < N:`")


def timer(secs: cst.BaseExpression | None, steps: cst.BaseExpression | None) -> str | None:
    """The code of the seconds between the checkpoints TF1's session saved (None: it saved none on a timer)."""
    if steps is not None and not is_name(steps, "None"):
        raise Unsupported(steps, "the loop has no step limit and TF1's session saved a checkpoint every "
                                 f"`{source(steps)}` steps: say when training stops (`while not sess.should_stop() "
                                 "and step < N:`) or save by hand")
    if secs is None:
        return "600"
    if is_name(secs, "None") or isinstance(secs, cst.Integer) and secs.evaluated_value == 0:
        return None
    return source(secs)


def saving(loop: list[cst.BaseStatement], secs: str) -> list[cst.BaseStatement]:
    """The migrated loop (its statements before it, the `while True:`), saving a checkpoint every ``secs``
    seconds."""
    index = next(i for i, statement in enumerate(loop) if isinstance(statement, cst.While))
    while_loop = loop[index]
    save = cst.parse_statement(f"if time.time() - saved_at >= {secs}:  # TF1's session saved on this timer\n"
                               "    manager.save()\n    saved_at = time.time()\n")
    body = while_loop.body.with_changes(body=[save, *while_loop.body.body])  # before any `continue`
    return [*loop[:index], cst.parse_statement("saved_at = time.time()\n"), while_loop.with_changes(body=body),
            *loop[index + 1:]]
