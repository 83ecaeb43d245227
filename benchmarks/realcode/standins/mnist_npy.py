"""Stand-in data for SageMaker's TF1 MNIST script-mode examples that read numpy arrays (aws_sagemaker_studio/frameworks/
tensorflow_mnist, sagemaker-python-sdk/tensorflow_script_mode_mnist and tensorflow_script_mode_training_and_serving):
train_data.npy and eval_data.npy (float32, 784 pixels in [0, 1] a row, as SageMaker's sample data holds them) and
train_labels.npy and eval_labels.npy (int32, 0-9) in the current folder, 600 and 200 made-up images, each brighter
where its label is higher, so the model has something to learn."""
import numpy as np

rng = np.random.RandomState(0)
for prefix, count in (("train", 600), ("eval", 200)):
    labels = rng.randint(10, size=count).astype(np.int32)
    images = np.clip(rng.normal(20 * labels[:, None], 40, size=(count, 784)), 0, 255) / 255
    np.save(f"{prefix}_data.npy", images.astype(np.float32))
    np.save(f"{prefix}_labels.npy", labels)
