"""A notebook cell that writes a Python module (`%%writefile trainer/task.py`) holds code the notebook does not run:
tf-migrate reads it to say what TF1 code it writes, and leaves it as it is. The rule page:

TFM002 written-module

What it does: reports a notebook's `%%writefile` cell writing a Python module that holds TF1 code a rule handles (an
Estimator program, TF1 cluster code, partitioners, numpy or pandas input functions), and leaves the cell as
it is.
Why: courses and tutorials write their trainer package from notebook cells and run it with `gcloud` or
`python -m`; the module is code for another process, a file-to-be, and tf-migrate migrates files. Without
this finding the TF1 code in those cells would stay without a word.
What may differ: nothing: the cell is unchanged; run it, migrate the files it writes (`tf-migrate trainer/`),
and paste them back into the cell, or keep the package as files next to the notebook.

Before:

    %%writefile trainer/task.py
    import tensorflow.compat.v1 as tf

    server = tf.train.Server(cluster, job_name="ps")

After:

    %%writefile trainer/task.py
    import tensorflow.compat.v1 as tf

    server = tf.train.Server(cluster, job_name="ps")

Finding:

    1:1: TFM002 [manual] `%%writefile trainer/task.py` writes TF1 code (TF1 servers): tf-migrate migrates the notebook's own code, not a file a cell writes: run the cell, migrate trainer/task.py with tf-migrate and paste it back
"""

from __future__ import annotations

WRITTEN_RULE = "TFM002"

# What each family's code is, in a sentence.
WHAT = {
    "servers": "TF1 servers",
    "partitioners": "TF1 partitioners",
    "tf1_cluster": "TF1 cluster code",
    "between_graph": "TF1 cluster code",
    "estimator_inputs": "numpy or pandas input functions",
    "estimator": "an Estimator program",
}  # (removed_apis reports what a module imports, which needs no word here: its cell is not run as TF1 code)


def message(target: str, families: tuple[str, ...]) -> str:
    what = ", ".join(dict.fromkeys(WHAT[family] for family in families if family in WHAT))
    return (f"`%%writefile {target}` writes TF1 code ({what}): tf-migrate migrates the notebook's own code, not a "
            f"file a cell writes: run the cell, migrate {target} with tf-migrate and paste it back")
