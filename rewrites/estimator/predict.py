"""``estimator.predict(input_fn, predict_keys=..., yield_single_examples=...)`` -> the generated
``predict_examples(predictor, dataset, ...)``, which yields what Estimator.predict yielded.

``predict_keys`` kept only the predictions of those keys (a dict still, even of one key);
``yield_single_examples=False`` yielded a batch at a time. The generated function takes the same
two options, and only when some call of the module uses them.

Before::

    preds = estimator.predict(input_fn=lambda: input_fn(test_files), predict_keys="prob")

After::

    preds = predict_examples(predictor, input_fn(test_files), keys=("prob",))
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

import libcst as cst

from rewrites.estimator.program import Input
from rewrites.program.places import Value


@dataclass
class Prediction:
    input: Input
    keys: tuple[str, ...] | None = None   # predict_keys; None: every key
    batches: bool = False                 # yield_single_examples=False: a batch at a time

    def arguments(self) -> str:
        """The options of the call to the generated function, after the dataset."""
        keys = f", keys={self.keys!r}" if self.keys is not None else ""
        return keys + (", single_examples=False" if self.batches else "")


def options(args: dict[str, Value], constant, predictions) -> tuple[tuple[str, ...] | None, bool]:
    """predict_keys and yield_single_examples of a predict call's arguments ``args``, read with ``constant``
    (Values.constant); ``predictions``: the model's (key, code) pairs, None when not read."""
    extra = sorted(set(args) - {"input_fn", "predict_keys", "yield_single_examples"})
    if extra:
        raise args[extra[0]].fail(f"predict({extra[0]}=...) is not migrated yet (hooks run in TF1's session loop; "
                                  "a checkpoint_path: restore it into the model first)")
    batches = False
    if "yield_single_examples" in args:
        single = constant(args["yield_single_examples"])
        if not isinstance(single, bool):
            raise args["yield_single_examples"].fail("predict's yield_single_examples must be True or False where "
                                                     "the migration can read it")
        batches = not single
    keys = _keys(args["predict_keys"], constant) if "predict_keys" in args else None
    if keys is not None and predictions is not None:
        if predictions[0][0] is None:
            raise args["predict_keys"].fail("predict_keys with predictions that are not a dict: TF1 raised a "
                                            "ValueError here")
        held = {_literal(key) for key, _ in predictions}
        missing = sorted(set(keys) - held)
        if missing and None not in held:
            raise args["predict_keys"].fail(f"predict_keys names `{missing[0]}`, which the migrated predictions do "
                                            "not hold")
    return keys, batches


def _keys(value: Value, constant) -> tuple[str, ...] | None:
    node = value.node
    elements = [Value(element.value, value.place) for element in node.elements] if isinstance(
        node, (cst.List, cst.Tuple)) else [value]
    keys = [constant(element) for element in elements]
    if not all(isinstance(key, str) for key in keys):
        if len(keys) == 1 and keys[0] is None:
            return None
        raise value.fail("predict_keys must be a key or a list of keys written out, or named by a constant")
    return tuple(keys)


def _literal(code: str) -> str | None:
    """A predictions key written as a string literal; None for any other expression."""
    try:
        key = ast.literal_eval(code)
    except (ValueError, SyntaxError):
        return None
    return key if isinstance(key, str) else None
