"""A check run after a program (a manifest entry's `then`): the SavedModel it exported loads with TF 2's
tf.saved_model.load (tag `serve`) and has the signatures given, each with exactly the input and output keys given,
and each computes, on zeros of its inputs' shapes (a batch of 2 where a dimension is unknown), outputs of that batch.

    python {checks}/saved_model.py EXPORT_DIR serving_default:image:prediction featurize:image:features
"""
import sys

import tensorflow as tf

folder, *expected = sys.argv[1:]
model = tf.saved_model.load(folder)
for text in expected:
    key, inputs, outputs = text.split(":")
    if key not in model.signatures:
        sys.exit(f"error: {folder} has no signature {key!r} (it has {sorted(model.signatures)})")
    function = model.signatures[key]
    specs = function.structured_input_signature[1]
    found = (sorted(specs), sorted(function.structured_outputs))
    if found != (sorted(inputs.split(",")), sorted(outputs.split(","))):
        sys.exit(f"error: signature {key!r} of {folder} has inputs {found[0]} and outputs {found[1]}, not {text}")
    feed = {name: tf.zeros([2 if size is None else size for size in spec.shape], spec.dtype)
            for name, spec in specs.items()}
    results = function(**feed)
    batches = {name: int(value.shape[0]) for name, value in results.items() if value.shape.rank}
    if any(batch != 2 for batch in batches.values()):
        sys.exit(f"error: signature {key!r} of {folder} computed outputs of batches {batches} for a batch of 2")
    print(f"SavedModel {folder}: signature {key!r}: inputs {found[0]}, outputs {found[1]}")
