"""Stand-in data for training-data-analyst's txtclsmodel trainers (09_sequence, 09_sequence_keras): train.tsv and
eval.tsv of "source<TAB>headline" lines, the source one of github, nytimes, techcrunch (made-up headlines of words
drawn per source). The trainers import google.cloud.storage only to download gs:// paths: a local module of that
name (in namespace packages, as google's are) that refuses to download stands in for the package."""
import os
import random

random.seed(0)
WORDS = {"github": "repo commit release open source tool library rust python fork".split(),
         "nytimes": "president senate election court city police war market report".split(),
         "techcrunch": "startup raises funding series app launch round investors valuation".split()}
for part, rows in (("train", 96), ("eval", 32)):
    with open(f"{part}.tsv", "w") as out:
        for _ in range(rows):
            source = random.choice(sorted(WORDS))
            out.write(f"{source}\t{' '.join(random.choices(WORDS[source], k=random.randint(3, 9)))}\n")
os.makedirs("google/cloud", exist_ok=True)  # namespace packages, beside protobuf's google
with open("google/cloud/storage.py", "w") as out:
    out.write("def Client():\n    raise RuntimeError('the stand-in reads local files only')\n")
