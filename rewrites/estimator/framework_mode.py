"""SageMaker's legacy framework mode: a module of functions whose Estimator the container made and trained.

SageMaker's TensorFlow containers up to TF 1.11 imported a training script that defines ``model_fn``,
``train_input_fn``, ``eval_input_fn`` and ``serving_input_fn`` and, with the job's hyperparameters, made an
``Estimator(model_fn, params=hyperparameters, config=RunConfig(model_dir, save_checkpoints_secs=300))`` and ran
``train_and_evaluate`` with ``TrainSpec(train_input_fn, max_steps=training_steps)`` (1000 unless given) and
``EvalSpec(eval_input_fn, steps=evaluation_steps, exporters=LatestExporter("Servo", serving_input_fn))`` (100),
handing each input function the training channel's folder or the hyperparameters by the name of its parameter
(sagemaker-tensorflow-container's ``tf_container/trainer.py``). No TF 2 container runs such a module.

The migration writes that procedure out as the module's ``if __name__ == "__main__":`` block, reading what
SageMaker's script mode gives a script (the hyperparameters as JSON in ``SM_HPS``, the channel in
``SM_CHANNEL_TRAINING``, the model folder in ``SM_MODEL_DIR``), and migrates the program that makes: the block
becomes the Keras training of the model_fn. Where that program cannot be migrated the module stays as it is and
the findings say what stopped it.
"""

from __future__ import annotations

import libcst as cst

from rewrites.program.modules import ModuleView, Tree
from rewrites.syntax import source

FUNCTIONS = ("model_fn", "train_input_fn", "eval_input_fn")
# The container's names for what an input function's parameter gets (trainer.py, _resolve_input_fn_param_value).
ARGUMENTS = {"training_dir": "training_dir", "dir": "training_dir", "hyperparameters": "hyperparameters",
             "params": "hyperparameters"}
DRIVER = '''

if __name__ == "__main__":
    # SageMaker's TensorFlow framework mode (its containers up to TF 1.11) trained this module's model_fn on
    # train_input_fn and eval_input_fn: what it did, written as the script SageMaker's script mode runs (SageMaker
    # sets SM_HPS, SM_CHANNEL_TRAINING and SM_MODEL_DIR; set them to run it elsewhere).
{imports}    hyperparameters = json.loads(os.environ.get("SM_HPS", "{{}}"))
    training_dir = os.environ.get("SM_CHANNEL_TRAINING")
    model_dir = hyperparameters.get("checkpoint_path", os.environ.get("SM_MODEL_DIR"))
    save_checkpoints_secs = hyperparameters.get("save_checkpoints_secs", 300)
    training_steps = hyperparameters.get("training_steps", 1000)
    evaluation_steps = hyperparameters.get("evaluation_steps", 100)
    config = {tf}.estimator.RunConfig(model_dir=model_dir, save_checkpoints_secs=save_checkpoints_secs)
    estimator = {tf}.estimator.Estimator(model_fn=model_fn, params=hyperparameters, config=config)
    train_spec = {tf}.estimator.TrainSpec(lambda: train_input_fn({train}), max_steps=training_steps)
{exporter}    eval_spec = {tf}.estimator.EvalSpec(lambda: eval_input_fn({eval}), steps=evaluation_steps{exporters})
    {tf}.estimator.train_and_evaluate(estimator, train_spec, eval_spec)
'''
EXPORTER = '    exporter = {tf}.estimator.LatestExporter("Servo", lambda: serving_input_fn(hyperparameters))\n'
MIGRATED = ("SageMaker framework mode (TF 1.11 and earlier containers) -> the `if __name__ == \"__main__\":` block "
            "script mode runs: what the container did (hyperparameters from SM_HPS, training_steps 1000 and "
            "evaluation_steps 100 unless given, the training channel, checkpoints and the Servo export in "
            "SM_MODEL_DIR or checkpoint_path), migrated")


def driver(view: ModuleView) -> str | None:
    """The `__main__` block SageMaker's framework mode amounted to for this module, or None when it is not such a
    module (its functions, a TensorFlow import, no `__main__` block of its own)."""
    functions = {s.name.value: s for s in view.module.body if isinstance(s, cst.FunctionDef)}
    if any(name not in functions for name in FUNCTIONS) or {"estimator_fn", "keras_model_fn"} & set(functions):
        return None
    tf = _tensorflow(view.module)
    if tf is None or any(isinstance(s, cst.If) and "__main__" in source(s.test) for s in view.module.body):
        return None
    given = {name: _arguments(functions[name]) for name in ("train_input_fn", "eval_input_fn")}
    if any(value is None for value in given.values()):
        return None
    imported = _imported(view.module)
    imports = "".join(f"    import {name}\n" for name in ("json", "os") if name not in imported)
    serving = "serving_input_fn" in functions
    return DRIVER.format(tf=tf, imports=imports + ("\n" if imports else ""), train=given["train_input_fn"],
                         eval=given["eval_input_fn"], exporter=EXPORTER.format(tf=tf) if serving else "",
                         exporters=", exporters=exporter" if serving else "")


def tried(tree: Tree, view: ModuleView, code: str) -> Tree:
    """``tree`` with the driver added to ``view``'s module."""
    return tree.with_source(view.path, tree.sources[view.path] + code)


def _arguments(function: cst.FunctionDef) -> str | None:
    """What the container passed the input function, by its parameters' names (None for a parameter it did not
    know, a star argument or a keyword-only one)."""
    params = function.params
    if params.star_arg not in (None, cst.MaybeSentinel.DEFAULT) or params.kwonly_params or params.star_kwarg:
        return None
    names = [param.name.value for param in params.params]
    if any(name not in ARGUMENTS for name in names):
        return None
    return ", ".join(ARGUMENTS[name] for name in names)


def _tensorflow(module: cst.Module) -> str | None:
    for statement in module.body:
        for small in statement.body if isinstance(statement, cst.SimpleStatementLine) else ():
            if isinstance(small, cst.Import):
                for alias in small.names:
                    if alias.evaluated_name in ("tensorflow", "tensorflow.compat.v1") and alias.asname is not None:
                        return alias.evaluated_alias
                    if alias.evaluated_name == "tensorflow" and alias.asname is None:
                        return "tensorflow"
    return None


def _imported(module: cst.Module) -> set[str]:
    """The names module-level `import x` statements bind."""
    found = set()
    for statement in module.body:
        for small in statement.body if isinstance(statement, cst.SimpleStatementLine) else ():
            if isinstance(small, cst.Import):
                found.update(alias.evaluated_alias or alias.evaluated_name for alias in small.names)
    return found
