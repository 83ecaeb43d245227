"""A task of the cluster that only serves (a TensorFlow server of TF_CONFIG's cluster, as its task), for a cluster
whose program plays other tasks: kubeflow's default-ps image served the ps tasks, the workers ran other code."""
import json
import os

import tensorflow as tf

config = json.loads(os.environ["TF_CONFIG"])
tf.distribute.Server(tf.train.ClusterSpec(config["cluster"]), job_name=config["task"]["type"],
                     task_index=config["task"]["index"], protocol="grpc").join()
