"""Stand-in data for the course's California housing notebooks (05_artandscience's a_handtuning and c_neuralnetwork,
04_features' a_features: each reads Google's URL, mapped to this file by its entry's local_files):
california_housing_train.csv with the columns of Google's file (longitude, latitude, housing_median_age, total_rooms,
total_bedrooms, population, households, median_income, median_house_value), 400 made-up rows."""
import numpy as np

rng = np.random.RandomState(0)
rows = 400
columns = {
    "longitude": rng.uniform(-124.3, -114.3, rows),
    "latitude": rng.uniform(32.5, 42.0, rows),
    "housing_median_age": rng.randint(1, 52, rows).astype(float),
    "total_rooms": rng.uniform(100.0, 6000.0, rows),
    "total_bedrooms": rng.uniform(20.0, 1200.0, rows),
    "population": rng.uniform(50.0, 4000.0, rows),
    "households": rng.uniform(20.0, 1100.0, rows),
    "median_income": rng.uniform(0.5, 15.0, rows),
}
columns["median_house_value"] = 40000.0 * columns["median_income"] + rng.normal(0.0, 20000.0, rows) + 15000.0
with open("california_housing_train.csv", "w", encoding="utf-8") as file:
    file.write(",".join(columns) + "\n")
    for row in zip(*columns.values()):
        file.write(",".join(f"{value:.4f}" for value in row) + "\n")
