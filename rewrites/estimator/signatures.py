"""What a model_fn's ``export_outputs`` names, shared by both tiers' readers: the signature keys, the export
outputs' methods, and TF1's default signature.

TF1 (``export_lib.build_all_signature_defs``) exported one signature per key of export_outputs; a single export
output was also the default (``serving_default``); several, none of them the default, raised.
"""

from __future__ import annotations

import libcst as cst

from rewrites.program.modules import ModuleView

# TF1's export output -> its signature's method and its arguments, each the output of that key.
EXPORT_OUTPUTS = {"estimator.export.PredictOutput": ("predict", {"outputs": None}),
                  "estimator.export.ClassificationOutput": ("classify", {"scores": "scores", "classes": "classes"}),
                  "estimator.export.RegressionOutput": ("regress", {"value": "outputs"})}
DEFAULT_SIGNATURE = "serving_default"
DEFAULT_KEY = "saved_model.signature_constants.DEFAULT_SERVING_SIGNATURE_DEF_KEY"


def signature_name(view: ModuleView, key: cst.BaseExpression | None) -> str | None:
    """An export_outputs key: a string, TF's constant of the default, or a module constant naming a string."""
    if isinstance(key, cst.Name) and len(view.top_level.get(key.value, ())) == 1:
        bound = view.top_level[key.value][0]
        key = bound.value if isinstance(bound, cst.Assign) and len(bound.targets) == 1 else key
    if isinstance(key, cst.SimpleString):
        return key.evaluated_value
    return DEFAULT_SIGNATURE if key is not None and view.api(key) == DEFAULT_KEY else None


def with_default(signatures: list[tuple]) -> list[tuple] | None:
    """The signatures TF1 exported: a single one is the default too; None when several have no default."""
    if len(signatures) == 1 and signatures[0][0] != DEFAULT_SIGNATURE:
        return [*signatures, (DEFAULT_SIGNATURE, *signatures[0][1:])]
    return signatures if DEFAULT_SIGNATURE in {signature[0] for signature in signatures} else None
