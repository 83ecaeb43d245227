"""Estimators made by tf.keras.estimator.model_to_estimator: the Keras model itself trains, in the strategy's scope.

The shapes of the public programs that used it (the Cloud ML samples' trainer packages, the
training-data-analyst courses, the TensorFlow tutorial): the model made and compiled where the
Estimator is driven, by a function called in model_to_estimator's argument, or in a factory of
another module that returns the Estimator.
"""

from __future__ import annotations

import importlib.util
import itertools
import os
import subprocess
import sys
from pathlib import Path
from textwrap import dedent

import pytest

from test_estimator_programs import rules, run_one, run_tree

INPUT_FN = '''\
def make_input_fn(mode, batch_size):
    def _input_fn():
        rng = np.random.RandomState(0)
        images = rng.rand(64, 4, 4, 1).astype("float32")
        labels = np.eye(3, dtype="float32")[rng.randint(0, 3, 64)]
        dataset = tf.data.Dataset.from_tensor_slices(({"image": images}, labels))
        if mode == tf.estimator.ModeKeys.TRAIN:
            dataset = dataset.repeat()
        return dataset.batch(batch_size)
    return _input_fn
'''

# training-data-analyst's mnistmodel: the model made and compiled where train_and_evaluate drives it.
IN_ONE_FUNCTION = f'''\
import sys
import tempfile

import numpy as np
import tensorflow.compat.v1 as tf


def image_classifier(hparams):
    model = tf.keras.models.Sequential()
    model.add(tf.keras.layers.InputLayer(input_shape=[4, 4, 1], name="image"))
    model.add(tf.keras.layers.Flatten())
    model.add(tf.keras.layers.Dense(units=8, activation=tf.nn.relu))
    model.add(tf.keras.layers.Dense(units=3, activation=tf.nn.softmax, name="probabilities"))
    return model


{INPUT_FN}

def train_and_evaluate(output_dir, hparams):
    # Build Keras model
    model = image_classifier(hparams)
    model.compile(optimizer="adam", loss="categorical_crossentropy", metrics=["accuracy"])
    estimator = tf.keras.estimator.model_to_estimator(
        keras_model=model, model_dir=output_dir, config=tf.estimator.RunConfig(save_checkpoints_secs=60))
    train_spec = tf.estimator.TrainSpec(input_fn=make_input_fn(tf.estimator.ModeKeys.TRAIN, 8),
                                        max_steps=hparams["train_steps"])
    eval_spec = tf.estimator.EvalSpec(input_fn=make_input_fn(tf.estimator.ModeKeys.EVAL, 8), steps=None)
    eval_result, _ = tf.estimator.train_and_evaluate(estimator, train_spec, eval_spec)
    print("accuracy", eval_result["accuracy"], "step", eval_result["global_step"])


if __name__ == "__main__":
    train_and_evaluate(sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp(), {{"train_steps": 20}})
'''

# cloudml-samples' boston: a factory of model.py returns the Estimator of a model compiled with a TF1 optimizer.
MODEL_PY = '''\
import tensorflow.compat.v1 as tf

from tensorflow.keras.layers import Dense


def keras_estimator(model_dir, config, params):
    """Creates a Keras Sequential model with layers."""
    model = tf.keras.models.Sequential()
    model.add(Dense(16, activation=tf.nn.relu, input_shape=(params['num_features'],)))
    model.add(Dense(1))

    # Compile model with learning parameters.
    optimizer = tf.train.RMSPropOptimizer(learning_rate=params['learning_rate'])
    model.compile(optimizer=optimizer, loss='mse', metrics=['mae'])

    return tf.keras.estimator.model_to_estimator(
        keras_model=model, model_dir=model_dir, config=config)


def input_fn(features, labels, batch_size, mode):
    dataset = tf.data.Dataset.from_tensor_slices((features, labels))
    if mode == tf.estimator.ModeKeys.TRAIN:
        dataset = dataset.repeat()
    return dataset.batch(batch_size)
'''

TASK_PY = '''\
import argparse
import tempfile

import numpy as np
import tensorflow.compat.v1 as tf

from trainer import model


def train_and_evaluate(args):
    rng = np.random.RandomState(0)
    train_data = rng.rand(64, 5).astype("float32")
    train_labels = rng.rand(64, 1).astype("float32")
    run_config = tf.estimator.RunConfig(save_checkpoints_steps=500)
    train_spec = tf.estimator.TrainSpec(
        input_fn=lambda: model.input_fn(train_data, train_labels, args.batch_size, mode=tf.estimator.ModeKeys.TRAIN),
        max_steps=args.train_steps)
    eval_spec = tf.estimator.EvalSpec(
        input_fn=lambda: model.input_fn(train_data, train_labels, args.batch_size, mode=tf.estimator.ModeKeys.EVAL),
        steps=None)
    estimator = model.keras_estimator(
        model_dir=args.job_dir, config=run_config,
        params={'learning_rate': args.learning_rate, 'num_features': train_data.shape[1]})
    tf.estimator.train_and_evaluate(estimator, train_spec, eval_spec)


if __name__ == '__main__':
    parser = argparse.ArgumentParser()
    parser.add_argument('--job-dir', default=tempfile.mkdtemp())
    parser.add_argument('--batch-size', type=int, default=8)
    parser.add_argument('--train-steps', type=int, default=20)
    parser.add_argument('--learning-rate', type=float, default=0.01)
    train_and_evaluate(parser.parse_args())
'''

PACKAGE = {"trainer/__init__.py": "", "trainer/model.py": MODEL_PY, "trainer/task.py": TASK_PY}


def test_a_model_made_where_it_is_driven_is_made_and_compiled_in_the_strategy_scope():
    result = run_one(IN_ONE_FUNCTION)
    code = result.source
    assert rules(result) == ["TFM301"], result.findings
    main = code[code.index("def train_and_evaluate"):]
    assert main.startswith(
        "def train_and_evaluate(output_dir, hparams):\n"
        "    task_type, strategy = strategy_for_this_task()\n\n"
        '    dataset = make_input_fn("train", 8)()\n\n'
        "    with strategy.scope():\n"
        "        # Build Keras model\n"
        "        model = image_classifier(hparams)\n"
        "        model.compile(\n"
        "            optimizer=keras.optimizers.legacy.Adam(),\n"
        '            loss="categorical_crossentropy",\n'
        '            metrics=["accuracy"])\n'), main
    # The pipeline's machinery, on the program's own model: RunConfig's cadence, fit, the results' keys.
    assert "save_checkpoint = CheckpointSaver(checkpoints, model.optimizer.iterations, secs=60)" in main
    assert "model.fit(\n" in main and "steps_per_epoch=hparams[\"train_steps\"] - steps_done" in main
    assert 'eval_result["global_step"] = int(model.optimizer.iterations)' in main
    # TF1's checkpoints of model_to_estimator name Keras' slots under training/Adam.
    assert '{"training/Adam/{}/m": "m", "training/Adam/{}/v": "v"}' in code
    # Keras 2 for the model too: tf.keras is Keras 3 from TensorFlow 2.16.
    assert "model = keras.models.Sequential()" in code and "tf.keras" not in code
    for gone in ("model_to_estimator", "Estimator(", "RunConfig(", "TrainSpec", "tf.estimator"):
        assert gone not in code


def test_a_factory_of_another_module_returns_the_compiled_model_with_tf1_optimizer_numbers():
    results = run_tree(PACKAGE)
    model, task = results["trainer/model.py"], results["trainer/task.py"]
    assert rules(model) == rules(task) == ["TFM301"], (model.findings, task.findings)
    assert "`keras_estimator` -> `build_keras_model`: returns its compiled Keras model" in model.findings[0].message
    assert dedent('''\
        def build_keras_model(params):
            """Creates a Keras Sequential model with layers."""
            model = keras.models.Sequential()
            model.add(keras.layers.Dense(16, activation=tf.nn.relu, input_shape=(params['num_features'],)))
            model.add(keras.layers.Dense(1))

            # Compile model with learning parameters.
            optimizer = keras.optimizers.legacy.RMSprop(learning_rate=params['learning_rate'], epsilon=1e-10)
            model.compile(optimizer=optimizer, loss='mse', metrics=['mae'])
            # TF1 started the mean-square slots at ones, Keras at zeros.
            for variable in model.trainable_variables:
                model.optimizer.add_slot(variable, "rms", initializer="ones")

            return model
        ''') in model.source
    assert "from tensorflow.keras.layers import Dense" not in model.source
    assert ("    with strategy.scope():\n"
            "        keras_model = model.build_keras_model(\n"
            "            params={'learning_rate': args.learning_rate, 'num_features': train_data.shape[1]})\n"
            ) in task.source
    assert '{"{}/RMSProp": "rms", "{}/RMSProp_1": None}' in task.source  # TF1's names of its slots


def test_tensorflows_own_keras_module_is_keras_as_tf_keras_is():
    """cloudml-samples' boston trainer reaches Keras through `from tensorflow.python.keras import models` (TF 1.x's
    tf.keras): it becomes the Keras the migrated program compiles with, or its RMSprop would not compile there."""
    model_py = MODEL_PY.replace("from tensorflow.keras.layers import Dense\n",
                                "from tensorflow.keras.layers import Dense\nfrom tensorflow.python.keras import models\n")
    model_py = model_py.replace("tf.keras.models.Sequential()", "models.Sequential()")
    model = run_tree({**PACKAGE, "trainer/model.py": model_py})["trainer/model.py"]
    assert "    model = keras.models.Sequential()\n" in model.source
    assert "tensorflow.python.keras" not in model.source and "models.Sequential()" in model_py


def test_a_factory_returning_the_name_it_bound_with_a_tf1_adam_driven_by_train_and_evaluate():
    """cloudml-samples' imdb: `estimator = model_to_estimator(...)`, `return estimator`; a TF1 Adam."""
    model_py = MODEL_PY.replace("tf.train.RMSPropOptimizer(", "tf.train.AdamOptimizer(").replace(
        "    return tf.keras.estimator.model_to_estimator(\n",
        "    estimator = tf.keras.estimator.model_to_estimator(\n").replace(
        "model_dir=model_dir, config=config)\n", "model_dir=model_dir, config=config)\n    return estimator\n")
    assert model_py.count("AdamOptimizer") == 1 and model_py.count("return estimator") == 1
    results = run_tree({**PACKAGE, "trainer/model.py": model_py})
    model = results["trainer/model.py"].source
    assert "optimizer = TF1Adam(learning_rate=params['learning_rate'], epsilon=1e-08)" in model
    assert "        keras_model=model, model_dir" not in model and "    return model\n" in model
    assert rules(results["trainer/task.py"]) == ["TFM301"], results["trainer/task.py"].findings
    # A TF1 Adam wrapped by Keras' compile kept its beta powers in `training/`: Keras computes them from the step.
    assert '"training/beta1_power"' in results["trainer/task.py"].source


def test_a_function_called_in_the_argument_is_called_in_the_strategy_scope():
    """training-data-analyst's c_custom_keras_estimator: keras_model=create_keras_model(), a TF1 Adam inside."""
    program = IN_ONE_FUNCTION.replace('''\
    # Build Keras model
    model = image_classifier(hparams)
    model.compile(optimizer="adam", loss="categorical_crossentropy", metrics=["accuracy"])
    estimator = tf.keras.estimator.model_to_estimator(
        keras_model=model,''', '''\
    estimator = tf.keras.estimator.model_to_estimator(
        keras_model=create_keras_model(hparams),''').replace('''\
    return model


def make_input_fn''', '''\
    return model


def create_keras_model(hparams):
    model = image_classifier(hparams)
    model.compile(optimizer=tf.train.AdamOptimizer(), loss="categorical_crossentropy", metrics=["accuracy"])
    return model


def make_input_fn''')
    assert "create_keras_model(hparams)," in program and "def create_keras_model" in program
    code = run_one(program).source
    assert "    model.compile(optimizer=TF1Adam(epsilon=1e-08), loss=" in code
    assert "    with strategy.scope():\n        model = create_keras_model(hparams)\n" in code


def test_a_script_at_module_level_moves_only_the_statements_making_the_model():
    """The TensorFlow tutorial's shape (a notebook's cells, in order): what stands between the model's statements
    and the drivers stays where it is."""
    program = dedent('''\
        import numpy as np
        import tensorflow as tf

        model = tf.keras.models.Sequential([
            tf.keras.layers.Dense(16, activation='relu', input_shape=(4,)),
            tf.keras.layers.Dense(3)
        ])
        print("made")
        model.compile(loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True), optimizer='adam')
        model.summary()

        def input_fn():
            features = np.random.rand(150, 4).astype('float32')
            dataset = tf.data.Dataset.from_tensor_slices(({'dense_input': features}, np.random.randint(0, 3, 150)))
            return dataset.batch(32).repeat()

        keras_estimator = tf.keras.estimator.model_to_estimator(keras_model=model)
        keras_estimator.train(input_fn=input_fn, steps=500)
        eval_result = keras_estimator.evaluate(input_fn=input_fn, steps=10)
        print('Eval result: {}'.format(eval_result))
        ''')
    code = run_one(program).source
    assert 'import tf_keras as keras\n\nprint("made")\n' in code
    assert code.index('print("made")') < code.index("def input_fn():") < code.index("with strategy.scope():")
    assert dedent('''\
        with strategy.scope():
            model = keras.models.Sequential([
                keras.layers.Dense(16, activation='relu', input_shape=(4,)),
                keras.layers.Dense(3)
            ])
            model.compile(
                loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                optimizer=keras.optimizers.legacy.Adam())
            model.summary()

        model.fit(dataset, epochs=1, steps_per_epoch=500, verbose=2)
        ''') in code


@pytest.mark.parametrize("old, new, why", [
    ('    print("accuracy", eval_result["accuracy"]', '    model.save("model.h5")\n    print("accuracy", '
     'eval_result["accuracy"]', "`model` is used here, apart from the statements making the Keras model"),
    ('optimizer="adam"', "optimizer=tf.keras.optimizers.Nadam()",
     "Nadam without a learning rate: TF 1's Keras gave it 0.002 up to TF 1.12, 0.001 from TF 1.13"),
    ('optimizer="adam"', "optimizer=tf.keras.optimizers.Adamax(0.01)",
     "compile's optimizer `tf.keras.optimizers.Adamax(0.01)`: migrated when it is a name"),
    ('optimizer="adam"', "optimizer=tf.train.RMSPropOptimizer(0.01)", None),  # built: InputLayer (a control)
    ('eval_result["accuracy"]', 'eval_result["auc"]', "the program reads `auc`"),
    ("keras_model=model, model_dir", "keras_model=model, custom_objects={'f': abs}, model_dir",
     "model_to_estimator(custom_objects=...) names custom objects"),
    ("    eval_result, _ = tf.estimator.train_and_evaluate(estimator, train_spec, eval_spec)\n",
     "    eval_result, _ = tf.estimator.train_and_evaluate(estimator, train_spec, eval_spec)\n"
     "    print(list(estimator.predict(make_input_fn(tf.estimator.ModeKeys.PREDICT, 8))))\n",
     "predict() of a model_to_estimator Estimator is not migrated yet"),
], ids=["the model used after training", "Nadam without a rate", "Adamax", "RMSProp on a built model",
        "a metric it does not report", "custom_objects", "predict"])
def test_what_cannot_be_migrated_safely_is_left_saying_why(old, new, why):
    program = IN_ONE_FUNCTION.replace(old, new)
    assert program.count(new) == 1
    result = run_one(program)
    if why is None:
        assert rules(result) == ["TFM301"] and "add_slot(variable, \"rms\"" in result.source
        return
    assert result.source == program
    assert any(f.rule == "TFM302" and why in f.message for f in result.findings), result.findings


# kubeflow's github_issue_summarization: a Keras Nadam, and train_and_evaluate's result bound to a name nothing reads.
NADAM = IN_ONE_FUNCTION.replace('optimizer="adam"', "optimizer=tf.keras.optimizers.Nadam(lr=0.01)").replace(
    '    eval_result, _ = tf.estimator.train_and_evaluate(estimator, train_spec, eval_spec)\n'
    '    print("accuracy", eval_result["accuracy"], "step", eval_result["global_step"])\n',
    '    result = tf.estimator.train_and_evaluate(estimator, train_spec, eval_spec)\n')


def test_a_keras_nadam_is_its_legacy_class_with_its_momentum_cache_carried_on_from_tf1():
    """model_to_estimator trained Keras' legacy Nadam (TF 1's Keras Nadam: the same schedule and epsilon); a TF1
    checkpoint holds its momentum cache (the product of the momentum schedule so far), which the next step reads."""
    assert NADAM.count("Nadam(lr=0.01)") == 1 and "    result = " in NADAM
    result = run_one(NADAM)
    assert not any(f.safety.name == "MANUAL" for f in result.findings), result.findings
    code = result.source
    assert "optimizer=keras.optimizers.legacy.Nadam(lr=0.01)" in code
    assert '{"training/Nadam/{}/m": "m", "training/Nadam/{}/v": "v"}' in code
    assert ("    model.optimizer._create_all_weights(model.trainable_variables)\n"
            '    targets["training/Nadam/momentum_cache"] = [model.optimizer._m_cache]\n') in code
    assert "result = " not in code


def test_a_result_of_train_and_evaluate_bound_to_a_name_that_is_read_is_left():
    program = NADAM.replace("    result = tf.estimator.train_and_evaluate(estimator, train_spec, eval_spec)\n",
                            "    result = tf.estimator.train_and_evaluate(estimator, train_spec, eval_spec)\n"
                            "    print(result)\n")
    result = run_one(program)
    assert result.source == program
    assert any(f.rule == "TFM302" and "the results of train_and_evaluate are used" in f.message
               for f in result.findings)


# kubeflow's github_issue_summarization: a script at the top level, its functional model made layer by layer (a
# sub-model of some of them beside it, other statements between), then compiled and given to model_to_estimator.
LAYER_BY_LAYER = dedent('''\
    import sys
    import tempfile
    import time

    import numpy as np
    import tensorflow as tf

    tf.logging.set_verbosity(tf.logging.INFO)
    rng = np.random.RandomState(0)
    encoder_data = rng.randint(1, 20, (64, 6))
    decoder_data = rng.randint(1, 12, (64, 4))
    latent_dim = 8

    #### Encoder ####
    encoder_inputs = tf.keras.layers.Input(shape=(6,), name='Encoder-Input')

    # Word embedding for the encoder
    x = tf.keras.layers.Embedding(20, latent_dim, name='Body-Word-Embedding')(encoder_inputs)
    x = tf.keras.layers.BatchNormalization(name='Encoder-Batchnorm-1')(x)
    _, state_h = tf.keras.layers.GRU(latent_dim, return_state=True, name='Encoder-Last-GRU')(x)

    encoder_model = tf.keras.Model(inputs=encoder_inputs, outputs=state_h, name='Encoder-Model')
    seq2seq_encoder_out = encoder_model(encoder_inputs)

    #### Decoder ####
    decoder_inputs = tf.keras.layers.Input(shape=(None,), name='Decoder-Input')
    dec_emb = tf.keras.layers.Embedding(12, latent_dim, name='Decoder-Word-Embedding')(decoder_inputs)
    decoder_gru = tf.keras.layers.GRU(latent_dim, return_state=True, return_sequences=True, name='Decoder-GRU')
    decoder_gru_output, _ = decoder_gru(dec_emb, initial_state=seq2seq_encoder_out)
    decoder_outputs = tf.keras.layers.Dense(12, activation='softmax', name='Final-Output-Dense')(decoder_gru_output)

    start_time = time.time()
    seq2seq_Model = tf.keras.Model([encoder_inputs, decoder_inputs], decoder_outputs)
    seq2seq_Model.compile(optimizer=tf.keras.optimizers.Nadam(lr=0.01), loss='sparse_categorical_crossentropy')

    model_dir = sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp()
    estimator = tf.keras.estimator.model_to_estimator(keras_model=seq2seq_Model, model_dir=model_dir)
    input_fn = tf.estimator.inputs.numpy_input_fn(
        x={'Encoder-Input': encoder_data, 'Decoder-Input': decoder_data}, y=np.expand_dims(decoder_data, -1),
        batch_size=8, shuffle=False)
    train_spec = tf.estimator.TrainSpec(input_fn=input_fn, max_steps=20)
    eval_spec = tf.estimator.EvalSpec(input_fn=input_fn, steps=4)
    result = tf.estimator.train_and_evaluate(estimator, train_spec, eval_spec)
    ''')


def test_a_functional_model_made_layer_by_layer_moves_into_the_scope_with_its_layers():
    """Its layers make their variables in the strategy's scope, with the sub-model reading them; its Inputs and the
    statements between that the model does not read stay where they were."""
    result = run_one(LAYER_BY_LAYER)
    assert not any(f.safety.name == "MANUAL" for f in result.findings), result.findings
    code = result.source
    lines = code[code.index("with strategy.scope():\n"):].splitlines()[1:]
    scope = "\n" + "\n".join(itertools.takewhile(lambda line: not line or line.startswith("    "), lines))
    for statement in ("x = keras.layers.Embedding(", "_, state_h = keras.layers.GRU(", "encoder_model = keras.Model(",
                      "seq2seq_encoder_out = encoder_model(", "decoder_gru_output, _ = decoder_gru(dec_emb, ",
                      "seq2seq_Model = keras.Model(", "seq2seq_Model.compile("):
        assert f"\n    {statement}" in scope, statement
    assert "    # Word embedding for the encoder\n    x = keras.layers.Embedding(" in scope
    assert "encoder_inputs = keras.layers.Input(" in code and "encoder_inputs = " not in scope
    assert "start_time = time.time()" in code and "start_time" not in scope
    assert not [line for line in code.splitlines() if line != line.rstrip()]  # no whitespace left on blank lines


ENCODER_GRU = "tf.keras.layers.GRU(latent_dim, return_state=True, name='Encoder-Last-GRU')"


@pytest.mark.parametrize("layer, migrated", [
    # TF 1.x's GRU (Keras' v1 class): TF 2's defaults differ, so TF1's are written out.
    (ENCODER_GRU, "keras.layers.GRU(latent_dim, return_state=True, name='Encoder-Last-GRU', "
                  "recurrent_activation=\"hard_sigmoid\", reset_after=False)"),
    # Those given stay as they are, by name or by position.
    ("tf.keras.layers.GRU(latent_dim, 'tanh', 'sigmoid', return_state=True, reset_after=True)",
     "keras.layers.GRU(latent_dim, 'tanh', 'sigmoid', return_state=True, reset_after=True)"),
    ("tf.keras.layers.GRU(latent_dim, reset_after=True, return_state=True)",
     "keras.layers.GRU(latent_dim, reset_after=True, return_state=True, recurrent_activation=\"hard_sigmoid\")"),
    ("tf.keras.layers.LSTM(latent_dim, return_state=True)",
     "keras.layers.LSTM(latent_dim, return_state=True, recurrent_activation=\"hard_sigmoid\")"),
], ids=["defaults written out", "given by position", "one given by name", "an LSTM"])
def test_tf1_recurrent_layers_keep_tf1_defaults(layer, migrated):
    """TF 1.x's GRU computed with hard_sigmoid and reset_after=False (its bias [3 * units]); TF 2's default to
    sigmoid and reset_after=True: the parity test below fails without them (its bias pairs with a [2, 24] one)."""
    program = LAYER_BY_LAYER.replace(ENCODER_GRU, layer)
    if "LSTM" in layer:
        program = program.replace("_, state_h = ", "_, state_h, _ = ")
    assert ENCODER_GRU not in program or layer == ENCODER_GRU
    result = run_one(program)
    assert not any(f.safety.name == "MANUAL" for f in result.findings), result.findings
    assert "".join(migrated.split()) in "".join(result.source.split()), result.source


def test_a_module_whose_only_tf1_api_an_earlier_rewrite_changed_is_read_as_written():
    """Its numpy_input_fn (TF 1.x only) is tf.data by the time the Estimator is migrated (TFM306, an earlier
    family): the module is read as the user wrote it, a TF 1.x module, whose GRU was TF1's."""
    program = LAYER_BY_LAYER.replace("tf.logging.set_verbosity(tf.logging.INFO)\n", "")
    assert "logging" not in program and "tf.estimator.inputs.numpy_input_fn(" in program
    result = run_one(program)
    assert "TFM306" in {f.rule for f in result.findings} and "TFM401" not in {f.rule for f in result.findings}
    assert result.source.count('recurrent_activation="hard_sigmoid",\n        reset_after=False)') == 2


def test_a_tf2_module_keeps_tf2_recurrent_layers_saying_so():
    """A module whose plain `tf` is TF 2's (tensorflow_estimator under TF 2) made v2 layers: nothing is added, and a
    numeric note says what TF 1.x's were (the module may read as TF 2 code only because a first run of tf-migrate
    rewrote its TF 1.x input)."""
    program = LAYER_BY_LAYER.replace("tf.estimator.inputs.numpy_input_fn(", "tf.compat.v1.estimator.inputs."
                                     "numpy_input_fn(").replace("tf.logging.set_verbosity(tf.logging.INFO)\n", "")
    assert program.count("tf.compat.v1.") == 1 and "logging" not in program
    code = run_one(program).source
    assert ENCODER_GRU.replace("tf.keras.", "keras.") in code and "reset_after" not in code
    notes = [f for f in run_one(program).findings if f.rule == "TFM401"]
    assert [program.splitlines()[f.line - 1].strip()[:14] for f in notes] == ["_, state_h = t", "decoder_gru = "]
    assert notes[0].message.startswith("`GRU(...)` keeps TF 2's defaults (recurrent_activation=\"sigmoid\", "
                                       "reset_after=True): this module reads as TF 2 code; TF 1.x's made it with "
                                       "recurrent_activation=\"hard_sigmoid\", reset_after=False"), notes[0].message


def test_a_tf1_recurrent_layer_given_keyword_arguments_by_a_dict_is_left():
    program = LAYER_BY_LAYER.replace(ENCODER_GRU, "tf.keras.layers.GRU(latent_dim, **{'return_state': True})")
    assert program != LAYER_BY_LAYER
    result = run_one(program)
    assert "model_to_estimator(" in result.source
    assert any(f.rule == "TFM302" and "`GRU(...)` is TF1's, whose defaults TF 2 changed" in f.message
               for f in result.findings), result.findings


def test_a_functional_model_reading_what_a_compound_statement_binds_is_left():
    """A layer made in an `if`: the model's layers would move into the scope without it, or it with them."""
    program = LAYER_BY_LAYER.replace(
        "x = tf.keras.layers.BatchNormalization(name='Encoder-Batchnorm-1')(x)\n",
        "if latent_dim > 4:\n    x = tf.keras.layers.BatchNormalization(name='Encoder-Batchnorm-1')(x)\n")
    assert program != LAYER_BY_LAYER
    result = run_one(program)
    assert "model_to_estimator(" in result.source and "strategy" not in result.source
    assert any(f.rule == "TFM302" and "`seq2seq_Model` is made of Keras layers or tensors made before "
               "`seq2seq_Model = ...`, and of what this statement binds" in f.message
               and program.splitlines()[f.line - 1].startswith("if latent_dim > 4:") for f in result.findings), \
        result.findings


def test_a_tf1_rmsprop_on_a_model_not_built_when_compiled_is_left():
    """Its slots start at ones right after compile, on variables a model without an input shape has not made."""
    program = MODEL_PY.replace(", input_shape=(params['num_features'],)", "")
    results = run_tree({**PACKAGE, "trainer/model.py": program})
    assert results["trainer/model.py"].source == program
    assert any("give the model's input shape where it is made" in f.message
               for f in results["trainer/model.py"].findings)


def test_the_readme_example_is_what_the_migration_does():
    """The README's Before, completed with its imports and helpers, migrates to its After (but what it elides)."""
    import re

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    block = readme.split("<!-- model_to_estimator example -->\n```python\n")[1].split("```\n")[0]
    before, after = block.split("# Before\n")[1].split("\n# After\n")
    helpers = IN_ONE_FUNCTION[:IN_ONE_FUNCTION.index("def train_and_evaluate")]
    helpers += ("train_input_fn = make_input_fn(tf.estimator.ModeKeys.TRAIN, 8)\n"
                "eval_input_fn = make_input_fn(tf.estimator.ModeKeys.EVAL, 8)\n\n\n")
    code = run_one(helpers + before).source
    main = code[code.index("def train_and_evaluate"):]
    for part in re.split(r"^ *\.\.\..*\n", after, flags=re.MULTILINE):
        assert part in main, part
        main = main[main.index(part) + len(part):]


# -- trained ------------------------------------------------------------------------------------


# cloudml-samples' mnist: the serving function feeds flat images to a model built on (28, 28) ones, which TF1's
# model_to_estimator built anew on the serving features.
SERVED_FLAT = IN_ONE_FUNCTION.replace(
    "    eval_spec = tf.estimator.EvalSpec(input_fn=make_input_fn(tf.estimator.ModeKeys.EVAL, 8), steps=None)\n",
    "    eval_spec = tf.estimator.EvalSpec(input_fn=make_input_fn(tf.estimator.ModeKeys.EVAL, 8), steps=None,\n"
    "                                      exporters=tf.estimator.LatestExporter(\"flat\", serving_input_fn))\n"
).replace("def train_and_evaluate(", '''def serving_input_fn():
    image = tf.placeholder(tf.float32, [None, 16])
    return tf.estimator.export.ServingInputReceiver({"image": image}, {"image": image})


def train_and_evaluate(''')


@pytest.mark.tensorflow
@pytest.mark.skipif(not all(importlib.util.find_spec(name) for name in ("tensorflow", "tf_keras", "portpicker")),
                    reason="needs the parity extra")
@pytest.mark.parametrize("files, entry", [({"train.py": IN_ONE_FUNCTION}, "train.py"), (PACKAGE, "trainer/task.py"),
                                          ({"train.py": SERVED_FLAT}, "train.py"),
                                          ({"train.py": LAYER_BY_LAYER}, "train.py")],
                         ids=["in one function", "a factory, a TF1 RMSProp", "served other shapes", "layer by layer"])
def test_the_migrated_program_trains_as_model_to_estimator_did(files, entry, tmp_path):
    """Old and new trained on the same batches from the same initial weights: the same losses step by step (the
    RMSProp one only with its slots started at ones), the same eval loss and final weights."""
    from migrator.engine import migrate_group
    from helpers import ALL_RULES

    migrated = migrate_group(files, ALL_RULES, keras="tf_keras")
    for side, texts in (("old", files), ("new", {path: result.source for path, result in migrated.items()})):
        for path, text in texts.items():
            (tmp_path / side / path).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / side / path).write_text(text)
    environment = {key: value for key, value in os.environ.items() if key != "TF_CONFIG"}
    done = subprocess.run([str(Path(sys.executable).parent / "tf-migrate"), "parity", str(tmp_path / "old" / entry),
                           str(tmp_path / "new" / entry), "--steps", "5"], capture_output=True, text=True,
                          timeout=300, env={**environment, "TMPDIR": str(tmp_path)}, cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr[-4000:]
    assert "PARITY: 5 steps match" in done.stdout and "eval loss matches" in done.stdout, done.stdout
    if "exporters=" in files.get("train.py", ""):
        assert "1 export serves alike" in done.stdout, done.stdout


@pytest.mark.tensorflow
@pytest.mark.skipif(not all(importlib.util.find_spec(name) for name in ("tensorflow", "tf_keras", "portpicker")),
                    reason="needs the parity extra")
def test_the_migrated_nadam_resumes_from_the_tf1_checkpoint_and_trains_as_tf1_did(tmp_path):
    """Both sides carry on from TF1's checkpoint of step 3: the same losses, slots and weights only with Nadam's
    momentum cache restored too (without it, step 2 after resuming differs by 1e-3)."""
    from migrator.engine import migrate_group
    from helpers import ALL_RULES

    for side, text in (("old", NADAM), ("new", migrate_group({"train.py": NADAM}, ALL_RULES, keras="tf_keras")
                                          ["train.py"].source)):
        (tmp_path / side).mkdir()
        (tmp_path / side / "train.py").write_text(text)
    environment = {key: value for key, value in os.environ.items() if key != "TF_CONFIG"}
    done = subprocess.run([str(Path(sys.executable).parent / "tf-migrate"), "parity", str(tmp_path / "old/train.py"),
                           str(tmp_path / "new/train.py"), "--resume", "3", "--steps", "5"], capture_output=True,
                          text=True, timeout=300, env={**environment, "TMPDIR": str(tmp_path)}, cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr[-4000:]
    assert "PARITY: 5 steps match" in done.stdout and "8 slots and the step match" in done.stdout, done.stdout
