"""dill, as programs use it to save and load plain objects: pickle's functions."""
from pickle import dump, dumps, load, loads  # noqa: F401
