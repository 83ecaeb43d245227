"""Stand-in data for kubeflow's github_issue_summarization trainers, which read /data/github_issues.csv and keep
their preprocessing and checkpoints in /model/ (absolute paths, a TFJob's volumes): 2400 made-up issues (columns
body and issue_title, words drawn from a small vocabulary, each title some words of its body) written there, and
/model/ emptied first so that runs do not read each other's files. /model/ is emptied only if this stand-in made
it (it holds .realcode); else it is refused. `--beside FILE ...` copies the program's own FILEs (paths relative to
this folder) here, as the program's Dockerfile did (`COPY notebooks/seq2seq_utils.py /issues`)."""
import argparse
import os
import shutil
import sys

import numpy as np
import pandas as pd

MODEL, DATA, MARK = "/model", "/data", ".realcode"

parser = argparse.ArgumentParser()
parser.add_argument("--beside", nargs="*", default=[])
for path in parser.parse_args().beside:
    shutil.copy(path, os.path.basename(path))

if os.path.isdir(MODEL) and os.listdir(MODEL) and not os.path.exists(os.path.join(MODEL, MARK)):
    sys.exit(f"{MODEL} holds files this stand-in did not write: not emptied")
shutil.rmtree(MODEL, ignore_errors=True)
os.makedirs(MODEL)
open(os.path.join(MODEL, MARK), "w").close()
os.makedirs(DATA, exist_ok=True)

rng = np.random.RandomState(0)
words = np.array([f"w{index}" for index in range(300)])
bodies, titles = [], []
for _ in range(2400):
    body = rng.choice(words, size=rng.randint(5, 60))
    bodies.append(" ".join(body))
    titles.append(" ".join(rng.choice(body, size=rng.randint(2, 8))))
pd.DataFrame({"issue_title": titles, "body": bodies}).to_csv(os.path.join(DATA, "github_issues.csv"), index=False)
