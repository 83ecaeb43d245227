"""What every program rewrite shares: programs as people write them, across functions and modules.

A program rewrite (the Estimator family, rewrites/estimator/) works in layers, each small:

- ``modules``: the modules of the run, parsed once each, and the module an import means
  (``from trainer import model``, ``from . import model``, ``import model``);
- ``places``: where code is read (a module, a function, the call that gave its parameters)
  and an expression there;
- ``values``: a value followed through assignments, parameters, return values and imports
  to where it is made; ``constants``: whether it is known before the program runs (a
  literal, a flag's default); ``relocation``: written as code at another place
  (``args.train_steps`` read in a helper is ``args.train_steps`` in its caller);
- ``spelling``: a migrated module's ``tf`` is TF2, and what stays TF1 is respelled;
- ``edits``: the changes to each module, applied at once: all files of a program or none.

The family's own readers (model_fn, input functions, RunConfig and specs) turn what they
find into plain dataclasses (rewrites/estimator/program.py), and its emitter writes the TF2
program from them.
"""
