"""The export check's pairing and comparison, from what the probes report (no TensorFlow needed); the probes and the
whole check on trained programs are tests/test_exports.py's."""

from __future__ import annotations

import copy

import numpy as np
import pytest
from test_parity_report import LOSSES, make_report

from migrator.parity.compare import fill_comparisons
from migrator.parity.export_check import as_named, compare_export, pair
from migrator.parity.exchange import Exchange
from migrator.parity.report import render_html, terminal_summary

CLASSIFY = {"method": "tensorflow/serving/classify", "inputs": {"inputs": ["string", [-1]]},
            "outputs": {"classes": ["string", [-1, 3]], "scores": ["float32", [-1, 3]]},
            "answers": {"classes": [["0", "1", "2"]], "scores": [[0.2, 0.3, 0.5]]}, "requests": 1, "note": None}
PREDICT = {"method": "tensorflow/serving/predict", "inputs": {"x": ["float32", [-1, 4]]},
           "outputs": {"probabilities": ["float32", [-1, 3]]}, "answers": {"probabilities": [[0.2, 0.3, 0.5]]},
           "requests": 1, "note": None}
EXPORT = {"signatures": {"classification": CLASSIFY, "serving_default": PREDICT}}


def changed(edit) -> dict:
    new = copy.deepcopy(EXPORT)
    edit(new["signatures"])
    return new


def problems_of(new: dict) -> list[str]:
    comparison = compare_export("export/best", "old", "new", EXPORT, new, rtol=1e-5, atol=1e-7)
    return comparison.problems + [f"{s.name}: {p}" for s in comparison.signatures for p in s.problems]


def test_the_same_export_serves_alike():
    comparison = compare_export("export/best", "old", "new", EXPORT, copy.deepcopy(EXPORT), rtol=1e-5, atol=1e-7)
    assert comparison.ok and [s.name for s in comparison.signatures] == ["classification", "serving_default"]
    assert comparison.signatures[0].inputs == {"inputs": ["string", [-1]]} and comparison.signatures[0].requests == 1


@pytest.mark.parametrize("edit, problem", [
    (lambda s: s.pop("classification"), "classification: missing from the new export"),
    (lambda s: s.update(predict=PREDICT), "predict: only in the new export"),
    (lambda s: s["classification"].update(method="tensorflow/serving/predict"),
     "classification: method tensorflow/serving/classify (old), tensorflow/serving/predict (new)"),
    (lambda s: s["serving_default"].update(inputs={"features": ["float32", [-1, 4]]}),
     "serving_default: input 'x' is missing from the new signature"),
    (lambda s: s["serving_default"]["inputs"].update(x=["float64", [-1, 4]]),
     "serving_default: input 'x': dtype float32 (old), float64 (new)"),
    (lambda s: s["serving_default"]["inputs"].update(x=["float32", None]),
     "serving_default: input 'x': shape [-1, 4] (old), unknown (new)"),
    (lambda s: s["serving_default"]["outputs"].update(logits=["float32", [-1, 3]]),
     "serving_default: output 'logits' is only in the new signature"),
    (lambda s: s["serving_default"]["answers"].update(probabilities=[[0.2, 0.31, 0.49]]),
     "serving_default: output 'probabilities' answers differ by up to 0.01"),
    (lambda s: s["classification"]["answers"].update(classes=[["1", "0", "2"]]),
     "classification: output 'classes' answers differ: ['0', '1', '2'] (old), ['1', '0', '2'] (new)"),
    (lambda s: s["serving_default"].update(answers={}, note="it failed to answer: InvalidArgumentError"),
     "serving_default: the new signature gave no answer: it failed to answer: InvalidArgumentError"),
], ids=["signature missing", "signature added", "method", "input renamed", "dtype", "shape", "output added",
        "answers", "string answers", "no answer"])
def test_each_difference_a_server_would_see_is_a_problem_naming_it(edit, problem):
    found = problems_of(changed(edit))
    assert any(line.startswith(problem) for line in found), found


def test_answers_within_tolerance_match():
    new = changed(lambda s: s["serving_default"]["answers"].update(probabilities=[[0.2, 0.3, 0.5 + 1e-7]]))
    comparison = compare_export("export/best", "old", "new", EXPORT, new, rtol=1e-5, atol=1e-7)
    assert comparison.ok and 0 < comparison.signatures[1].max_abs_diff < 2e-7


@pytest.mark.parametrize("old, new, problem", [
    (EXPORT, {"error": "OSError: SavedModel file does not exist"},
     "the new export does not load: OSError: SavedModel file does not exist"),
    (EXPORT, None, "the old program exported to export/best, the new one did not"),
    (None, EXPORT, "the new program exported to export/best, the old one did not"),
])
def test_an_export_missing_or_not_loading_is_a_problem(old, new, problem):
    comparison = compare_export("export/best", "old", "new", old, new, rtol=1e-5, atol=1e-7)
    assert not comparison.ok and comparison.problems == [problem]


def test_exports_pair_by_the_folders_both_programs_named():
    old = {"/w/old_model/export/exporter": "a", "/w/old_model/export/final": "b",
           "/w/old_files/home/me/model/export": "c", "/w/old_model/export/best": "d"}
    new = {"/w/new_files/home/me/model/export": "x", "/w/tmp/tmp1/export/final": "y",
           "/w/tmp/tmp1/export/exporter": "z", "/w/tmp/tmp1/export/other": "o"}
    assert pair(old, new) == [
        ("export/best", "/w/old_model/export/best", None),
        ("export/exporter", "/w/old_model/export/exporter", "/w/tmp/tmp1/export/exporter"),
        ("export/final", "/w/old_model/export/final", "/w/tmp/tmp1/export/final"),
        ("export/other", None, "/w/tmp/tmp1/export/other"),
        ("home/me/model/export", "/w/old_files/home/me/model/export", "/w/new_files/home/me/model/export"),
    ]


def test_export_folders_are_shown_as_the_programs_named_them(tmp_path):
    exchange = Exchange(tmp_path)
    assert as_named(exchange, str(tmp_path / "new_files" / "home" / "me" / "export")) == "/home/me/export"
    assert as_named(exchange, str(tmp_path / "old_model" / "export" / "best")) == "<model_dir>/export/best"
    assert as_named(exchange, str(tmp_path / "tmp" / "tmpab" / "export")) == "$TMPDIR/tmpab/export"
    assert as_named(exchange, "/elsewhere/export") == "/elsewhere/export"


def with_exports(new: dict):
    report = make_report(LOSSES, list(LOSSES))
    report.exports = [compare_export("export/best", "<model_dir>/export/best", "/m/export/best", EXPORT, new,
                                     rtol=1e-5, atol=1e-7)]
    fill_comparisons(report, [{"old": "dense/kernel", "new": "dense/kernel", "shape": [2, 1], "old_shards": [],
                               "new_shards": []}], None, *[{"dense/kernel": np.ones((2, 1))}] * 2)
    return report


def test_exports_that_serve_alike_keep_the_parity_and_are_reported():
    report = with_exports(copy.deepcopy(EXPORT))
    assert report.verdict == "parity" and report.message.endswith(", 1 export serves alike (2 signatures)")
    summary = terminal_summary(report)
    assert ("export export/best: the same signatures (classification, serving_default), 1 requests answered alike"
            in summary)
    page = render_html(report)
    assert "Exports: each signature as a server loads it" in page and "&lt;model_dir&gt;/<wbr>export/<wbr>best" in page


def test_an_export_that_differs_makes_a_mismatch_of_a_training_parity():
    report = with_exports(changed(lambda s: s.pop("classification")))
    assert report.verdict == "mismatch" and report.exit_code == 1
    assert report.message == ("the exports differ: export/best, signature 'classification': missing from the new "
                              "export")
    assert "    classification: missing from the new export" in terminal_summary(report)
    assert "missing from the new export" in render_html(report)


def test_the_files_of_assets_extra_are_compared_too():
    old = {**EXPORT, "assets_extra": {"vocab.txt": "aa", "more/map.json": "bb"}}
    new = {**EXPORT, "assets_extra": {"vocab.txt": "ab", "other.txt": "cc"}}
    comparison = compare_export("export/best", "old", "new", old, new, rtol=1e-5, atol=1e-7)
    assert not comparison.ok and comparison.problems == [
        "assets.extra/more/map.json missing from the new export", "assets.extra/other.txt only in the new export",
        "assets.extra/vocab.txt differs"]


@pytest.mark.tensorflow
def test_a_string_input_of_a_feature_recorded_as_numbers_gets_no_request_and_says_why():
    """A serving function taking "1,2,3" strings for a feature the input pipeline gave as floats (it parses them
    itself): no request can be made of the recorded floats; the probe says so instead of failing to load."""
    import numpy as np
    import tensorflow as tf

    from migrator.parity.export_probe import request

    features = {"mean_rgb": np.ones((2, 3), np.float32), "video_id": np.array([b"a", b"b"])}
    made, why = request(tf, np, {"mean_rgb": ["string", [-1]], "video_id": ["string", [-1]]}, features)
    assert made is None and why == ("input 'mean_rgb' takes strings (the serving function parses them), the "
                                    "recorded feature is numbers")
    made, why = request(tf, np, {"video_id": ["string", [-1]]}, features)
    assert why is None and made["video_id"].numpy().tolist() == [b"a", b"b"]


def test_a_probe_answering_more_than_a_pipe_holds_is_read_whole(tmp_path):
    """An export's answers (a question-answering model's predictions of every tensor) can pass a pipe's 64 KiB: the
    probe writes them to a file, so it never waits for a reader, and they are read once it ends."""
    import os
    import sys

    from migrator.parity.export_check import _probe

    probe = tmp_path / "probe.py"
    probe.write_text("import json\nprint('x' * 200_000)\nprint(json.dumps({'export': {'answers': 1}}))\n")
    python = tmp_path / "python"
    python.write_text(f"#!/bin/sh\nexec {sys.executable} {probe}\n")
    python.chmod(0o755)
    found = _probe(Exchange(tmp_path), str(python), ["export"], dict(os.environ), 60, "old")
    assert found == {"export": {"answers": 1}}
