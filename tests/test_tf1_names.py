"""rewrites.tf1_names: the Keras layer names that keep TF1's variable names, in scopes and loops."""

from __future__ import annotations

import libcst as cst
import pytest

from rewrites.tf1_names import TF1Names, placeholders_resolved


def name(text: str | None) -> dict:
    return {"name": cst.SimpleString(f'"{text}"')} if text else {}


def test_layers_are_numbered_per_kind_and_scope_as_tf1_numbered_them():
    names = TF1Names()
    made = [names.layer("layers.dense", {}), names.layer("layers.Dense", {}), names.layer("layers.conv2d", {})]
    names.enter(cst.SimpleString('"tower"'))
    made += [names.layer("layers.dense", {}), names.layer("layers.dense", name("out"))]
    names.scopes = ()
    made += [names.layer("layers.dense", {}), names.layer("layers.flatten", {})]
    assert made == ['"dense"', '"dense_1"', '"conv2d"', '"tower/dense"', '"tower/out"', '"dense_2"', None]
    assert names.known


def test_a_layer_in_a_loop_is_named_by_the_loops_index_and_those_after_it_by_its_length():
    names = TF1Names()
    before = names.layer("layers.dense", {})
    names.begin_loop("index", 'len(params["units"])')
    inside = [names.layer("layers.dense", {}), names.layer("layers.batch_normalization", {})]
    resolved = names.end_loop()
    after = names.layer("layers.dense", {})
    assert before == '"dense"'
    assert [resolved[placeholder] for placeholder in inside] == [
        'f"dense_{index + 1}"', 'f"batch_normalization_{index}" if index else "batch_normalization"']
    assert after == """f'dense_{len(params["units"]) + 1}'"""


@pytest.mark.parametrize("length, after", [(3, '"dense_6"'), (None, None)], ids=["known", "unknown"])
def test_two_layers_an_iteration(length, after):
    names = TF1Names()
    names.begin_loop("i", length)
    first, second = names.layer("layers.dense", {}), names.layer("layers.dense", {})
    resolved = names.end_loop()
    assert resolved[first] == 'f"dense_{2 * i}" if 2 * i else "dense"' and resolved[second] == 'f"dense_{2 * i + 1}"'
    assert names.layer("layers.dense", {}) == after and names.known == (length is not None)


def test_a_loop_in_a_loop_and_a_computed_scope_are_not_followed():
    names = TF1Names()
    names.begin_loop("i", 2)
    names.begin_loop("j", 2)
    inner = names.layer("layers.dense", {})
    assert names.end_loop()[inner] is None
    assert not names.known
    scoped = TF1Names()
    scoped.enter(cst.parse_expression('"layer_%d" % i'))
    assert scoped.layer("layers.dense", {}) is None and not scoped.known


def test_an_unknown_name_drops_the_name_argument():
    code = "keras.layers.Dense(units=4, name=__tf1_name_0__)(net)"
    assert placeholders_resolved(code, {"__tf1_name_0__": None}) == "keras.layers.Dense(units=4)(net)"
    assert placeholders_resolved(code, {"__tf1_name_0__": '"dense"'}) == 'keras.layers.Dense(units=4, name="dense")(net)'


def test_variables_switched_off_by_their_arguments():
    names = TF1Names()
    assert names.variables("layers.dense", {"use_bias": cst.Name("False")}) == ("kernel",)
    assert names.variables("layers.batch_normalization", {"scale": cst.Name("False")}) == (
        "beta", "moving_mean", "moving_variance")
    assert names.variable(cst.SimpleString('"table"')) == '"table"'
