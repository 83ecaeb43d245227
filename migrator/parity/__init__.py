"""The equivalence harness: train the TF1 program and its TF2 migration side by side.

`tf-migrate parity OLD.py NEW.py` runs each program in a child process of its own
(migrator/parity/old_side.py, new_side.py), feeds both the same batches from the
same initial weights, and compares their per-step losses, eval loss and final
weights (compare.py); report.py writes the terminal, JSON and HTML reports.
"""
