"""Runs a TF1 program as TF 1.x ran it, under TensorFlow 2: ``python tf1_era.py PROGRAM.py ARGS...`` (or ``-m
MODULE ARGS...``). The program's own module and the modules the parity harness reads as written for TF 1.x get
``tensorflow.compat.v1`` for their ``import tensorflow``, in graph mode, and TF 1.x's renamed private names, as the
parity harness's old side gives them (migrator/parity/era.py); the program runs as ``__main__``. The program's own
module always: it is the TF1 copy (a server-only program's `tf.train.Server` is not among the names the harness
reads as TF1's). run.py runs the TF1 copies so with --run-original (tf-migrate must be importable)."""
import importlib.util
import os
import runpy
import sys

from migrator.parity.era import give_python_keras, give_tf1_private_names, give_v1, tf1_era_modules
from rewrites.private_successors import RENAMED


def main(args: list[str]) -> None:
    module = None
    if args[0] == "-m":
        module, args = args[1], args[2:]
        sys.path.insert(0, os.getcwd())
        path = importlib.util.find_spec(module).origin
    else:
        path, args = os.path.abspath(args[0]), args[1:]
        sys.path.insert(0, os.path.dirname(path))
    give_v1([path, *tf1_era_modules(path, path, {})])
    give_python_keras()
    give_tf1_private_names(RENAMED)
    sys.argv = [path, *args]
    if module:
        runpy.run_module(module, run_name="__main__", alter_sys=True)
    else:
        runpy.run_path(path, run_name="__main__")


if __name__ == "__main__":
    main(sys.argv[1:])
