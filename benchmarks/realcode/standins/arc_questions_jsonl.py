"""Stand-in data for training-data-analyst's question-answering notebooks (asl/open_project/question_answering): the
AI2 Reasoning Challenge's ARC-Easy train and dev questions as JSON lines (a stem, four labelled choices, the answer
key, as ARC-V1-Feb2018 has them) in ../maniac/arc/ARC-V1-Feb2018-2/ARC-Easy/, and ARC_Corpus.txt, sentences of the
same made-up science words and 50,000 rare ones, for the word2vec vectors the notebooks train first (their vocabulary
is the corpus' 50,000 commonest words, every row of which they look up by index), 6.6 million words in all: their
100,001 skip-gram batches read 64 words each, and wrapping around the corpus is a bug of theirs (`buffer[:] =` of a
deque)."""
import json
import os
import random

random.seed(0)
WORDS = [f"{stem}{suffix}" for stem in ("water", "plant", "rock", "heat", "light", "cell", "earth", "moon", "sound",
                                        "energy", "animal", "metal", "cloud", "seed", "wind", "ice")
         for suffix in ("", "s", "ed", "ing", "er", "y")]
FOLDER = os.path.join("..", "maniac", "arc", "ARC-V1-Feb2018-2", "ARC-Easy")
os.makedirs(FOLDER, exist_ok=True)


def sentence(low: int, high: int) -> str:
    return " ".join(random.choices(WORDS, k=random.randint(low, high)))


for part, rows in (("Train", 64), ("Dev", 24)):
    with open(os.path.join(FOLDER, f"ARC-Easy-{part}.jsonl"), "w") as out:
        for row in range(rows):
            labels = "ABCD" if row % 3 else "1234"
            choices = [{"text": sentence(1, 4), "label": label} for label in labels]
            out.write(json.dumps({"id": f"{part}_{row}", "question": {"stem": sentence(4, 12) + "?",
                                                                      "choices": choices},
                                  "answerKey": random.choice(labels)}) + "\n")
RARE = [f"term{index}" for index in range(50_000)]
with open("ARC_Corpus.txt", "w") as out:
    for start in range(0, len(RARE), 10):
        out.write(sentence(5, 15) + " " + " ".join(RARE[start:start + 10]) + ".\n")
    common = [sentence(8, 12) + ".\n" for _ in range(1000)]
    for _ in range(650):
        out.write("".join(common))
