"""Run a TF2 program as the chief of a cluster started in this process: python in_process_cluster.py PROGRAM
(or `-m MODULE`, as `python -m MODULE` runs it from the current folder).

One worker and two parameter servers (tf.distribute.Server on free localhost ports),
TF_CONFIG naming this process the chief, then PROGRAM as `python PROGRAM` would run
it, unpatched: its own ParameterServerStrategy trains on the cluster.
"""

import json
import os
import runpy
import sys

import portpicker
import tensorflow as tf

PS_COUNT = 2

program = sys.argv[1:]
ports = [portpicker.pick_unused_port() for _ in range(2 + PS_COUNT)]
cluster = {"chief": [f"localhost:{ports[0]}"], "worker": [f"localhost:{ports[1]}"],
           "ps": [f"localhost:{port}" for port in ports[2:]]}
os.environ["TF_CONFIG"] = json.dumps({"cluster": cluster, "task": {"type": "chief", "index": 0}})
spec = tf.train.ClusterSpec(cluster)
servers = [tf.distribute.Server(spec, job_name="worker", task_index=0, protocol="grpc")]
servers += [tf.distribute.Server(spec, job_name="ps", task_index=index, protocol="grpc") for index in range(PS_COUNT)]
if program[0] == "-m":
    sys.argv = program[1:]
    sys.path.insert(0, os.getcwd())
    runpy.run_module(program[1], run_name="__main__", alter_sys=True)
else:
    sys.argv = program
    sys.path.insert(0, os.path.dirname(os.path.abspath(program[0])))
    runpy.run_path(program[0], run_name="__main__")
