"""TPUEstimator: an Estimator whose strategy the migrated program picks at run time.

``TPUEstimator(model_fn, config=tpu.RunConfig(..., tpu_config=TPUConfig(...)), use_tpu=...,
train_batch_size=64, eval_batch_size=64)`` is migrated like an Estimator: the batch size reaches the
input functions (and the model_fn) as ``params["batch_size"]``, which the migrated program passes
them; under TPUStrategy it is the global batch, as ``train_batch_size`` was.

- ``use_tpu=False`` (a literal): the TPU settings (``tpu_config``, ``cluster``, ``master``) do
  nothing; the program trains as a plain Estimator.
- ``use_tpu`` True (a literal, by default, or a flag): where the program names its TPU (the
  ``TPUClusterResolver(tpu=...)`` given as ``cluster=``, a ``tpu`` / ``tpu_name`` flag beside the
  ``use_tpu`` flag, ``master=``), ``strategy_for_this_task(tpu)`` (templates/tpu_strategy_bootstrap.py.j2)
  connects to that TPU and trains with ``tf.distribute.TPUStrategy`` when it is named at run time (and
  the flag asks for it), and takes the CPU/GPU path of every migrated program otherwise;
  ``TPUConfig(iterations_per_loop=N)`` becomes ``compile(steps_per_execution=N)``. The TPU path is
  generated, never run here (no TPU): TFM305 says so. ``num_shards`` and
  ``per_host_input_for_training`` need nothing (TPUStrategy shards the global batch); model
  parallelism (``num_cores_per_replica``, ``input_partition_dims``), TPU embeddings and what only a
  TPU runs in the model_fn (``bfloat16_scope``, ``outside_compilation``, ``tpu_function``) are left
  with a manual finding naming them.
- ``use_tpu`` a flag and no TPU named: migrated for the CPU/GPU path, as the flag's default False
  has it (TFM305).

Before::

    tpu = tf.distribute.cluster_resolver.TPUClusterResolver(FLAGS.tpu, zone=FLAGS.tpu_zone)
    config = tf.estimator.tpu.RunConfig(
        cluster=tpu, model_dir=FLAGS.model_dir, tpu_config=tf.estimator.tpu.TPUConfig(iterations_per_loop=100))
    estimator = tf.estimator.tpu.TPUEstimator(model_fn, config=config, train_batch_size=1024)

After::

    task_type, strategy = strategy_for_this_task(FLAGS.tpu, zone=FLAGS.tpu_zone)
    ...
    model.compile(optimizer, loss=..., steps_per_execution=100)   # in build_model
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from rewrites.estimator.config import TPU_RUN_CONFIG
from rewrites.estimator.program import Note
from rewrites.program.constants import UNKNOWN
from rewrites.program.places import Binding, Value
from rewrites.program.values import Values
from rewrites.syntax import Unsupported, bound_values, is_none, subtree

TPU_ESTIMATOR = "estimator.tpu.TPUEstimator"
TPU_ESTIMATOR_PARAMETERS = ("model_fn", "model_dir", "config", "params", "use_tpu", "train_batch_size",
                            "eval_batch_size", "predict_batch_size", "batch_axis", "eval_on_tpu", "export_to_tpu",
                            "export_to_cpu", "warm_start_from", "embedding_config_spec",
                            "export_saved_model_api_version")
IGNORED_WITHOUT_TPU = {"batch_axis", "eval_on_tpu", "export_to_tpu", "export_to_cpu", "export_saved_model_api_version"}
BATCH_SIZES = {"train": "train_batch_size", "eval": "eval_batch_size", "predict": "predict_batch_size"}
TPU_CONFIG = ("iterations_per_loop", "num_shards", "num_cores_per_replica", "per_host_input_for_training",
              "tpu_job_name", "initial_infeed_sleep_secs", "input_partition_dims", "eval_training_input_configuration",
              "experimental_host_call_every_n_steps", "experimental_allow_per_host_v2_parallel_get_next",
              "experimental_feed_hook")
MODEL_PARALLEL = {"num_cores_per_replica": "model parallelism (TPUConfig(num_cores_per_replica=...))",
                  "input_partition_dims": "spatial partitioning (TPUConfig(input_partition_dims=...))"}
RESOLVER = ("tpu", "zone", "project")     # TPUClusterResolver's: the TPU, and where it is
TPU_FLAGS = ("tpu", "tpu_name")           # flags naming the TPU, beside a use_tpu flag
TPU_ONLY_KEPT = {"CrossShardOptimizer", "TPUEstimatorSpec"}  # TPU APIs a model_fn may use: migrated


@dataclass
class TPUPath:
    """The TPU the migrated program may train on, as code at the driver."""

    tpu: str                     # the TPU's name or address; falsy at run time: the CPU/GPU path
    location: dict[str, str] = field(default_factory=dict)  # TPUClusterResolver's zone= and project=
    steps_per_execution: str | None = None  # TPUConfig's iterations_per_loop

    def arguments(self) -> str:
        """strategy_for_this_task's arguments."""
        return ", ".join([self.tpu, *(f"{name}={code}" for name, code in self.location.items())])

    def codes(self) -> list[str]:
        """The program's expressions the generated code reads."""
        return [self.tpu, *self.location.values(), *filter(None, [self.steps_per_execution])]


@dataclass
class TPUSettings:
    parameters: tuple[str, ...] = TPU_ESTIMATOR_PARAMETERS
    batch_sizes: dict[str, str] = field(default_factory=dict)   # mode -> code at the driver
    notes: list[Note] = field(default_factory=list)
    train_batch_size: Value | None = None
    use_tpu: Value | None = None       # as given; None: True, TPUEstimator's default
    known: object = True               # use_tpu's value before the program runs (UNKNOWN: a flag's)
    where: Value | None = None         # the TPUEstimator(...) call

    def params(self, params: Value | None, place) -> Value:
        """What the model_fn's params are when it trains: Estimator's, with TPUEstimator's `batch_size` and
        `use_tpu` (False: the model_fn is read for the CPU/GPU path, the same Keras model a TPU trains) added."""
        elements = [cst.StarredDictElement(params.node)] if params is not None else []
        elements.append(cst.DictElement(cst.SimpleString('"use_tpu"'), cst.Name("False")))
        if self.train_batch_size is not None:
            elements.append(cst.DictElement(cst.SimpleString('"batch_size"'), self.train_batch_size.node))
        return Value(cst.Dict(elements), params.place if params is not None else place)

    def on_tpu(self, values: Values, config: Value | None, model_fn, code, trail: list) -> TPUPath | None:
        """The TPU path of a program whose use_tpu may be True (None when it is False, or no TPU is named, said
        by a TFM305 note); Unsupported for what the TPU path cannot migrate. ``trail`` gets the names that only
        made the RunConfig's TPUClusterResolver (they go with the RunConfig)."""
        if self.known is False:
            return None
        arguments = _run_config(values, config)
        tpu_config = _call(values, arguments.get("tpu_config"), "TPUConfig")
        tpu_args = {name: Value(node, tpu_config.place) for name, node in
                    bound_values(tpu_config.node, TPU_CONFIG).items()} if tpu_config is not None else {}
        named = self._named(values, arguments, code, trail)
        if named is None:
            self.notes.append(Note("TFM305", *self._at(), (
                "TPUEstimator migrated for CPU/GPU workers" + (" (use_tpu=True)" if self.known is True else "") +
                ": the program names no TPU (no TPUClusterResolver as RunConfig(cluster=), tpu or tpu_name flag "
                "beside use_tpu, or master=), so the migrated program trains on CPU/GPU workers whatever use_tpu "
                "says; name the TPU and run tf-migrate again for TPUStrategy")))
            return None
        for name, what in MODEL_PARALLEL.items():
            if name in tpu_args and values.constant(tpu_args[name]) is not None:
                raise tpu_args[name].fail(f"{what}: TPUStrategy replicates the model on every core; migrate it by "
                                          "hand (tf.distribute.experimental.TPUStrategy's device assignment, DTensor)")
        if model_fn.function is not None:
            _tpu_only(model_fn)
        tpu, location = named
        when = f" when `{code(self.use_tpu)}` is true" if self.known is UNKNOWN else ""
        path = TPUPath(f"{_parenthesized(tpu)} if {code(self.use_tpu)} else None" if when else tpu, location)
        steps = tpu_args.get("iterations_per_loop")
        if steps is not None and values.constant(steps) is not None and not isinstance(values.constant(steps), str):
            path.steps_per_execution = code(steps)
        self.notes.append(Note("TFM305", *self._at(), (
            f"TPUEstimator -> the strategy picked at run time: TPUStrategy on the TPU `{tpu}` names{when} (generated, "
            "not verified here: tf-migrate was tested without a TPU), else the CPU/GPU path, the one verified "
            "(ParameterServerStrategy with TF_CONFIG, else local)" +
            (f"; iterations_per_loop -> compile(steps_per_execution={path.steps_per_execution})"
             if path.steps_per_execution else ""))))
        return path

    def _at(self) -> tuple:
        where = self.use_tpu or self.where
        return where.view, where.node

    def _named(self, values: Values, arguments: dict[str, Value], code, trail: list) -> tuple | None:
        """The TPU the program names (code at the driver), and its zone and project; None if none."""
        passed: list = []
        cluster = arguments.get("cluster")
        resolver = _call(values, cluster, "TPUClusterResolver", conditional=True, trail=passed)
        trail += [step for step in passed if isinstance(step, Binding) and step.assignment is not None and
                  len(getattr(step.assignment, "references", ())) == 1]
        if resolver is None and cluster is not None and isinstance(cluster.node, cst.Name):
            resolver = _assigned_resolver(values, cluster)  # `resolver = None; if ...: resolver = TPU...(...)`
        if resolver is not None:
            given = {name: Value(node, resolver.place) for name, node in
                     bound_values(resolver.node, (*RESOLVER, "job_name", "coordinator_name", "coordinator_address",
                                                  "credentials", "service", "discovery_url")).items()}
            if "tpu" in given and values.constant(given["tpu"]) is not None:
                return code(given["tpu"]), {name: code(given[name]) for name in RESOLVER[1:] if name in given}
        use_tpu = self.use_tpu
        if use_tpu is not None and isinstance(use_tpu.node, cst.Attribute):
            for name in TPU_FLAGS:
                flag = Value(use_tpu.node.with_changes(attr=cst.Name(name)), use_tpu.place)
                if values.flag_default(flag) is not UNKNOWN:
                    return code(flag), {}
        master = arguments.get("master")
        if master is not None and values.constant(master) not in (None, ""):
            return code(master), {}
        return None


def tpu_settings(values: Values, estimator: Value, code) -> TPUSettings:
    """What a TPUEstimator asks beyond an Estimator."""
    args = {name: Value(node, estimator.place) for name, node in
            bound_values(estimator.node, TPU_ESTIMATOR_PARAMETERS).items()}
    use_tpu = args.get("use_tpu")
    known = values.constant(use_tpu) if use_tpu is not None else True
    if "embedding_config_spec" in args:
        raise args["embedding_config_spec"].fail("TPU embeddings (embedding_config_spec): migrate them by hand")
    settings = TPUSettings(train_batch_size=args.get("train_batch_size"), use_tpu=use_tpu,
                           known=UNKNOWN if known not in (True, False) else known, where=estimator)
    for mode, name in BATCH_SIZES.items():
        if name in args and values.constant(args[name]) is not None:
            settings.batch_sizes[mode] = code(args[name])
    return settings


def _run_config(values: Values, config: Value | None) -> dict[str, Value]:
    """tpu.RunConfig's arguments (none for another config: ConfigReader says what it cannot read)."""
    call = _call(values, config, "RunConfig")
    if call is None or call.api() != "estimator.tpu.RunConfig":
        return {}
    return {name: Value(node, call.place) for name, node in bound_values(call.node, TPU_RUN_CONFIG).items()}


def _call(values: Values, node: Value | None, name: str, conditional: bool = False,
          trail: list | None = None) -> Value | None:
    """The `...name(...)` call ``node`` is made by, if it is (``conditional``: or `call if test else None`)."""
    if node is None:
        return None
    made = values.resolve(node, trail=trail)
    if conditional and isinstance(made.node, cst.IfExp):
        body, orelse = made.node.body, made.node.orelse
        branch = body if is_none(orelse) else orelse if is_none(body) else None
        made = values.resolve(Value(branch, made.place), trail=trail) if branch is not None else made
    api = made.api() if isinstance(made.node, cst.Call) else None
    return made if api is not None and api.rpartition(".")[2] == name else None


def _assigned_resolver(values: Values, name: Value) -> Value | None:
    """The TPUClusterResolver(...) among the values a name bound more than once is given (which stay)."""
    view = name.view
    scope = view.scope(name.node)
    for assignment in (scope[name.node.value] if scope is not None and name.node.value in scope else ()):
        statement = view.statement_of(assignment.node) if isinstance(assignment.node, cst.Name) else None
        small = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) else None
        if isinstance(small, cst.Assign) and len(small.targets) == 1 and small.targets[0].target is assignment.node:
            made = _call(values, Value(small.value, values.place_of(view, small)), "TPUClusterResolver")
            if made is not None:
                return made
    return None


def _tpu_only(model_fn) -> None:
    """Unsupported at the first TPU-only API the model_fn uses (its TPU path runs it)."""
    view = model_fn.view
    for node in subtree(model_fn.function):
        if isinstance(node, (cst.Attribute, cst.Name)):
            api = view.api(node) or ""
            parts = api.split(".")
            if any(part in ("tpu", "tpu_function") for part in parts[:-1]) and parts[-1] not in TPU_ONLY_KEPT \
                    and not api.startswith("estimator."):
                raise Unsupported(node, f"the model_fn uses {api}, which only a TPU runs: migrate it by hand "
                                        "(under TPUStrategy, Keras' mixed precision for bfloat16)", view.path)


def _parenthesized(code: str) -> str:
    return f"({code})" if " if " in code else code
