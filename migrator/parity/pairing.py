"""Which variable of the new program is which of the old: by TF1's names where the new program keeps them all (a
model_fn kept as written, tier 2), else by creation order and shape, shards grouped, or by the names of a canned
estimator's migration; and reading or writing a variable whole, whatever its shards."""

from __future__ import annotations

import re


def model_variables(model) -> list[dict]:
    """The model's variables in creation order, trainable first, shards (`.../part_N`) grouped; not those of
    the metrics it holds (a loss tracker of its own train_step)."""
    tracking = {id(variable) for metric in model.metrics for variable in metric.variables}
    return group_variables([(True, model.trainable_weights),
                            (False, [w for w in model.non_trainable_weights if id(w) not in tracking])])


def group_variables(kinds: list[tuple[bool, list]]) -> list[dict]:
    """(trainable, variables) lists -> one entry per variable, shards (`.../part_N`) grouped."""
    groups: list[dict] = []
    seen: dict[str, int] = {}
    for trainable, weights in kinds:
        for weight in weights:
            name = weight.name.split(":")[0]
            shard = re.fullmatch(r"(.*)/part_\d+", name)
            base = shard.group(1) if shard else name
            if shard and groups and groups[-1]["name"].startswith(base) and groups[-1]["shards"]:
                group = groups[-1]
                group["shards"].append(weight.shape.as_list())
                group["parts"].append(weight)
                group["shape"][0] += weight.shape[0]
                continue
            # Keras layers built outside a call name their weights "kernel", "bias": told apart by a count.
            seen[base] = seen.get(base, 0) + 1
            base = base if seen[base] == 1 else f"{base}_{seen[base] - 1}"
            groups.append({"name": base, "shape": weight.shape.as_list(), "trainable": trainable, "parts": [weight],
                           "shards": [weight.shape.as_list()] if shard else []})
    return groups


def pair_variables(old: list[dict], new: list[dict]) -> tuple[list[tuple[dict, dict]], str | None]:
    """Old and new variables paired by TF1's names where the new program keeps them all (TF1 code run in
    Keras: track_tf1_style_variables), else in order within trainable and non-trainable; why not, if they
    differ."""
    by_name = pair_same_names(old, new)
    if by_name is not None:
        return by_name, None
    pairs, problems = [], []
    for trainable in (True, False):
        olds = [v for v in old if v["trainable"] == trainable]
        news = [v for v in new if v["trainable"] == trainable]
        kind = "trainable" if trainable else "non-trainable"
        if len(olds) != len(news):
            problems.append(f"{len(olds)} {kind} variables in the old model, {len(news)} in the new")
        for o, n in zip(olds, news):
            if o["shape"] != n["shape"]:
                problems.append(f"{o['name']} {o['shape']} pairs with {n['name']} {n['shape']}")
            pairs.append((o, n))
    if problems:
        by_name = pair_canned_variables(old, new)
        if by_name is not None:
            return by_name, None
        return pairs, "the variables do not line up: " + "; ".join(problems) + " (initial weights not copied)"
    return pairs, None


def pair_same_names(old: list[dict], new: list[dict]) -> list[tuple[dict, dict]] | None:
    """Each old variable with the new one of its name and shape; None unless that pairs every variable."""
    by_name = {variable["name"]: variable for variable in new}
    pairs = [(variable, by_name.get(variable["name"])) for variable in old]
    if len(old) != len(new) or any(n is None or n["shape"] != o["shape"] or n["trainable"] != o["trainable"]
                                   for o, n in pairs):
        return None
    return pairs


# A canned estimator's migration names its Keras layers after TF1's variables (rewrites/estimator/canned.py).
CANNED_NAMES = [(r"dnn/(hiddenlayer_\d+(/batchnorm_\d+)?|logits)/\w+", r"\g<0>"),
                (r".*/(\w+_embedding)/embedding_weights", r"\1/kernel"),
                (r"linear/linear_model/(\w+)/weights", r"\1_weights/kernel"),
                (r"linear/linear_model/bias_weights", None)]  # the bias of the linear model's last layer


def pair_canned_variables(old: list[dict], new: list[dict]) -> list[tuple[dict, dict]] | None:
    """A canned estimator's variables paired by name, where creation orders differ (wide & deep: TF1 made the DNN
    first, Keras' WideDeepModel holds the linear part first); None unless every one pairs, shapes equal."""
    by_name = {variable["name"]: variable for variable in new}
    biases = [variable for variable in new if re.fullmatch(r"\w+_weights/bias", variable["name"])]
    pairs = []
    for variable in old:
        rule = next(((pattern, to) for pattern, to in CANNED_NAMES if re.fullmatch(pattern, variable["name"])), None)
        if rule is None:
            return None
        pattern, to = rule
        match = by_name.get(re.sub(pattern, to, variable["name"])) if to else (biases[0] if len(biases) == 1 else None)
        if match is None or match["shape"] != variable["shape"]:
            return None
        pairs.append((variable, match))
    return pairs if len(pairs) == len(new) and len({id(n) for _, n in pairs}) == len(new) else None


def assign_full_value(parts: list, value) -> None:
    """Assign a full tensor to a variable held whole or in shards along axis 0."""
    if len(parts) == 1:
        parts[0].assign(value)
        return
    start = 0
    for part in parts:
        rows = part.shape[0]
        part.assign(value[start:start + rows])
        start += rows


def full_value(parts: list):
    import numpy as np

    return np.concatenate([part.numpy() for part in parts], axis=0) if len(parts) > 1 else parts[0].numpy()
