"""TensorFlowOnSpark's `TFNode` for the real-code runs of a map_fun (InputMode.TENSORFLOW) without Spark: the
functions of it such a map_fun calls with its context (tfos_context.Context). See TFNode.py."""
