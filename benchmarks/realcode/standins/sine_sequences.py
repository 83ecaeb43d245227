"""Stand-in data for training-data-analyst's sinemodel: train.csv and valid.csv, each row a sequence of 10 values
of a sine wave of random frequency and phase (9 features, then the value to predict), without a header."""
import math
import random

random.seed(0)
for name, rows in (("train.csv", 256), ("valid.csv", 64)):
    with open(name, "w") as out:
        for _ in range(rows):
            frequency, phase = random.uniform(0.1, 0.5), random.uniform(0, math.pi)
            out.write(",".join(f"{math.sin(phase + frequency * step):.4f}" for step in range(10)) + "\n")
