"""Stand-in data for cloudml-samples' boston trainer: boston_housing.npz as Keras' dataset file holds it, `x` (13
features a row) and `y` (the price), 160 made-up rows."""
import numpy as np

rng = np.random.RandomState(0)
x = rng.uniform(0.0, 10.0, size=(160, 13)).astype(np.float64)
y = (x @ rng.uniform(-1.0, 1.0, size=13) + 22.0 + rng.normal(size=160)).astype(np.float64)
np.savez("boston_housing.npz", x=x, y=y)
