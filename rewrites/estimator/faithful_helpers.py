"""Tier 2: the train op and eval metrics a kept model_fn builds in helpers of its module, one result per mode
(part of rewrites/estimator/faithful.py, mixed into its FaithfulReader).

Real model_fns often build them in functions of their module that return a value in some modes and ``None`` in
the others. Such a helper, called by the model_fn alone, whose body is ``if mode == ModeKeys.X [or ...]:`` ending
in a ``return`` and returns ``None`` otherwise, is read as if its branch were written in the model_fn:

- the train op's (its modes hold TRAIN): its optimizer, the rate it computes (through a function of one
  ``return``, ``learn_rate(params, step)``, rewrites/estimator/faithful_rates.py) and its ``minimize`` /
  ``create_train_op`` / ``optimize_loss`` are compiled with the Keras model; the helper, its call and the functions
  only it called go (TF1's training, which the Keras model's step does); a branch doing anything else too is left;
- the metrics' (its modes hold EVAL): the dict it returns is eval_metric_ops, each ``tf.metrics`` call in it (or
  bound to a name it returns) becoming the tensors the call took, for the Keras metric; the helper stays.

Before::

    def learn_rate(params, step):
        return params["lr1"] + tf.train.exponential_decay(params["lr0"], step, params["lr2"], 1 / math.e)

    def train_op_of(loss, mode, params):
        if mode == tf.estimator.ModeKeys.TRAIN:
            lr = learn_rate(params, tf.train.get_or_create_global_step())
            optimizer = tf.train.AdamOptimizer(lr)
            return tf.contrib.training.create_train_op(loss, optimizer)
        else:
            return None

    def metrics_of(classes, labels, mode):
        if mode == tf.estimator.ModeKeys.TRAIN or mode == tf.estimator.ModeKeys.EVAL:
            accuracy = tf.metrics.accuracy(classes, labels)
            return {"accuracy": accuracy}
        else:
            return None

    def model_fn(features, labels, mode, params):
        ...
        train_op = train_op_of(loss, mode, params)
        eval_metrics = metrics_of(classes, labels, mode)
        return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op, eval_metric_ops=eval_metrics)

After::

    def metrics_of(classes, labels, mode):
        if mode == "train" or mode == "eval":
            accuracy = (classes, labels)
            return {"accuracy": accuracy}
        else:
            return None

    def model_fn(features, labels, mode, params):
        ...
        eval_metrics = metrics_of(classes, labels, mode)
        return {"loss": loss, "metrics": eval_metrics}
    ...  # LearningRate(keras.optimizers.schedules.LearningRateSchedule), computing
         # params["lr1"] + keras.optimizers.schedules.ExponentialDecay(...)(step); the build function compiles
         # TF1Adam(learning_rate=LearningRate(params), epsilon=1e-08) and keras.metrics.Accuracy(name="accuracy")
"""

from __future__ import annotations

import libcst as cst

from rewrites.estimator import create_train_op, optimize_loss
from rewrites.estimator.faithful_choice import is_optimizer
from rewrites.estimator.faithful_metrics import METRICS
from rewrites.estimator.faithful_rates import Rates, is_docstring
from rewrites.estimator.training import GLOBAL_STEP
from rewrites.program.spelling import MODE_KEYS
from rewrites.syntax import Unsupported, bound_values, first_line, is_name, is_none, single_assign, subtree

# What the helper's result is, by what its branch returns -> the mode TF1 read it in.
NEEDED = {"train_op": "train", "metrics": "eval"}


class HelperReading:
    """Mixed into FaithfulReader: helpers returning the train op or eval metrics in some modes."""

    def module_function(self, name: str) -> cst.FunctionDef | None:
        """The module's function ``name`` (defined once at its top level), or None."""
        nodes = self.view.top_level.get(name, [])
        return nodes[0] if len(nodes) == 1 and isinstance(nodes[0], cst.FunctionDef) else None

    def _mode_helper(self, target: str, call: cst.Call, statement) -> bool:
        """`train_op = helper(loss, mode, params)` or `metrics = helper(...)`: read, when ``call`` calls such a
        helper (else False)."""
        function = self.module_function(call.func.value) if isinstance(call.func, cst.Name) else None
        read = _branch(function, self.api) if function is not None else None
        kind = self._returns(read[1], read[2]) if read is not None else None
        if kind == "metrics":  # read if eval_metric_ops are its dict
            self.metric_helpers[target] = call, read
        if kind != "train_op":
            return False
        helper = self._used_in_mode(call, kind, read[0])
        _, branch, returned = read
        self._train_op_helper(helper, call, branch, returned)
        self.faithful.removed.append(statement)
        return True

    def _used_in_mode(self, call: cst.Call, kind: str, modes: set[str]) -> cst.FunctionDef:
        """The helper ``call`` calls, which gives the ``kind`` in the mode TF1 read it in."""
        helper = self._helper(call, "builds the train op or eval metrics")
        names = [param.name.value for param in helper.params.params]
        if "mode" not in names or not is_name(bound_values(call, names).get("mode"), "mode") or any(
                is_name(node.target, "mode") for node in subtree(helper.body) if isinstance(node, cst.AssignTarget)):
            raise Unsupported(call, f"`{helper.name.value}` reads a `mode` the model_fn does not give it as its own "
                                    "`mode`, in a model_fn kept as written (tier 2): not migrated yet")
        if NEEDED[kind] not in modes:
            raise Unsupported(helper, f"`{helper.name.value}` gives the {kind.replace('_', ' ')} only when the mode "
                                      f"is not {NEEDED[kind].upper()}, in a model_fn kept as written (tier 2): not "
                                      "migrated yet")
        return helper

    def _returns(self, branch: list, returned: cst.BaseExpression) -> str | None:
        """What the branch's last statement returns: the train op, the metrics, or None (something else)."""
        value = _bound_in(branch, returned) or returned
        if isinstance(value, cst.Dict):
            return "metrics"
        return "train_op" if isinstance(value, cst.Call) and self._trains(value) else None

    def _trains(self, call: cst.Call) -> bool:
        func = call.func
        return (isinstance(func, cst.Attribute) and func.attr.value == "minimize") or self.api(
            func) in optimize_loss.OPTIMIZE_LOSS or create_train_op.parameters(self.view, func) is not None

    # -- the train op ----------------------------------------------------------------------------

    def _train_op_helper(self, helper: cst.FunctionDef, call: cst.Call, branch: list, returned) -> None:
        """The helper's branch read as the model_fn's: its optimizer compiled, the helper gone."""
        names = [param.name.value for param in helper.params.params]
        given = bound_values(call, tuple(names))
        model_fns = self.rates, self.steps, self.optimizer_name
        self.steps, self.optimizer_name = {}, None
        self.rates = Rates(self.api, self.spelling.spelled, helper, branch, self.steps, [
            name for name in names if name != "params" or not is_name(given.get(name), "params")],
            self.module_function)
        removed = len(self.faithful.removed)
        try:
            self._train_op_branch(helper, branch, returned)
        finally:
            self.rates, self.steps, self.optimizer_name = model_fns
            inside = {id(node) for node in subtree(helper)}
            self.faithful.removed[removed:] = [gone for gone in self.faithful.removed[removed:]
                                               if id(gone) not in inside]
        loss = given.get(self.faithful.loss)
        if not isinstance(loss, cst.Name):
            raise Unsupported(call, f"`{helper.name.value}` minimizes its `{self.faithful.loss}`, which the model_fn "
                                    "must give it as a name, in a model_fn kept as written (tier 2)")
        self.faithful.loss = loss.value
        self.faithful.removed.append(helper)
        self.faithful.removed += self._called_by_it_alone(helper)
        self.faithful.notes.append(("TFM310", helper, f"`{helper.name.value}`, which built TF1's train op, goes: its "
                                                      "optimizer is compiled with the Keras model, whose step trains "
                                                      "the model_fn's loss"))

    def _train_op_branch(self, helper: cst.FunctionDef, branch: list, returned) -> None:
        locals_ = []
        for statement in branch[:-1]:
            assign = single_assign(statement)
            value = assign[1] if assign is not None else None
            api = self.api(value.func) if isinstance(value, cst.Call) else None
            if self.summary_line(statement):
                continue
            if isinstance(value, cst.Call) and (is_optimizer(api) or api in GLOBAL_STEP or self._trains(value)):
                self._statement(statement)
            elif assign is not None:
                locals_.append(statement)  # read by the optimizer's arguments, or refused below
            else:
                raise Unsupported(statement, f"`{first_line(statement)}` in `{helper.name.value}`, which builds the "
                                             "train op: a helper doing more than that, in a model_fn kept as written "
                                             "(tier 2), is not migrated yet")
        last = branch[-1]
        if _bound_in(branch, returned) is None:
            self._train_return(returned, last)
        carried = {id(statement) for statement in [*self.rates.schedules.values(), *self.rates.inlined.values()]}
        for statement in locals_:
            if id(statement) not in carried:
                raise Unsupported(statement, f"`{first_line(statement)}` in `{helper.name.value}`, which builds the "
                                             "train op, computes what the optimizer does not read: a helper doing "
                                             "more than the train op, in a model_fn kept as written (tier 2), is not "
                                             "migrated yet")
        if not self.faithful.optimizer:
            raise Unsupported(returned, f"`{helper.name.value}` must make a tf.train optimizer and minimize its loss "
                                        "with it")

    def _train_return(self, value: cst.Call, statement) -> None:
        """`return optimizer.minimize(loss, ...)`, `return create_train_op(loss, optimizer)`, `return
        optimize_loss(...)`."""
        chained = value.func.value if isinstance(value.func, cst.Attribute) else None
        if isinstance(chained, cst.Call) and is_optimizer(self.api(chained.func)):
            self._optimizer(None, self.api(chained.func), chained, statement)
            self._minimize(value, statement)
        elif self._is_minimize(value):
            self._minimize(value, statement)
        elif self.api(value.func) in optimize_loss.OPTIMIZE_LOSS:
            self._train_call(optimize_loss.read(value, self.api), statement, "optimize_loss")
        elif (parameters := create_train_op.parameters(self.view, value.func)) is not None:
            self._train_call(create_train_op.read(value, parameters, self.api), statement, "create_train_op")
        else:
            raise Unsupported(value, f"`{first_line(value)}` trains with an optimizer not made above")

    def _called_by_it_alone(self, helper: cst.FunctionDef) -> list[cst.FunctionDef]:
        """The module's functions that ``helper`` alone calls (its rate's `learn_rate`): they go with it."""
        gone = []
        for node in subtree(helper.body):
            function = self.module_function(node.func.value) if isinstance(node, cst.Call) and isinstance(
                node.func, cst.Name) else None
            references = self.view.tree.references_to(self.view, node.func.value) if function is not None else []
            if references and all(id(reference) in {id(n) for n in subtree(helper)} for _, reference in references):
                gone.append(function)
        return gone

    # -- the metrics ----------------------------------------------------------------------------

    def helper_metrics(self, name: cst.Name) -> bool:
        """eval_metric_ops bound to a metrics helper's result: its dict's metrics read (else False)."""
        found = self.metric_helpers.get(name.value)
        if found is None:
            return False
        call, (modes, branch, returned) = found
        helper = self._used_in_mode(call, "metrics", modes)
        ops = _bound_in(branch, returned) or returned
        for element in ops.elements:
            key, value = getattr(element, "key", None), element.value
            calls = self._metric_bound(helper, value) if isinstance(value, cst.Name) else [value]
            if not isinstance(key, cst.SimpleString) or not all(
                    isinstance(call, cst.Call) and self.api(call.func) in METRICS for call in calls):
                raise Unsupported(value, f"`{first_line(value)}` in the eval_metric_ops `{helper.name.value}` "
                                         "returns, in a model_fn kept as written (tier 2), is not migrated yet")
            for call in calls:
                self._metric(key.evaluated_value, call, helper)
        return True


def _branch(function: cst.FunctionDef, api) -> tuple[set[str], list, cst.BaseExpression] | None:
    """A helper returning a value in some modes and None in the others: (those modes, the branch's statements,
    what its last returns), or None."""
    body = [statement for statement in function.body.body if not is_docstring(statement)] if isinstance(
        function.body, cst.IndentedBlock) else []
    test = body[0] if body and isinstance(body[0], cst.If) else None
    if test is None or not isinstance(test.body, cst.IndentedBlock):
        return None
    orelse = test.orelse
    otherwise = [*(orelse.body.body if isinstance(orelse, cst.Else) and isinstance(orelse.body, cst.IndentedBlock)
                   else [orelse] if orelse is not None else []), *body[1:]]
    modes = _modes(test.test, api)
    branch = list(test.body.body)
    last = branch[-1].body[0] if isinstance(branch[-1], cst.SimpleStatementLine) else None
    if modes is None or not isinstance(last, cst.Return) or last.value is None or not all(
            _returns_none(statement) for statement in otherwise) or any(
            isinstance(node, cst.Return) for statement in branch[:-1] for node in subtree(statement)):
        return None
    return modes, branch, last.value


def _modes(test: cst.BaseExpression, api) -> set[str] | None:
    """`mode == tf.estimator.ModeKeys.TRAIN or mode == ...` -> {"train", ...}; None for any other test."""
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.Or):
        left, right = _modes(test.left, api), _modes(test.right, api)
        return left | right if left is not None and right is not None else None
    if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1 and isinstance(
            test.comparisons[0].operator, cst.Equal)):
        return None
    sides = [test.left, test.comparisons[0].comparator]
    keys = [MODE_KEYS.get(api(side)) for side in sides]
    named = [is_name(side, "mode") for side in sides]
    return {keys[1]} if named[0] and keys[1] else {keys[0]} if named[1] and keys[0] else None


def _returns_none(statement) -> bool:
    small = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 else None
    return isinstance(small, cst.Return) and (small.value is None or is_none(small.value))


def _bound_in(branch: list, returned: cst.BaseExpression) -> cst.BaseExpression | None:
    """The value the branch binds once to the name it returns (`train_op = ...; return train_op`), or None."""
    if not isinstance(returned, cst.Name):
        return None
    values = [assign[1] for statement in branch if (assign := single_assign(statement)) and assign[0] ==
              returned.value]
    return values[0] if len(values) == 1 else None

