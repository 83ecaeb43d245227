"""A notebook cell that writes a Python module (`%%writefile trainer/task.py`) holds code the notebook does not run,
the module of a trainer package: tf-migrate migrates it as the module it writes, beside the notebook (the
program it is part of: the modules the notebook's other cells write), and puts it back in the cell. Where it
cannot, TFM002 says so. The rule page:

TFM002 written-module

What it does: reports a notebook's `%%writefile` cell writing a Python module that holds TF1 code a rule handles (an
Estimator program, TF1 cluster code, partitioners, numpy or pandas input functions) that tf-migrate cannot
migrate as a module of its own: the cell appends to the file (`-a`), its path is known only when it runs (`$VAR`,
`~`, a `{variable}` other than the one naming the folder it writes in, which is migrated), another cell writes the
same file, the run migrates that file itself, or the module is not valid Python 3. The cell stays as it is.
Why: courses and tutorials write their trainer package from notebook cells and run it with `gcloud` or
`python -m`; without this finding the TF1 code in those cells would stay without a word.
What may differ: nothing: the cell is unchanged; run it, migrate the file it writes (`tf-migrate trainer/`),
and paste it back into the cell, or keep the package as files next to the notebook.

Before:

    %%writefile -a trainer/task.py
    import tensorflow.compat.v1 as tf

    server = tf.train.Server(cluster, job_name="ps")

After:

    %%writefile -a trainer/task.py
    import tensorflow.compat.v1 as tf

    server = tf.train.Server(cluster, job_name="ps")

Finding:

    1:1: TFM002 [manual] `%%writefile trainer/task.py` writes TF1 code (TF1 servers) that tf-migrate leaves as it is: the cell appends to it (`-a`); run the cell, migrate trainer/task.py with tf-migrate and paste it back
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


def message(target: str, families: tuple[str, ...], why: str) -> str:
    # tf1_cluster also wakes for an Estimator's words (a served Estimator left gets its TFM104 from it): it names
    # the code only when no other family does (a device string naming /job:ps).
    named = [WHAT[family] for family in families if family in WHAT and family != "tf1_cluster"]
    what = ", ".join(dict.fromkeys(named)) or WHAT["tf1_cluster"]
    return (f"`%%writefile {target}` writes TF1 code ({what}) that tf-migrate leaves as it is: {why}; run the cell, "
            f"migrate {target} with tf-migrate and paste it back")
