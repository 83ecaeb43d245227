"""A generator of small TF1 Estimator programs, composed from independent dimensions (issue 28, item 5).

``generate(seed)`` picks one value of every dimension in ``DIMENSIONS`` with ``random.Random(seed)``
(only combinations that are valid TF1 programs: see ``_valid``), plus a few sizes (features, units,
batch, steps, classes), and writes the program's text: one file (``train.py``), or two
(``task.py`` driving the model_fn of ``model.py``). Every program makes its own data with numpy
from a fixed seed, trains at most 20 steps of a tiny dense model, evaluates, and runs as it is
under TensorFlow 2.15.1 + tensorflow-estimator (except the values in ``STATIC_ONLY``, which are
TF 1.x code a TF 2 install cannot run).

    python -m programgen SEED [FOLDER]   (from tests/): print the combination, write the program

``PENDING``: values expected to work once the change they need lands; ``KNOWN_FAILING``: values
(or pairs of values) that fail today, each with the reason observed. The tests skip both; switch a
value on by deleting its entry.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from pathlib import Path

DIMENSIONS: dict[str, tuple[str, ...]] = {
    # How the program reaches TF1: `import tensorflow as tf` as TF 1.x programs were written (tf.layers, tf.train);
    # tf.compat.v1.X from `import tensorflow as tf`; `import tensorflow.compat.v1 as tf`; tf1 beside tf; and
    # `from tensorflow import estimator as tf_estimator` beside `import tensorflow.compat.v1 as tf`.
    "imports": ("tf1_style", "compat_attribute", "compat_v1_as_tf", "tf1_beside_tf", "estimator_module"),
    # Where the driver lives.
    "layout": ("module", "main_guard", "app_run", "argparse_main", "build_estimator", "two_modules"),
    "steps": ("literal", "flag", "params"),  # max_steps / EvalSpec steps: literal, a command-line flag, HPARAMS
    "model_dir": ("tempfile", "flag"),       # tempfile.mkdtemp(), or --model_dir defaulting to it
    # RunConfig: its options; "none": no RunConfig, model_dir given to the Estimator.
    "run_config": ("seed", "save_checkpoints_steps", "keep_checkpoint_max", "log_step_count_steps", "default",
                   "none"),
    "input_fn": ("slices_repeat", "slices_once", "slices_shuffle_seed", "factory", "lambda", "iterator",
                 "numpy_input_fn", "numpy_input_fn_shuffle"),
    "features": ("tensor", "dict1", "dict2"),  # a tensor, {"x": ...}, {"a": ..., "b": ...} concatenated
    "head": ("mean_squared_error", "absolute_difference", "huber_loss", "sparse_softmax_cross_entropy",
             "softmax_cross_entropy", "sigmoid_cross_entropy"),
    "metric": ("none", "accuracy", "mean_squared_error", "root_mean_squared_error", "mean_absolute_error", "auc"),
    "hidden": ("none", "dense", "Dense_object", "two_dense", "dropout"),
    "activation": ("relu", "tanh", "sigmoid", "none"),
    "optimizer": ("GradientDescent", "Adagrad", "Adam", "Momentum", "RMSProp", "Ftrl"),
    "learning_rate": ("literal", "params", "exponential_decay", "step_name_decay"),
    "global_step": ("get_global_step", "get_or_create_global_step"),
    # One EstimatorSpec for every mode; PREDICT then EVAL branches; a TRAIN branch returned first.
    "spec": ("single", "branches", "train_first"),
    "driver": ("train_and_evaluate", "train_then_evaluate", "train_steps_then_evaluate", "train_evaluate_predict"),
    "eval_steps": ("literal", "none"),  # evaluate(steps=2) / EvalSpec(steps=2), or steps=None: the whole input
    "result": ("none", "loss", "metric", "global_step"),
    "indent": ("2", "4"),
}

# TF 1.x code that TensorFlow 2 cannot run (`tf.layers`, `tf.train.*Optimizer` from `import tensorflow as tf`):
# migrated in the static sample, never trained.
STATIC_ONLY = {("imports", "tf1_style")}

# Values expected to work once the change they wait for lands: skipped by the tests until then.
PENDING: set[tuple[str, str]] = set()

# Values, or pairs of values, that fail today (observed with this generator; each: the reason seen). The tests
# skip a program holding any of them; delete an entry when its fix lands.
KNOWN_FAILING: dict[tuple[tuple[str, str], ...], str] = {}

REGRESSION = ("mean_squared_error", "absolute_difference", "huber_loss")
METRIC_HEADS = {"accuracy": ("sparse_softmax_cross_entropy",), "auc": ("sigmoid_cross_entropy",),
                "mean_squared_error": REGRESSION, "root_mean_squared_error": REGRESSION,
                "mean_absolute_error": REGRESSION}
METRIC_KEYS = {"accuracy": "accuracy", "auc": "auc", "mean_squared_error": "mse", "root_mean_squared_error": "rmse",
               "mean_absolute_error": "mae"}
LEARNING_RATES = {"GradientDescent": 0.05, "Adagrad": 0.1, "Adam": 0.01, "Momentum": 0.01, "RMSProp": 0.01,
                  "Ftrl": 0.1}
FLAG_LAYOUTS = ("app_run", "argparse_main")  # layouts that always read a command line


def _valid(combo: dict[str, str]) -> bool:
    """False when the values chosen so far cannot be one TF1 program (only the dimensions known are checked)."""
    get = combo.get
    if get("layout") == "build_estimator" and get("run_config") == "none":
        return False  # build_estimator(config)
    if get("layout") in FLAG_LAYOUTS and get("steps") not in (None, "flag") and get("model_dir") == "tempfile":
        return False  # a main(argv) reads at least one flag
    if get("metric") not in (None, "none") and get("head") not in METRIC_HEADS[get("metric")]:
        return False
    if get("result") == "metric" and get("metric") == "none":
        return False
    if get("driver") == "train_evaluate_predict" and get("spec") not in (None, "branches"):
        return False  # only the branches return predictions
    if get("activation") not in (None, "none") and get("hidden") == "none":
        return False
    return True


@dataclass
class Program:
    seed: int
    combination: dict[str, str]
    sizes: dict[str, int]
    files: dict[str, str] = field(default_factory=dict)  # relative path -> text
    entry: str = "train.py"                               # the file to run

    def keys(self) -> set[tuple[str, str]]:
        return set(self.combination.items())

    @property
    def static_only(self) -> bool:
        return bool(self.keys() & STATIC_ONLY)

    @property
    def pending(self) -> bool:
        return bool(self.keys() & PENDING)

    def known_failing(self) -> list[str]:
        """The KNOWN_FAILING reasons that hold for this program."""
        return [reason for values, reason in KNOWN_FAILING.items() if set(values) <= self.keys()]

    def describe(self) -> str:
        values = " ".join(f"{key}={value}" for key, value in self.combination.items())
        sizes = " ".join(f"{key}={value}" for key, value in self.sizes.items())
        return f"seed {self.seed}: {values} ({sizes})"

    def write(self, folder: Path) -> Path:
        folder.mkdir(parents=True, exist_ok=True)
        for name, text in self.files.items():
            (folder / name).write_text(text)
        return folder / self.entry


def combination(seed: int) -> tuple[dict[str, str], dict[str, int]]:
    rng = random.Random(seed)
    combo: dict[str, str] = {}
    for dimension, values in DIMENSIONS.items():
        allowed = [value for value in values if _valid({**combo, dimension: value})]
        combo[dimension] = rng.choice(allowed)
    assert _valid(combo), combo
    sizes = {
        "features": 4 if combo["features"] == "dict2" else rng.choice((2, 3, 4)),
        "units": rng.choice((4, 8)),
        "batch": rng.choice((4, 8)),
        "steps": rng.choice((5, 10, 20)),
        "classes": 2 if combo["head"] == "sigmoid_cross_entropy" else rng.choice((2, 3)),
        "data_seed": rng.randrange(1000),
    }
    return combo, sizes


def generate(seed: int) -> Program:
    combo, sizes = combination(seed)
    program = Program(seed, combo, sizes)
    _Writer(program).write()
    return program


# -- writing ---------------------------------------------------------------------------------------------------


class _Writer:
    """Writes one program; indentation is written as tabs and made the program's own at the end."""

    def __init__(self, program: Program) -> None:
        self.p = program
        self.c = program.combination
        self.s = program.sizes
        imports = self.c["imports"]
        # v1: the TF1 API (layers, losses, train, metrics, nn, data iterators); est: tf.estimator; data: tf.data.
        self.v1, self.est, self.data = {
            "tf1_style": ("tf.", "tf.estimator.", "tf.data."),
            "compat_attribute": ("tf.compat.v1.", "tf.estimator.", "tf.data."),
            "compat_v1_as_tf": ("tf.", "tf.estimator.", "tf.data."),
            "tf1_beside_tf": ("tf1.", "tf1.estimator.", "tf.data."),
            "estimator_module": ("tf.", "tf_estimator.", "tf.data."),
        }[imports]
        self.flags = "absl" if self.c["layout"] == "app_run" else "argparse"
        self.uses_flags = self.c["steps"] == "flag" or self.c["model_dir"] == "flag"
        self.uses_params = self.c["steps"] == "params" or self.c["learning_rate"] == "params"

    # pieces -----------------------------------------------------------------------------------------------------

    def tf_imports(self) -> list[str]:
        return {
            "tf1_style": ["import tensorflow as tf"],
            "compat_attribute": ["import tensorflow as tf"],
            "compat_v1_as_tf": ["import tensorflow.compat.v1 as tf"],
            "tf1_beside_tf": ["import tensorflow as tf", "import tensorflow.compat.v1 as tf1"],
            "estimator_module": ["import tensorflow.compat.v1 as tf", "from tensorflow import estimator as tf_estimator"],
        }[self.c["imports"]]

    def mode_key(self, key: str) -> str:
        return f"{self.est}ModeKeys.{key}"

    def data_lines(self) -> list[str]:
        s, head = self.s, self.c["head"]
        lines = [f"rng = np.random.RandomState({s['data_seed']})",
                 f"train_x = rng.normal(size=({TRAIN_ROWS}, {s['features']})).astype(np.float32)",
                 f"eval_x = rng.normal(size=({EVAL_ROWS}, {s['features']})).astype(np.float32)"]
        if head in REGRESSION:
            lines += [f"true_weights = rng.normal(size=({s['features']}, 1))",
                      "train_y = (train_x.dot(true_weights) + 0.1 * rng.normal(size=(%d, 1))).astype(np.float32)"
                      % TRAIN_ROWS,
                      "eval_y = eval_x.dot(true_weights).astype(np.float32)"]
        elif head == "sigmoid_cross_entropy":
            lines += [f"true_weights = rng.normal(size=({s['features']}, 1))",
                      "train_y = (train_x.dot(true_weights) > 0).astype(np.float32)",
                      "eval_y = (eval_x.dot(true_weights) > 0).astype(np.float32)"]
        elif head == "sparse_softmax_cross_entropy":
            lines += [f"true_weights = rng.normal(size=({s['features']}, {s['classes']}))",
                      "train_y = np.argmax(train_x.dot(true_weights), axis=1).astype(np.int32)",
                      "eval_y = np.argmax(eval_x.dot(true_weights), axis=1).astype(np.int32)"]
        else:  # one-hot labels
            lines += [f"true_weights = rng.normal(size=({s['features']}, {s['classes']}))",
                      f"train_y = np.eye({s['classes']}, dtype=np.float32)[np.argmax(train_x.dot(true_weights), 1)]",
                      f"eval_y = np.eye({s['classes']}, dtype=np.float32)[np.argmax(eval_x.dot(true_weights), 1)]"]
        if self.c["driver"] == "train_evaluate_predict":
            lines.append("predict_x = eval_x[:4]")
        if self.c["features"] == "dict2":  # two feature tensors, as a program reads two columns
            for part in ("train", "eval", "predict")[:3 if self.c["driver"] == "train_evaluate_predict" else 2]:
                lines += [f"{part}_a, {part}_b = {part}_x[:, :2], {part}_x[:, 2:]"]
        return lines

    def features(self, x: str) -> str:
        part = x[:-2]  # train, eval, predict
        return {"tensor": x, "dict1": f'{{"x": {x}}}',
                "dict2": f'{{"a": {part}_a, "b": {part}_b}}'}[self.c["features"]]

    def batch(self) -> str:
        return 'HPARAMS["batch_size"]' if self.uses_params else "BATCH_SIZE"

    def input_functions(self) -> tuple[list[str], str, str]:
        """(the definitions, the train input_fn expression, the eval input_fn expression)."""
        form, data, v1, batch = self.c["input_fn"], self.data, self.v1, self.batch()
        train_f, eval_f = self.features("train_x"), self.features("eval_x")
        if form in ("slices_repeat", "slices_once", "slices_shuffle_seed", "iterator"):
            tail = {"slices_repeat": ".repeat()", "slices_once": "", "iterator": ".repeat()",
                    "slices_shuffle_seed": f".shuffle(64, seed={self.s['data_seed']}).repeat()"}[form]
            lines = ["def train_input_fn():",
                     f"\tdataset = {data}Dataset.from_tensor_slices(({train_f}, train_y))"]
            if form == "iterator":
                lines += [f"\tdataset = dataset{tail}.batch({batch})",
                          f"\tfeatures, labels = {v1}data.make_one_shot_iterator(dataset).get_next()",
                          "\treturn features, labels"]
            else:
                lines += [f"\treturn dataset{tail}.batch({batch})"]
            lines += ["", "", "def eval_input_fn():",
                      f"\treturn {data}Dataset.from_tensor_slices(({eval_f}, eval_y)).batch({batch})"]
            return lines, "train_input_fn", "eval_input_fn"
        if form == "factory":
            lines = ["def make_input_fn(x, y, mode, batch_size):",
                     "\tdef input_fn():",
                     f"\t\tdataset = {data}Dataset.from_tensor_slices((x, y))",
                     f"\t\tif mode == {self.mode_key('TRAIN')}:",
                     "\t\t\tdataset = dataset.repeat()",
                     "\t\treturn dataset.batch(batch_size)",
                     "\treturn input_fn"]
            return (lines, f"make_input_fn({train_f}, train_y, {self.mode_key('TRAIN')}, {batch})",
                    f"make_input_fn({eval_f}, eval_y, {self.mode_key('EVAL')}, {batch})")
        if form == "lambda":
            lines = ["def input_fn(x, y, batch_size, training):",
                     f"\tdataset = {data}Dataset.from_tensor_slices((x, y))",
                     "\tif training:",
                     "\t\tdataset = dataset.repeat()",
                     "\treturn dataset.batch(batch_size)"]
            return (lines, f"lambda: input_fn({train_f}, train_y, {batch}, True)",
                    f"lambda: input_fn({eval_f}, eval_y, {batch}, False)")
        shuffle = "True" if form == "numpy_input_fn_shuffle" else "False"
        numpy_input_fn = f"{v1}estimator.inputs.numpy_input_fn"
        lines = [f"train_input_fn = {numpy_input_fn}(",
                 f"\tx={train_f}, y=train_y, batch_size={batch}, num_epochs=None, shuffle={shuffle})",
                 f"eval_input_fn = {numpy_input_fn}(",
                 f"\tx={eval_f}, y=eval_y, batch_size={batch}, num_epochs=1, shuffle=False)"]
        return lines, "train_input_fn", "eval_input_fn"

    def predict_input(self) -> tuple[list[str], str]:
        features = self.features("predict_x")
        if self.c["input_fn"].startswith("numpy_input_fn"):
            return [], (f"{self.v1}estimator.inputs.numpy_input_fn(x={features}, batch_size={self.batch()}, "
                        "num_epochs=1, shuffle=False)")
        return ["def predict_input_fn():",
                f"\treturn {self.data}Dataset.from_tensor_slices({features}).batch({self.batch()})"], "predict_input_fn"

    def model_fn(self) -> list[str]:
        c, s, v1 = self.c, self.s, self.v1
        head = c["head"]
        params = ", params" if c["learning_rate"] == "params" else ""
        lines = [f"def model_fn(features, labels, mode{params}):"]
        net = {"tensor": "features", "dict1": 'features["x"]',
               "dict2": f'{v1}concat([features["a"], features["b"]], axis=1)'}[c["features"]]
        if c["features"] == "dict2":
            lines.append(f"\tnet = {net}")
            net = "net"
        activation = "" if c["activation"] == "none" else f", activation={v1}nn.{c['activation']}"
        units = s["units"]
        hidden = c["hidden"]
        if hidden == "dropout":
            lines.append(f"\ttraining = mode == {self.mode_key('TRAIN')}")
        if hidden in ("dense", "two_dense", "dropout"):
            lines.append(f"\tnet = {v1}layers.dense({net}, {units}{activation})")
            net = "net"
        if hidden == "two_dense":
            lines.append(f"\tnet = {v1}layers.dense(net, {units}{activation})")
        if hidden == "Dense_object":
            lines.append(f"\tnet = {v1}layers.Dense({units}{activation})({net})")
            net = "net"
        if hidden == "dropout":
            lines.append(f"\tnet = {v1}layers.dropout(net, rate=0.1, training=training)")
        outputs = 1 if head in REGRESSION or head == "sigmoid_cross_entropy" else s["classes"]
        out = "predictions" if head in REGRESSION else "logits"
        lines.append(f"\t{out} = {v1}layers.dense({net}, {outputs})")
        predicted = out if head in REGRESSION else (
            f"{v1}sigmoid(logits)" if head == "sigmoid_cross_entropy" else f"{v1}argmax(logits, 1)")
        if c["spec"] == "branches":
            lines += [f"\tif mode == {self.mode_key('PREDICT')}:",
                      f'\t\treturn {self.est}EstimatorSpec(mode, predictions={{"output": {predicted}}})']
        loss = {
            "mean_squared_error": f"{v1}losses.mean_squared_error(labels=labels, predictions=predictions)",
            "absolute_difference": f"{v1}losses.absolute_difference(labels, predictions)",
            "huber_loss": f"{v1}losses.huber_loss(labels, predictions)",
            "sparse_softmax_cross_entropy": f"{v1}losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)",
            "softmax_cross_entropy": f"{v1}losses.softmax_cross_entropy(onehot_labels=labels, logits=logits)",
            "sigmoid_cross_entropy": f"{v1}losses.sigmoid_cross_entropy(multi_class_labels=labels, logits=logits)",
        }[head]
        lines.append(f"\tloss = {loss}")
        metric = c["metric"]
        metrics = ""
        if metric != "none":
            argument = {"accuracy": f"{v1}argmax(logits, 1)", "auc": f"{v1}sigmoid(logits)"}.get(metric, "predictions")
            key = METRIC_KEYS[metric]
            lines.append(f"\t{key} = {v1}metrics.{metric}(labels=labels, predictions={argument})")
            metrics = f'{{"{key}": {key}}}'
        train = self.train_lines()
        if c["spec"] == "branches":
            if metrics:
                lines += [f"\tif mode == {self.mode_key('EVAL')}:",
                          f"\t\treturn {self.est}EstimatorSpec(mode, loss=loss, eval_metric_ops={metrics})"]
            else:
                lines += [f"\tif mode == {self.mode_key('EVAL')}:",
                          f"\t\treturn {self.est}EstimatorSpec(mode, loss=loss)"]
            lines += train + [f"\treturn {self.est}EstimatorSpec(mode, loss=loss, train_op=train_op)"]
        elif c["spec"] == "train_first":
            lines += [f"\tif mode == {self.mode_key('TRAIN')}:"]
            lines += ["\t" + line for line in train]
            lines += [f"\t\treturn {self.est}EstimatorSpec(mode, loss=loss, train_op=train_op)"]
            ops = f", eval_metric_ops={metrics}" if metrics else ""
            lines += [f"\treturn {self.est}EstimatorSpec(mode, loss=loss{ops})"]
        else:
            ops = f", eval_metric_ops={metrics}" if metrics else ""
            lines += train + [f"\treturn {self.est}EstimatorSpec(mode, loss=loss, train_op=train_op{ops})"]
        return lines

    def train_lines(self) -> list[str]:
        c, v1 = self.c, self.v1
        rate = LEARNING_RATES[c["optimizer"]]
        lines = []
        step = f"{v1}train.{c['global_step']}()"
        schedule = c["learning_rate"]
        if schedule == "literal":
            learning_rate = str(rate)
        elif schedule == "params":
            learning_rate = 'params["learning_rate"]'
        elif schedule == "exponential_decay":
            lines.append(f"\tlearning_rate = {v1}train.exponential_decay({rate}, {step}, decay_steps=5, "
                         "decay_rate=0.9)")
            learning_rate = "learning_rate"
        else:  # the global step held in a name, read by the schedule and by minimize
            lines += [f"\tstep = {step}",
                      f"\tlearning_rate = {v1}train.exponential_decay({rate}, step, decay_steps=5, decay_rate=0.9)"]
            learning_rate, step = "learning_rate", "step"
        optimizer = {
            "GradientDescent": f"GradientDescentOptimizer({learning_rate})",
            "Adagrad": f"AdagradOptimizer({learning_rate})",
            "Adam": f"AdamOptimizer(learning_rate={learning_rate})",
            "Momentum": f"MomentumOptimizer({learning_rate}, momentum=0.9)",
            "RMSProp": f"RMSPropOptimizer({learning_rate})",
            "Ftrl": f"FtrlOptimizer({learning_rate})",
        }[c["optimizer"]]
        lines += [f"\toptimizer = {v1}train.{optimizer}",
                  f"\ttrain_op = optimizer.minimize(loss, global_step={step})"]
        return lines

    def flag_definitions(self, indent: str) -> list[str]:
        """The command line: absl flags (module level) or an argparse parser (at ``indent``)."""
        steps = self.s["steps"]
        if self.flags == "absl":
            lines = []
            if self.c["steps"] == "flag":
                lines.append(f'flags.DEFINE_integer("train_steps", {steps}, "global step to train to")')
            if self.c["model_dir"] == "flag":
                lines.append('flags.DEFINE_string("model_dir", None, "checkpoints (a temporary folder if not given)")')
            return lines + ["FLAGS = flags.FLAGS"]
        lines = [f"{indent}parser = argparse.ArgumentParser()"]
        if self.c["steps"] == "flag":
            lines.append(f'{indent}parser.add_argument("--train_steps", type=int, default={steps})')
        if self.c["model_dir"] == "flag":
            lines.append(f'{indent}parser.add_argument("--model_dir", help="checkpoints (a temporary folder if not '
                         'given)")')
        return lines

    def flag(self, name: str) -> str:
        return f"FLAGS.{name}" if self.flags == "absl" else f"args.{name}"

    def driver(self, model_fn: str) -> list[str]:
        """The driver's statements, at no indentation; ``model_fn``: its name where the driver stands."""
        c, s, est, v1 = self.c, self.s, self.est, self.v1
        lines = ["random.seed(42)"]
        if c["run_config"] == "log_step_count_steps":
            lines.append(f"{v1}logging.set_verbosity({v1}logging.INFO)")
        if c["model_dir"] == "flag":
            lines.append(f"model_dir = {self.flag('model_dir')} or tempfile.mkdtemp()")
        else:
            lines.append("model_dir = tempfile.mkdtemp()")
        options = {"seed": ", tf_random_seed=42", "save_checkpoints_steps": ", tf_random_seed=42, "
                   "save_checkpoints_steps=5", "keep_checkpoint_max": ", tf_random_seed=42, keep_checkpoint_max=2",
                   "log_step_count_steps": ", tf_random_seed=42, log_step_count_steps=1", "default": "",
                   "none": None}[c["run_config"]]
        params = ", params=HPARAMS" if c["learning_rate"] == "params" else ""
        if options is not None:
            lines.append(f"config = {est}RunConfig(model_dir=model_dir{options})")
        if c["layout"] == "build_estimator":
            lines.append("estimator = build_estimator(config)")
        elif options is None:
            lines.append(f"estimator = {est}Estimator(model_fn={model_fn}, model_dir=model_dir{params})")
        else:
            lines.append(f"estimator = {est}Estimator(model_fn={model_fn}, config=config{params})")
        steps = {"literal": str(s["steps"]), "flag": self.flag("train_steps"),
                 "params": 'HPARAMS["train_steps"]'}[c["steps"]]
        eval_steps = "2" if c["eval_steps"] == "literal" else "None"
        train_fn, eval_fn = self.train_input, self.eval_input
        if c["driver"] == "train_and_evaluate":
            lines += [f"train_spec = {est}TrainSpec(input_fn={train_fn}, max_steps={steps})",
                      f"eval_spec = {est}EvalSpec(input_fn={eval_fn}, steps={eval_steps})",
                      f"eval_result, _ = {est}train_and_evaluate(estimator, train_spec, eval_spec)"]
        else:
            keyword = "steps" if c["driver"] == "train_steps_then_evaluate" else "max_steps"
            lines += [f"estimator.train(input_fn={train_fn}, {keyword}={steps})",
                      f"eval_result = estimator.evaluate(input_fn={eval_fn}, steps={eval_steps})"]
        result = c["result"]
        if result == "loss":
            lines.append('print("eval loss: %s" % eval_result["loss"])')
        elif result == "metric":
            key = METRIC_KEYS[c["metric"]]
            lines.append(f'print("eval {key}: %s" % eval_result["{key}"])')
        elif result == "global_step":
            lines.append('print("trained to step %d" % eval_result["global_step"])')
        if c["driver"] == "train_evaluate_predict":
            lines += [f"for prediction in estimator.predict(input_fn={self.predict_fn}):",
                      '\tprint("prediction: %s" % prediction["output"])']
        if c["model_dir"] == "flag":
            lines += [f"if not {self.flag('model_dir')}:", "\tshutil.rmtree(model_dir)"]
        else:
            lines.append("shutil.rmtree(model_dir)")
        return lines

    # the files ------------------------------------------------------------------------------------------------

    def write(self) -> None:
        c, s = self.c, self.s
        layout = c["layout"]
        definitions, self.train_input, self.eval_input = self.input_functions()
        predict_definitions: list[str] = []
        self.predict_fn = ""
        if c["driver"] == "train_evaluate_predict":
            predict_definitions, self.predict_fn = self.predict_input()
            if not predict_definitions:
                predict_definitions, self.predict_fn = [f"predict_input_fn = {self.predict_fn}"], "predict_input_fn"
        two = layout == "two_modules"
        model_fn = "model.model_fn" if two else "model_fn"

        std = ["import random", "import shutil", "import tempfile"]
        if self.flags == "argparse" and (self.uses_flags or layout == "argparse_main"):
            std.insert(0, "import argparse")
        if layout == "argparse_main":
            std.append("import sys")
        header = [f'"""A generated TF1 Estimator program (tests/programgen, seed {self.p.seed})."""']
        imports = std + [""]
        if layout == "app_run":
            imports += ["from absl import app", "from absl import flags"]
        imports += ["import numpy as np"] + self.tf_imports()
        if two:
            imports += ["", "import model"]

        constants = [f"BATCH_SIZE = {s['batch']}"] if not self.uses_params else []
        if self.uses_params:
            hparams = {"train_steps": s["steps"], "batch_size": s["batch"],
                       "learning_rate": LEARNING_RATES[c["optimizer"]]}
            constants = ["HPARAMS = {" + ", ".join(f'"{key}": {value}' for key, value in hparams.items()) + "}"]
        blocks: list[list[str]] = [header + imports]
        module_flags = []
        if layout == "app_run":
            module_flags = self.flag_definitions("")
        blocks.append(module_flags + ([""] if module_flags else []) + constants + self.data_lines())
        if definitions:
            blocks.append(definitions)
        if predict_definitions:
            blocks.append(predict_definitions)
        if not two:
            blocks.append(self.model_fn())
        if layout == "build_estimator":
            params = ", params=HPARAMS" if c["learning_rate"] == "params" else ""
            blocks.append(["def build_estimator(config):",
                           f"\treturn {self.est}Estimator(model_fn=model_fn, config=config{params})"])
        driver = self.driver(model_fn)
        if layout == "module":
            if self.uses_flags:
                driver = self.flag_definitions("") + ["args = parser.parse_args()"] + driver
            blocks.append(driver)
            main_block = None
        elif layout == "app_run":
            main_block = ["def main(argv):", "\tdel argv  # unused"] + ["\t" + line for line in driver]
            guard = ["if __name__ == \"__main__\":", "\tapp.run(main)"]
        elif layout == "argparse_main":
            parse = self.flag_definitions("\t") + ["\targs = parser.parse_args(argv[1:])"]
            main_block = ["def main(argv):"] + parse + ["\t" + line for line in driver]
            guard = ["if __name__ == \"__main__\":", "\tmain(sys.argv)"]
        else:
            parse = (self.flag_definitions("\t") + ["\targs = parser.parse_args()"]) if self.uses_flags else []
            main_block = ["def main():"] + parse + ["\t" + line for line in driver]
            guard = ["if __name__ == \"__main__\":", "\tmain()"]
        if main_block is not None:
            blocks += [main_block, guard]
        entry = "task.py" if two else "train.py"
        self.p.entry = entry
        self.p.files[entry] = self.render(blocks)
        if two:
            model_blocks = [['"""The model of a generated TF1 Estimator program (tests/programgen)."""',
                             *self.tf_imports()], self.model_fn()]
            self.p.files["model.py"] = self.render(model_blocks)

    def render(self, blocks: list[list[str]]) -> str:
        unit = " " * int(self.c["indent"])
        text = "\n\n\n".join("\n".join(block) for block in blocks if block) + "\n"
        text = "\n".join(line.replace("\t", unit) if line.strip() else "" for line in text.split("\n"))
        return text


TRAIN_ROWS = 160  # at least 20 steps of 8 examples: an input that does not repeat lasts the whole training
EVAL_ROWS = 32


def main(argv: list[str] | None = None) -> None:
    import sys

    argv = sys.argv[1:] if argv is None else argv
    program = generate(int(argv[0]))
    print(program.describe())
    if len(argv) > 1:
        print(program.write(Path(argv[1])))
    else:
        for name, text in program.files.items():
            print(f"# --- {name}\n{text}")
