"""Reading an Estimator's input functions: the code that gives the migrated program each dataset.

Input functions as people write them, at ``TrainSpec(input_fn=...)`` or ``train(input_fn=...)``:
a function (``train_input_fn``), a lambda (``lambda: read(path, 32)``), a factory's closure
(``make_input_fn(path, ModeKeys.TRAIN, 32)``), ``functools.partial(input_fn, path=...)``; taking
``params`` or ``mode`` as Estimator passed them. The function must return a ``tf.data`` dataset
(``Dataset.from_tensor_slices``, ``TextLineDataset`` + ``decode_csv``, ``TFRecordDataset`` +
``parse_example``, ``make_csv_dataset``, ... and the methods of datasets), read through local
names that may be reassigned (``dataset = dataset.map(parse)``) and branches on the mode, which
are decided where the mode is known. One that returns ``dataset.make_one_shot_iterator().get_next()``
(or its ``iterator.get_next()`` tensors) is changed to return the dataset, which Estimator takes
as well: the migrated program needs the dataset. A factory returning a lambda that reads what the
factory computed (``x = pad_sequences(...)``) is called as the program called it, then its lambda;
the factory's locals set by the mode (``num_epochs = 1`` for EVAL) say whether the dataset repeats.

Before::

    def make_input_fn(path, mode, batch_size):
      def _input_fn():
        dataset = tf.data.TextLineDataset(path).map(parse_csv)
        if mode == tf.estimator.ModeKeys.TRAIN:
          dataset = dataset.shuffle(1000).repeat()
        return dataset.batch(batch_size).make_one_shot_iterator().get_next()
      return _input_fn

    train_spec = tf.estimator.TrainSpec(make_input_fn(TRAIN, tf.estimator.ModeKeys.TRAIN, 32), max_steps=100)

After::

    def make_input_fn(path, mode, batch_size):
      def _input_fn():
        dataset = tf.data.TextLineDataset(path).map(parse_csv)
        if mode == "train":
          dataset = dataset.shuffle(1000).repeat()
        return dataset.batch(batch_size)
      return _input_fn

    dataset = make_input_fn(TRAIN, "train", 32)()   # in the migrated program, repeating: trained 100 steps
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst
from libcst.metadata import QualifiedNameProvider

from rewrites.estimator.iterators import IteratorReading, enclosed
from rewrites.estimator.program import Input
from rewrites.program.spelling import MODE_KEYS
from rewrites.program.constants import UNKNOWN
from rewrites.program.places import CallSite, Place, Value
from rewrites.program.values import Values
from rewrites.syntax import Unsupported, source, subtree

# The methods of a dataset that return a dataset.
DATASET_METHODS = {"apply", "batch", "bucket_by_sequence_length", "cache", "concatenate", "enumerate", "filter",
                   "filter_with_legacy_function", "flat_map", "group_by_window", "ignore_errors", "interleave", "map",
                   "map_with_legacy_function", "padded_batch", "prefetch", "ragged_batch", "rebatch",
                   "rejection_resample", "repeat", "scan", "shard", "shuffle", "skip", "snapshot", "sparse_batch",
                   "take", "take_while", "unbatch", "unique", "window", "with_options"}
REPEATING_BY_DEFAULT = {"data.experimental.make_csv_dataset": "num_epochs",
                        "data.experimental.make_batched_features_dataset": "num_epochs"}
# `with` blocks an input_fn may return from: they place or name its ops, the dataset is the same.
PLACING = {"device", "name_scope", "compat.v1.name_scope", "compat.v1.device"}
ESTIMATOR_PASSES = ("mode", "params", "config", "input_context")
MODES = {"train": "train", "eval": "eval", "predict": "infer"}


@dataclass
class Dataset:
    """What a dataset expression is known to do."""

    repeats: bool | None   # None: it depends on something not known before the program runs


@dataclass(frozen=True)
class Known:
    """A local name bound to a value known before the program runs (UNKNOWN when it is not), in reading order:
    ``num_epochs = None if training else 1`` is known where the mode is."""

    value: object


class InputReader(IteratorReading):
    """Reads one input function for the migrated program, which calls it at ``driver``."""

    def __init__(self, values: Values, driver: Place, relocate, spelling) -> None:
        """``relocate(value) -> code`` at the driver; ``spelling(view)`` -> its Spelling."""
        self.values, self.driver, self.relocate, self.spelling = values, driver, relocate, spelling

    def read(self, node: Value, mode: str, params: str | None = None) -> Input:
        """``node``: the input_fn argument; ``mode``: "train", "eval" or "predict"; ``params``: what Estimator
        passed as params, as code at the driver (or the function giving it, called if the input_fn takes params)."""
        resolved = self.values.resolve(node)
        if isinstance(resolved.node, cst.Lambda):
            return self._lambda(node, resolved, mode)
        target, given = resolved, []
        if resolved.is_partial():
            target = self.values.resolve(Value(resolved.node.args[0].value, resolved.place))
            given = list(resolved.node.args[1:])
        if not isinstance(target.node, cst.FunctionDef):
            api = resolved.api() if isinstance(resolved.node, cst.Call) else None
            if api in ("estimator.inputs.numpy_input_fn", "estimator.inputs.pandas_input_fn"):
                raise resolved.fail(f"{api.rpartition('.')[2]}: TFM306/TFM307 turn it into a tf.data input_fn first "
                                    "(switched off, or left manual: see its finding)")
            raise node.fail("the input_fn must be a function, a lambda, a factory's function or a functools.partial "
                            "of one, defined in the files given")
        arguments = self._arguments(target.node, mode, params, node, _bound_by(target.node, given))
        dataset, edits = self._function(target, mode, self._called_by_estimator(target.node, mode, given,
                                                                                 resolved.place))
        call = self.relocate(node)
        return Input(f"{call}({arguments})", target.view, target.node, dataset.repeats, edits)

    def _lambda(self, node: Value, resolved: Value, mode: str) -> Input:
        lam = resolved.node
        params = lam.params
        if params.params or isinstance(params.star_arg, cst.Param) or params.kwonly_params or params.star_kwarg:
            raise resolved.fail("an input_fn lambda that takes arguments is not migrated yet: give them by hand")
        body = Value(lam.body, Place(resolved.view, lam, outer=resolved.place))
        edits: list = []
        state = self._factory_state(resolved.place, mode)
        dataset = self._expression(body, mode, state, edits)
        iterated = self._iterated(body.node, body.place, state) if dataset is None else None
        if iterated is not None:  # `lambda: <dataset>.make_one_shot_iterator().get_next()`
            dataset_node, dataset, _ = iterated
            edits.append((resolved.view, lam.body, enclosed(dataset_node)))
            body = Value(dataset_node, body.place)
        if dataset is None:
            raise resolved.fail("the input_fn lambda must return a tf.data dataset")
        try:
            code = self.relocate(body)
        except Unsupported:
            if not self._made_by_a_factory(resolved.place, node):
                raise
            code = f"{self.relocate(node)}()"  # a factory's lambda reading what the factory computed: call it
        return Input(code, resolved.view, lam, dataset.repeats, edits)

    def _made_by_a_factory(self, place: Place, node: Value) -> bool:
        """Is the input_fn argument ``node`` the call of the function (``place``) that made the lambda, or a name
        bound once to that call?"""
        if not (isinstance(place.function, cst.FunctionDef) and place.call is not None):
            return False
        if isinstance(node.node, cst.Name):
            binding = self.values.binding(node.node, node.place)
            return binding.kind == "value" and binding.value is not None and binding.value.node is place.call.node
        return place.call.node is node.node

    def _factory_state(self, place: Place, mode: str) -> dict:
        """What a factory that returns a lambda knows of its locals by then (`num_epochs = None`, then `1` when the
        mode is EVAL), read at the call that made the lambda; empty for a lambda written elsewhere."""
        state: dict = {}
        if isinstance(place.function, cst.FunctionDef) and place.call is not None:
            statements = [statement for statement in place.function.body.body
                          if not any(isinstance(node, cst.Return) for node in subtree(statement))]
            self._block(statements, place, mode, state, [], [])
        return state

    def _arguments(self, function: cst.FunctionDef, mode: str, params: str | None, node: Value,
                   bound: set[str]) -> str:
        """What Estimator passed: the parameters named mode, params, config that the input_fn takes (with a
        default or not: TF1 passed them to every input_fn that has them), but those a functools.partial bound."""
        names = [p.name.value for p in (*function.params.params, *function.params.kwonly_params)
                 if p.name.value not in bound]
        passed = []
        for name in names:
            if name == "mode":
                passed.append(f'mode="{MODES[mode]}"')
            elif name == "params":
                passed.append(f"params={(params() if callable(params) else params) or '{}'}")
            elif name in ("config", "input_context"):
                raise node.fail(f"an input_fn that reads Estimator's {name} is not migrated: give it what it needs "
                                "by hand")
        return ", ".join(passed)

    def _called_by_estimator(self, function: cst.FunctionDef, mode: str, given: list[cst.Arg] = (),
                             place: Place | None = None) -> CallSite:
        """The call Estimator made of the input_fn, as far as it decides branches: with its mode, and what a
        functools.partial of it gave (read where the partial is made)."""
        passed = [*given] if "mode" in _bound_by(function, given) else [
            *given, cst.Arg(cst.SimpleString(f'"{MODES[mode]}"'), keyword=cst.Name("mode"))]
        return CallSite(cst.Call(function.name, args=passed), place if given else self.driver)

    # -- the function's body -----------------------------------------------------------------

    def _function(self, function: Value, mode: str, call: CallSite | None = None,
                  edits: list | None = None) -> tuple[Dataset, list]:
        """What a function returns (the input_fn, or a function it calls: ``call``), reading its statements in
        order; the edits that make it return its dataset."""
        place = Place(function.view, function.node, call, outer=function.place)
        state: dict[str, Dataset] = {}
        returns: list[Dataset] = []
        edits = [] if edits is None else edits
        self._block(_lines(function.node.body), place, mode, state, returns, edits)
        if not returns:
            raise Value(function.node, place).fail(
                f"the input_fn `{function.node.name.value}` does not visibly return a tf.data dataset (features and "
                "labels tensors, a generator, ...): return the dataset")
        return _merge(returns), edits

    def _block(self, statements, place: Place, mode: str, state: dict, returns: list, edits: list) -> None:
        for statement in statements:
            if isinstance(statement, cst.If):
                self._if(statement, place, mode, state, returns, edits)
                continue
            if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
                continue
            if isinstance(statement, cst.With) and all(
                    isinstance(item.item, cst.Call) and item.asname is None
                    and place.view.api(item.item.func) in PLACING for item in statement.items):
                self._block(_lines(statement.body), place, mode, state, returns, edits)  # runs once, as written
                continue
            if not isinstance(statement, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
                if any(isinstance(n, cst.Return) for n in subtree(statement)):
                    raise Value(statement, place).fail("an input_fn that returns from inside a loop, with or try "
                                                       "block is not migrated yet")
                continue
            for small in statement.body:
                if isinstance(small, cst.Return):
                    returns.append(self._return(small, statement, place, mode, state, edits))
                elif isinstance(small, cst.Assign):
                    self._assign(small, statement, place, mode, state)

    def _if(self, statement: cst.If, place: Place, mode: str, state: dict, returns: list, edits: list) -> None:
        known = self.values.constant(Value(statement.test, place), self._constants(mode))
        branches = [_lines(statement.body)]
        orelse = statement.orelse
        other = [] if orelse is None else _lines(orelse.body) if isinstance(orelse, cst.Else) else [orelse]
        if known is True:
            self._block(branches[0], place, mode, state, returns, edits)
        elif known is False:
            self._block(other, place, mode, state, returns, edits)
        else:
            first, second = dict(state), dict(state)
            self._block(branches[0], place, mode, first, returns, edits)
            self._block(other, place, mode, second, returns, edits)
            for name in {*first, *second}:
                a, b = first.get(name), second.get(name)
                if isinstance(a, Known) or isinstance(b, Known):
                    state[name] = a if a == b else Known(UNKNOWN)
                    continue
                state[name] = _merge([x for x in (a, b) if x is not None]) if a and b else (a or b)
                if (a is None) != (b is None):
                    state[name] = Dataset(None)

    def _assign(self, assign: cst.Assign, statement, place: Place, mode: str, state: dict) -> None:
        targets = [t.target for t in assign.targets]
        names = [t.value for t in targets if isinstance(t, cst.Name)]
        made: list = []
        node = assign.value
        dataset = self._expression(Value(assign.value, place), mode, state, made)
        iterated = self._iterated(assign.value, place, state) if dataset is None else None
        if iterated is not None:  # `image, label = <dataset>.make_one_shot_iterator().get_next()`
            node, dataset, statements = iterated
            made = [(place.view, bound, None) for bound in statements]
        if dataset is not None and self._elements(targets, node, statement, dataset, made, state):
            return
        for name in names:
            if dataset is not None and iterated is None:  # an iterator's tensors are not its dataset
                state[name] = dataset
            elif len(targets) == 1:
                state[name] = Known(self.values.constant(Value(assign.value, place), self._constants(mode)))
            else:
                state.pop(name, None)

    def _return(self, small: cst.Return, statement, place: Place, mode: str, state: dict, edits: list) -> Dataset:
        value = small.value
        if value is None:
            raise Value(small, place).fail("the input_fn returns nothing")
        iterated = self._iterated(value, place, state)
        if iterated is not None:  # `return <dataset>.make_one_shot_iterator().get_next()`
            dataset_node, dataset, statements = iterated
            edits.append((place.view, value, enclosed(dataset_node)))
            edits.extend((place.view, statement, None) for statement in statements)
            return dataset
        dataset = self._expression(Value(value, place), mode, state, edits)
        if dataset is not None:
            return dataset
        tensors = self._tensors_of_an_iterator(value, place, state, mode, edits) or self._popped_label(
            value, place, state, mode, edits)
        if tensors is not None:
            return tensors
        restructured = self._restructured(value, place, state, edits) or self._computed_on_the_batch(
            value, statement, place, state, edits)
        if restructured is not None:
            return restructured
        raise Value(small, place).fail(f"the input_fn returns `{_short(value)}`, not a tf.data dataset: return the "
                                       "dataset")

    # -- datasets ------------------------------------------------------------------------------

    def _expression(self, value: Value, mode: str, state: dict, edits: list | None = None) -> Dataset | None:
        """What a dataset expression does, or None when it is not visibly a dataset."""
        node = value.node
        chain = []
        while isinstance(node, cst.Call):
            api = value.view.api(node.func)
            if api is not None:
                return self._dataset_api(api, node, value.place, chain, state)
            if _loads_a_split(node, value):  # tensorflow_datasets' load(..., split=...): a dataset of unknown length
                return self._chain(Dataset(False), chain, value.place, state)
            function = self.values.resolve(Value(node.func, value.place))
            if isinstance(function.node, cst.FunctionDef):  # a function of the program returning a dataset
                try:
                    inner, made = self._function(function, mode, CallSite(node, value.place))
                except Unsupported:
                    return None
                if edits is not None:  # the function returns its dataset once these are made
                    edits += made
                return self._chain(inner, chain, value.place, state)
            if not isinstance(node.func, cst.Attribute):
                return None
            chain.append(node)
            node = node.func.value
        if isinstance(node, cst.Name) and isinstance(state.get(node.value), Dataset):
            return self._chain(state[node.value], chain, value.place, state)
        if isinstance(node, cst.Name) and node.value not in state:
            binding = self.values.binding(node, value.place)
            if binding.kind == "value" and binding.value is not None:
                inner = self._expression(binding.value, mode, {})
                return self._chain(inner, chain, value.place, state) if inner is not None else None
        return None

    def _dataset_api(self, api: str, call: cst.Call, place: Place, chain: list, state: dict) -> Dataset | None:
        if not api.startswith("data."):
            return None
        repeats: bool | None = False
        if api in REPEATING_BY_DEFAULT:
            epochs = _keyword(call, REPEATING_BY_DEFAULT[api])
            repeats = True if epochs is None else self._is_none(Value(epochs, place), state)
        return self._chain(Dataset(repeats), chain, place, state)

    def _chain(self, base: Dataset, chain: list[cst.Call], place: Place, state: dict | None = None) -> Dataset | None:
        """``base`` with the methods of ``chain`` (innermost first) applied; None if one is not a dataset's."""
        repeats = base.repeats
        for call in reversed(chain):
            method = call.func.attr.value
            if method not in DATASET_METHODS:
                return None
            if method == "repeat":
                count = call.args[0].value if call.args else None
                now = True if count is None else self._is_none(Value(count, place), state)
                repeats = True if now is True or repeats is True else None if None in (now, repeats) else False
            elif method == "apply" and call.args and isinstance(call.args[0].value, cst.Call) and \
                    (place.view.api(call.args[0].value.func) or "").endswith("shuffle_and_repeat"):
                count = _keyword(call.args[0].value, "count") or (call.args[0].value.args[1].value
                                                                  if len(call.args[0].value.args) > 1 else None)
                now = True if count is None else self._is_none(Value(count, place), state)
                repeats = True if now is True or repeats is True else None
        return Dataset(repeats)

    def _is_none(self, value: Value, state: dict | None = None) -> bool | None:
        local = (state or {}).get(value.node.value) if isinstance(value.node, cst.Name) else None
        known = local.value if isinstance(local, Known) else self.values.constant(value)
        return None if known is UNKNOWN else known is None

    def _constants(self, mode: str) -> dict[str, object]:
        return dict(MODE_KEYS)

def _loads_a_split(call: cst.Call, value: Value) -> bool:
    """``tfds.load(name, split=...)``, which returns a tf.data dataset (without a split: a dict of them; with
    ``batch_size=-1``: tensors)."""
    names = value.view.get_metadata(QualifiedNameProvider, call.func, set())
    keywords = {arg.keyword.value: arg.value for arg in call.args if arg.keyword is not None}
    whole = isinstance(keywords.get("batch_size"), cst.UnaryOperation)
    return any(name.name == "tensorflow_datasets.load" for name in names) and "split" in keywords and not whole


def _merge(datasets: list[Dataset]) -> Dataset:
    repeats = {d.repeats for d in datasets}
    return Dataset(repeats.pop() if len(repeats) == 1 else None)


def _keyword(call: cst.Call, name: str) -> cst.BaseExpression | None:
    return next((arg.value for arg in call.args if arg.keyword is not None and arg.keyword.value == name), None)


def _short(node: cst.CSTNode) -> str:
    text = " ".join(source(node).split())
    return text if len(text) <= 60 else text[:57] + "..."


def _bound_by(function: cst.FunctionDef, given: list[cst.Arg]) -> set[str]:
    """The parameters of ``function`` a functools.partial's arguments ``given`` bind."""
    positional = [p.name.value for p in function.params.params]
    count = sum(1 for arg in given if arg.keyword is None and not arg.star)
    return {*positional[:count], *(arg.keyword.value for arg in given if arg.keyword is not None)}


def _lines(block: cst.BaseSuite) -> list:
    """The statements of a block; of `def input_fn(): return ...`, its one line."""
    return [block] if isinstance(block, cst.SimpleStatementSuite) else list(block.body)
