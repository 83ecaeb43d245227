"""sklearn's train_test_split for one DataFrame or array: rows shuffled, then split."""
import numpy as np


def train_test_split(data, test_size=0.25, random_state=None):
    order = np.random.RandomState(random_state).permutation(len(data))
    test = int(np.ceil(test_size * len(data))) if isinstance(test_size, float) else int(test_size)
    rows = (lambda indices: data.iloc[indices]) if hasattr(data, "iloc") else (lambda indices: data[indices])
    return rows(order[test:]), rows(order[:test])
