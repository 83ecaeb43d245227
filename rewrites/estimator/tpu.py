"""TPUEstimator with ``use_tpu=False``: an Estimator that runs on CPUs and GPUs, migrated like one.

``TPUEstimator(model_fn, config=tpu.RunConfig(..., tpu_config=TPUConfig(...)), use_tpu=False,
train_batch_size=64, eval_batch_size=64)`` trains as a plain Estimator: the TPU settings
(``tpu_config``, ``cluster``, ``master``) do nothing, and the batch size reaches the input
functions (and the model_fn) as ``params["batch_size"]``, which the migrated program passes them.
``use_tpu`` must be False before the program runs: a literal, or a flag whose default is False
(the migrated program trains on CPU/GPU workers whatever the command line says; a TPU in use is
another migration, to TPUStrategy).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from rewrites.estimator.program import Note
from rewrites.program.constants import UNKNOWN
from rewrites.program.places import Value
from rewrites.program.values import Values
from rewrites.syntax import bound_values

TPU_ESTIMATOR = "estimator.tpu.TPUEstimator"
TPU_ESTIMATOR_PARAMETERS = ("model_fn", "model_dir", "config", "params", "use_tpu", "train_batch_size",
                            "eval_batch_size", "predict_batch_size", "batch_axis", "eval_on_tpu", "export_to_tpu",
                            "export_to_cpu", "warm_start_from", "embedding_config_spec",
                            "export_saved_model_api_version")
IGNORED_WITHOUT_TPU = {"batch_axis", "eval_on_tpu", "export_to_tpu", "export_to_cpu", "export_saved_model_api_version"}
BATCH_SIZES = {"train": "train_batch_size", "eval": "eval_batch_size", "predict": "predict_batch_size"}


@dataclass
class TPUSettings:
    parameters: tuple[str, ...] = TPU_ESTIMATOR_PARAMETERS
    batch_sizes: dict[str, str] = field(default_factory=dict)   # mode -> code at the driver
    notes: list[Note] = field(default_factory=list)
    train_batch_size: Value | None = None

    def params(self, params: Value | None, place) -> Value:
        """What the model_fn's params are when it trains: Estimator's, with TPUEstimator's `batch_size` and
        `use_tpu` (False) added."""
        elements = [cst.StarredDictElement(params.node)] if params is not None else []
        elements.append(cst.DictElement(cst.SimpleString('"use_tpu"'), cst.Name("False")))
        if self.train_batch_size is not None:
            elements.append(cst.DictElement(cst.SimpleString('"batch_size"'), self.train_batch_size.node))
        return Value(cst.Dict(elements), params.place if params is not None else place)


def tpu_settings(values: Values, estimator: Value, code) -> TPUSettings:
    """What a TPUEstimator asks beyond an Estimator; Unsupported when it would use a TPU."""
    args = {name: Value(node, estimator.place) for name, node in
            bound_values(estimator.node, TPU_ESTIMATOR_PARAMETERS).items()}
    use_tpu = args.get("use_tpu")
    known = values.constant(use_tpu, flags=True) if use_tpu is not None else True
    if known is not False:
        where = use_tpu or estimator
        raise where.fail("TPUEstimator with use_tpu=True (its default) trains on a TPU: migrating to TPUStrategy is "
                         "another migration; with use_tpu=False (a literal, or a flag defaulting to False) it is "
                         "migrated like an Estimator")
    if "embedding_config_spec" in args:
        raise args["embedding_config_spec"].fail("TPU embeddings (embedding_config_spec): migrate them by hand")
    settings = TPUSettings(train_batch_size=args.get("train_batch_size"))
    for mode, name in BATCH_SIZES.items():
        if name in args and values.constant(args[name]) is not None:
            settings.batch_sizes[mode] = code(args[name])
    if use_tpu is not None and values.constant(use_tpu) is UNKNOWN:
        settings.notes.append(Note("TFM305", use_tpu.view, use_tpu.node,
                                   "TPUEstimator migrated for use_tpu=False (the flag's default): the migrated "
                                   "program trains on CPU/GPU workers whatever the flag says; a TPU is another "
                                   "migration (TPUStrategy)"))
    return settings
