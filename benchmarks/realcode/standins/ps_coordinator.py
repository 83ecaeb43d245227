"""The coordinator of a cluster whose tasks run server-only programs: TF 2's ParameterServerStrategy, from TF_CONFIG
(this process is its chief), puts a variable on the ps, and the ClusterCoordinator runs STEPS steps adding to it on
the workers. It exits 0 when every step ran and the variable holds their sum: the servers served the cluster."""
import tensorflow as tf

STEPS = 10

resolver = tf.distribute.cluster_resolver.TFConfigClusterResolver()
strategy = tf.distribute.experimental.ParameterServerStrategy(resolver)
coordinator = tf.distribute.experimental.coordinator.ClusterCoordinator(strategy)
with strategy.scope():
    total = tf.Variable(0.0)


@tf.function
def step():
    total.assign_add(1.0)
    return tf.constant(1.0)


results = [coordinator.schedule(step) for _ in range(STEPS)]
coordinator.join()
assert sum(result.fetch() for result in results) == STEPS and total.numpy() == STEPS, total.numpy()
print(f"{STEPS} steps on {resolver.cluster_spec().num_tasks('worker')} workers, the variable on the ps: "
      f"{total.numpy()}")
