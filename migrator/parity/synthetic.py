"""Deterministic toy batches shaped like a program's input (``--data synthetic``)."""

from __future__ import annotations

SYNTHETIC_BATCH = 8  # for dimensions the input leaves open


def synthetic_batches(tensors, count: int, seed: int) -> list:
    """``count`` batches with the structure, dtypes and static shapes of ``tensors``.

    Floats are standard normal, integers 0 or 1 (valid class ids and indices for
    any model), booleans random, strings "a" or "b". Open dimensions become
    SYNTHETIC_BATCH.
    """
    import numpy as np
    import tensorflow as tf

    random = np.random.RandomState(seed)

    def make(tensor):
        if tensor is None:
            return None
        shape = [dim if dim is not None else SYNTHETIC_BATCH for dim in tensor.shape.as_list()]
        dtype = tensor.dtype
        if dtype.is_floating:
            return random.standard_normal(shape).astype(dtype.as_numpy_dtype)
        if dtype.is_integer:
            return random.randint(0, 2, size=shape).astype(dtype.as_numpy_dtype)
        if dtype.is_bool:
            return random.randint(0, 2, size=shape).astype(bool)
        if dtype == tf.string:
            return np.where(random.randint(0, 2, size=shape) == 1, b"a", b"b")
        raise ValueError(f"cannot make synthetic data of type {dtype.name}")

    return [tf.nest.map_structure(make, tensors) for _ in range(count)]
