"""dill, as programs use it to save and load plain objects: pickle's functions."""
from pickle import dump, dumps, load, loads

__all__ = ["dump", "dumps", "load", "loads"]
