"""The harness pairs old and new variables by name where the new program keeps TF1's (tier 2), else in creation
order, and a canned estimator's by name where the orders differ (a wide & deep model: TF1 made the DNN first, Keras'
WideDeepModel holds the linear part first)."""

from __future__ import annotations

from migrator.parity.pairing import pair_variables


def variables(*named: tuple[str, list[int]]) -> list[dict]:
    return [{"name": name, "shape": shape, "trainable": True, "shards": []} for name, shape in named]


TF1_WIDE_DEEP = variables(
    ("dnn/input_from_feature_columns/input_layer/occupation_embedding/embedding_weights", [20, 4]),
    ("dnn/hiddenlayer_0/kernel", [10, 16]), ("dnn/hiddenlayer_0/bias", [16]),
    ("dnn/logits/kernel", [16, 1]), ("dnn/logits/bias", [1]),
    ("linear/linear_model/age_bucketized/weights", [11, 1]), ("linear/linear_model/education/weights", [5, 1]),
    ("linear/linear_model/bias_weights", [1]))
KERAS_WIDE_DEEP = variables(
    ("age_bucketized_weights/kernel", [11, 1]), ("education_weights/kernel", [5, 1]), ("education_weights/bias", [1]),
    ("occupation_embedding/kernel", [20, 4]), ("dnn/hiddenlayer_0/kernel", [10, 16]), ("dnn/hiddenlayer_0/bias", [16]),
    ("dnn/logits/kernel", [16, 1]), ("dnn/logits/bias", [1]))


def test_a_wide_and_deep_models_variables_pair_by_name():
    pairs, problem = pair_variables(TF1_WIDE_DEEP, KERAS_WIDE_DEEP)
    assert problem is None
    assert {old["name"]: new["name"] for old, new in pairs} == {
        "dnn/input_from_feature_columns/input_layer/occupation_embedding/embedding_weights":
            "occupation_embedding/kernel",
        "dnn/hiddenlayer_0/kernel": "dnn/hiddenlayer_0/kernel", "dnn/hiddenlayer_0/bias": "dnn/hiddenlayer_0/bias",
        "dnn/logits/kernel": "dnn/logits/kernel", "dnn/logits/bias": "dnn/logits/bias",
        "linear/linear_model/age_bucketized/weights": "age_bucketized_weights/kernel",
        "linear/linear_model/education/weights": "education_weights/kernel",
        "linear/linear_model/bias_weights": "education_weights/bias"}


def test_a_layer_missing_or_of_another_shape_is_not_paired_away():
    missing = [v for v in KERAS_WIDE_DEEP if v["name"] != "education_weights/kernel"]
    assert pair_variables(TF1_WIDE_DEEP, missing)[1].startswith("the variables do not line up: ")
    other = [dict(v, shape=[6, 1]) if v["name"] == "education_weights/kernel" else v for v in KERAS_WIDE_DEEP]
    assert "education_weights/kernel" in pair_variables(TF1_WIDE_DEEP, other)[1]


def test_variables_in_the_same_order_pair_by_order_whatever_their_names():
    old, new = variables(("dense/kernel", [2, 3]), ("dense/bias", [3])), variables(("a/kernel", [2, 3]), ("b", [3]))
    pairs, problem = pair_variables(old, new)
    assert problem is None and [(o["name"], n["name"]) for o, n in pairs] == [("dense/kernel", "a/kernel"),
                                                                             ("dense/bias", "b")]


def test_tf1_code_run_in_keras_pairs_by_its_tf1_names_whatever_the_order():
    """A model_fn kept as written (tier 2) makes its variables under TF1's names, in another order (a dense layer's
    bias before its kernel): equal shapes in another order would pair wrongly by position."""
    tf1 = variables(("hidden/kernel", [8, 8]), ("hidden/bias", [8]), ("out/kernel", [8, 8]), ("out/bias", [8]))
    kept = variables(("out/bias", [8]), ("out/kernel", [8, 8]), ("hidden/bias", [8]), ("hidden/kernel", [8, 8]))
    pairs, problem = pair_variables(tf1, kept)
    assert problem is None and all(old["name"] == new["name"] for old, new in pairs)
    renamed = variables(("dense/bias", [8]), ("dense/kernel", [8, 8]), ("dense_1/bias", [8]), ("dense_1/kernel", [8, 8]))
    assert pair_variables(tf1, renamed)[1].startswith("the variables do not line up: ")
