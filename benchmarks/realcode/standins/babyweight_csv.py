"""Stand-in data for the babyweight programs of training-data-analyst: train.csv and eval.csv without a header, in
the layout 06_structured's notebooks read (weight_pounds, is_male, mother_age, plurality, gestation_weeks, key),
a few hundred made-up births; with --no-key, without the key (05_review's notebooks)."""
import random
import sys

PLURALITY = ["Single(1)", "Twins(2)", "Triplets(3)", "Quadruplets(4)", "Quintuplets(5)", "Multiple(2+)"]
random.seed(0)
for part, rows in (("train", 1024), ("eval", 256)):
    with open(f"{part}.csv", "w") as out:
        for index in range(rows):
            weeks, age = random.uniform(30, 44), random.randint(16, 44)
            plurality = random.choice(PLURALITY[:2] * 4 + PLURALITY)
            male = random.choice(["True", "False", "Unknown"])
            weight = round(1.5 + 0.15 * (weeks - 30) + (0.3 if male == "True" else 0) + random.uniform(-1, 1), 3)
            key = "" if "--no-key" in sys.argv else f",{part}-{index}"
            out.write(f"{weight},{male},{age},{plurality},{weeks:.1f}{key}\n")
