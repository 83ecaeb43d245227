"""Names of TF 1.x's private modules (`tensorflow.python.*`) that TF 2's same module keeps under another name.

Shared by TFM011 (rewrites/private_renamed.py), which respells a migrated program's uses, and the parity harness's
old side (migrator.parity.era), which gives a TF 1.x program the old names on TF 2 so that it runs as it did. Each
is checked to be the very object TF 2 exports (tests/test_private_renamed.py). TF 1.13 made `_get_logger` public.
"""

# TF 1.x's qualified name -> TF 2's name for the same object, in the same module.
RENAMED = {
    "tensorflow.python.platform.tf_logging._get_logger": "get_logger",
}
