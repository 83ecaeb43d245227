"""What an Estimator program computes, as the readers found it and the emitter writes it.

Plain dataclasses between the layers: discover finds the pieces (rewrites/estimator/discover.py),
the readers say what each does (model_fn.py, inputs.py, config.py), emit.py writes the TF2
program. Code is kept as source text in the spelling of the place it will be written at.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from rewrites import hooks as hooks_code
from rewrites.tf1_checkpoints import Slots
from rewrites.program.modules import ModuleView
from rewrites.program.places import Place, Value


@dataclass
class Note:
    """A finding the migration reports besides its main one: (rule, where, what)."""

    rule: str
    view: ModuleView
    node: cst.CSTNode
    message: str


@dataclass
class Model:
    """What the model_fn builds, as Keras code (inside the generated build function)."""

    lines: list[str] = field(default_factory=list)   # statements computing the output from `features`
    bound: list[str] = field(default_factory=list)   # the names they bind
    layers: list[str] = field(default_factory=list)  # the Keras layers, in creation order
    chain: bool = True             # a straight chain of layers on a `features` tensor: a Sequential
    features_dict: bool = False    # the model's inputs are a dict of features
    reads_features: bool = False   # the model_fn reads features["name"] itself
    columns: bool = False          # feature columns read the features (input_layer, a canned estimator)
    output: str = ""               # the tensor the loss reads
    loss: str = ""
    loss_weight: str | None = None  # a scalar `weights=` of the TF1 loss: compile's loss_weights
    optimizer: str = ""
    after_compile: tuple[str, ...] = ()
    metrics: list[str] = field(default_factory=list)
    evaluates: bool = True          # False: the model_fn raises for EVAL
    predictions: list[tuple[str | None, str]] | None = None  # the PREDICT spec's dict: (key, value) code; key None:
    # one tensor, not a dict
    # the signatures an export has: (name, method, each output's prediction key; None: every prediction)
    signatures: list[tuple[str, str, dict[str, str] | None]] = field(
        default_factory=lambda: [("serving_default", "predict", None)])
    partitioner: str | None = None  # the strategy's variable_partitioner
    uses_params: bool = False       # the model_fn reads `params`, which Estimator(params=...) gave it
    tf1_momentum: bool = False      # the optimizer is the generated TF1Momentum class
    tf1_names_known: bool = True   # every layer is named after TF1's variable scope (rewrites/tf1_names.py)
    tf1_renamed: dict[str, str] = field(default_factory=dict)  # `layer/weight` -> TF1's name (code), where they differ
    forwarded: list[str] = field(default_factory=list)  # features forward_features adds to the predictions
    forwarded_exported: list[str] = field(default_factory=list)  # ... and to the exported predict signature too
    runtime_linear: bool = False  # its linear model weighs columns made at run time (column_writer.RUNTIME_LINEAR_SCOPE)
    mod_tables: list[str] = field(default_factory=list)  # TF1's names (code) of the tables looked up "mod"
    slots: Slots | None = None          # how TF1 named the optimizer's slots, and Keras' names of them
    wide_deep_slots: Slots | None = None  # ... of a combined model's linear optimizer
    hooks: hooks_code.Hooks = field(default_factory=hooks_code.Hooks)  # EstimatorSpec(training_hooks=...)
    notes: list[tuple[str, cst.CSTNode, str]] = field(default_factory=list)  # findings: (rule, node, message)
    dropped: list[cst.CSTNode] = field(default_factory=list)  # statements of the model_fn the Keras model has no use for
    helpers: list[tuple[ModuleView, cst.FunctionDef]] = field(default_factory=list)  # metric_fn: goes if unused
    imports: list[str] = field(default_factory=list)  # modules the Keras code needs (math, for a column's stddev)
    classes: list[str] = field(default_factory=list)  # classes the Keras code needs, written before it
    sample_weight: str | None = None  # the feature whose values weigh the examples: the inputs map it out
    label_vocabulary: list[str] | None = None  # the labels' strings, in the order of their ids: the inputs map them
    wide_deep: tuple[str, str] | None = None  # (linear, DNN) logits of a combined model: a keras WideDeepModel
    wide_deep_optimizer: str = ""             # its linear part's optimizer (``optimizer`` trains the DNN)
    faithful: object = None  # tier 2: the model_fn kept as written, run in Keras (rewrites/estimator/faithful.py)

    def names(self) -> list[str]:
        """The names the functional model's code binds."""
        return ["features", *self.bound]


@dataclass
class ModelFn:
    """The model_fn, and how the migrated program calls the Keras model function that replaces it. A canned
    estimator has no model_fn: its build function goes before ``home``, the top-level statement making it.
    model_to_estimator's has none either: the program's own code makes the model (``function``: a factory that
    returned the Estimator, and returns the model once migrated)."""

    view: ModuleView
    function: cst.FunctionDef | None
    place: Place                          # where its body is read (params bound to Estimator's)
    reference: Value                      # how Estimator(model_fn=...) named it (in a functools.partial: its function)
    bound: tuple[str, ...] = ()           # parameters given otherwise: a method's self, functools.partial's keywords
    keywords: dict[str, Value] = field(default_factory=dict)  # functools.partial's keywords: passed at the call
    takes_params: bool = False
    new_name: str = ""                    # of the function that replaces it
    canned: str | None = None             # the canned estimator's class name
    home: cst.BaseStatement | None = None
    keras: object = None                  # model_to_estimator's Keras model (rewrites/estimator/keras_model.py)
    wrapper: Value | None = None          # a function only calling it with keywords, which goes with the Estimator

    @property
    def where(self) -> Value:
        """What a finding about the model points at."""
        return Value(self.function, self.place) if self.function is not None else self.reference


@dataclass
class Input:
    """An input function as the migrated program calls it: the code giving its dataset, at the driver."""

    code: str
    view: ModuleView                     # where findings point
    node: cst.CSTNode
    repeats: bool | None                 # it visibly repeats without end; None: known only when the program runs
    edits: list[tuple[ModuleView, cst.CSTNode, cst.CSTNode | None]] = field(default_factory=list)  # (view, old, new)

    def fail(self, message: str):
        from rewrites.syntax import Unsupported

        return Unsupported(self.node, message, self.view.path)


TF1_CHECKPOINT_SECS = "600"  # RunConfig's save_checkpoints_secs when neither cadence is given


@dataclass
class Checkpoints:
    """RunConfig's checkpoint settings, as the migrated program keeps them."""

    keep: str                      # keep_checkpoint_max
    every_steps: str | None = None  # save_checkpoints_steps, as code at the driver
    every_secs: str = TF1_CHECKPOINT_SECS  # save_checkpoints_secs (without every_steps)
    every_hours: str | None = None  # keep_checkpoint_every_n_hours

    @property
    def comment(self) -> str:
        every = f"{self.every_steps} steps" if self.every_steps else f"{self.every_secs} seconds"
        return f"every {every} and at the end"


@dataclass
class WarmStart:
    """Estimator(warm_start_from=...): the TF1 checkpoint whose values the trainable variables start from."""

    path: str


@dataclass
class FitPlan:
    epochs: str
    steps_per_epoch: str | None  # None: one pass over an input that ends, counted (its cardinality)
    absolute: bool        # the steps count those of earlier runs (max_steps), so a resumed run trains the rest
    repeat: bool = False  # the input ends: fit trains on it repeated (one pass of it, counted)
    last_step: str | None = None  # absolute: the step training ends at (max_steps), that of its last checkpoint
    at_most: bool = False  # the input ends: the steps, or one pass of it if that is shorter (TF1 stopped there)
    ends_at_run_time: bool = False  # at_most, if the input ends: known when the program runs (`repeat(n)` of a flag)
    none_at_run_time: bool = False  # the steps may be None when the program runs: one pass then, as TF1 trained
    endless_at_run_time: bool = False  # one pass is all TF1 trained, and whether it ends is known when the program runs


@dataclass
class Setup:
    """What the Estimator and its RunConfig say, as code at the driver."""

    model_fn: ModelFn
    model: Model
    model_dir: str | None = None
    seed: str | None = None
    params: str | None = None             # the params the model function is called with
    checkpoints: Checkpoints | None = None  # None: the TF1 program wrote none (no model_dir, or switched off)
    warm_start: WarmStart | None = None
    batch_sizes: dict[str, str] = field(default_factory=dict)  # TPUEstimator: "train"/"eval"/"predict" -> code
    tpu: object = None  # TPUEstimator that may train on a TPU: its rewrites.estimator.tpu.TPUPath
    local_strategy: str | None = None  # RunConfig(train_distribute=...): the strategy it trains under on its own


@dataclass
class Driver:
    """One call that drives the Estimator: train_and_evaluate, train, evaluate or predict."""

    kind: str
    call: Value
    statement: cst.BaseStatement
    caller: bool = False  # it reads what the training function returned (a Handoff), where that is called
    passed: cst.Name | None = None  # the Estimator's name where its function is called, which passes it in


@dataclass
class Handoff:
    """A training function ending with ``return estimator``: it returns what its callers' drivers use instead (the
    model, the predictor), and each ``estimator = train_and_evaluate(...)`` of its callers binds that."""

    view: ModuleView
    returned: cst.Name           # `estimator` in `return estimator`
    targets: list[cst.Name]      # `estimator` in each caller's `estimator = train_and_evaluate(...)`


@dataclass
class Program:
    """One Estimator program, read: what the migrated code needs, and where it goes."""

    setup: Setup
    drivers: list[Driver]
    place: Place                        # where the drivers run
    anchor: cst.BaseStatement           # the statement the set-up goes before
    removed: list[tuple[ModuleView, cst.BaseStatement]] = field(default_factory=list)
    factories: list[tuple[ModuleView, cst.FunctionDef]] = field(default_factory=list)  # removed if unused
    kept_factories: list[cst.FunctionDef] = field(default_factory=list)  # kept for the columns they compute
    notes: list[Note] = field(default_factory=list)
    edits: list[tuple[ModuleView, cst.CSTNode, cst.CSTNode]] = field(default_factory=list)  # input functions changed
    attributes: list[tuple[ModuleView, cst.CSTNode, str]] = field(default_factory=list)  # estimator.eval_dir(): code
    graph_code: list[tuple[ModuleView, cst.CSTNode]] = field(default_factory=list)  # run in a TF1 graph (serving)
    handoff: Handoff | None = None

    @property
    def views(self) -> list[ModuleView]:
        found = [self.place.view, self.setup.model_fn.view, *(view for view, _ in self.removed),
                 *(view for view, _ in self.factories), *(view for view, _, _ in self.edits)]
        return list(dict.fromkeys(found))
