"""TensorFlowOnSpark's context of one map_fun task (TFCluster.run(..., InputMode.TENSORFLOW)), for the real-code
runs: the task runs as a process of its own on 127.0.0.1, without Spark. A launcher in the program's folder
(standins/tfos_mnist.py writes it) imports the program's map_fun and calls ``run_task(map_fun)``; its command line:

    python tfos_map_fun.py --job {job} --index {index} --ps_hosts {ps_hosts} --worker_hosts {worker_hosts}
                           --arg steps=20 --arg format=tfr ...

``args`` is a Namespace of the ``--arg`` values (Python literals, else strings), as the program's Spark driver gave
its parsed flags. ``ctx`` holds what TensorFlowOnSpark's TFNodeContext holds: job_name, task_index, worker_num (the
executor's number: ps tasks first), cluster_spec (job -> host:port list), absolute_path (a local path here: the
default file system is the local one) and start_cluster_server: TensorFlowOnSpark 1's in a TF 1.x run (graph mode:
tf1_era.py), TensorFlowOnSpark 2's under TF 2, which raises. The Spark feed (InputMode.SPARK) is not stood in.
``run_export(export_fn)`` runs a TFEstimator's export function as TensorFlowOnSpark 1 did after training
(standins/tfos_mnist.py's tfos_export_fun.py: ``python tfos_export_fun.py --arg ...``)."""
import argparse
import ast
import os

import tensorflow as tf

DEPRECATED = "DEPRECATED: Use higher-level APIs like `tf.keras` or `tf.estimator`"  # TensorFlowOnSpark 2's


class Context:
    def __init__(self, job: str, index: int, cluster_spec: dict[str, list[str]]) -> None:
        self.job_name, self.task_index, self.cluster_spec = job, index, cluster_spec
        self.worker_num = index + (len(cluster_spec.get("ps", [])) if job == "worker" else 0)
        self.executor_id = self.worker_num
        self.num_workers = sum(len(hosts) for hosts in cluster_spec.values())
        self.defaultFS, self.working_dir = "file://", os.getcwd()

    def absolute_path(self, path: str) -> str:
        return path if "://" in path else os.path.abspath(path)

    def start_cluster_server(self, num_gpus: int = 1, rdma: bool = False):
        if tf.executing_eagerly():
            raise Exception(DEPRECATED)
        cluster = tf.train.ClusterSpec(self.cluster_spec)
        server = tf.distribute.Server(cluster, job_name=self.job_name, task_index=self.task_index,
                                      protocol="grpc+verbs" if rdma else "grpc")
        return cluster, server

    def get_data_feed(self, *args, **kwargs):
        raise NotImplementedError("InputMode.SPARK: the Spark feed is not stood in")


def _value(text: str):
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def _parser(task: bool) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser()
    for flag in ("--job", "--index", "--ps_hosts", "--worker_hosts") if task else ():
        parser.add_argument(flag, required=True, type=int if flag == "--index" else str)
    parser.add_argument("--arg", action="append", default=[], help="name=value, one of map_fun's args")
    return parser


def _args(options: argparse.Namespace) -> argparse.Namespace:
    return argparse.Namespace(**{name: _value(value) for name, value in (arg.split("=", 1) for arg in options.arg)})


def run_task(map_fun) -> None:
    options = _parser(task=True).parse_args()
    spec = {"ps": options.ps_hosts.split(","), "worker": options.worker_hosts.split(",")}
    map_fun(_args(options), Context(options.job, options.index, spec))


def run_export(export_fn) -> None:
    """TFEstimator's `export_fn(args)` (TensorFlowOnSpark 1's pipeline), which it ran after the cluster ended, on one
    executor: here a process of its own, given the same ``--arg`` values as the tasks."""
    export_fn(_args(_parser(task=False).parse_args()))
