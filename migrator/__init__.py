"""tf-migrate: move TensorFlow 1 distributed training to TensorFlow 2."""

__version__ = "0.1.0"
