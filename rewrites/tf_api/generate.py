"""Regenerate ``tf2_spelling.txt`` from the installed TensorFlow.

Run with the parity environment (TensorFlow 2.15.1, tensorflow-estimator, tf-keras)::

    .venv/bin/python -m rewrites.tf_api.generate            # rewrite the shipped table
    .venv/bin/python -m rewrites.tf_api.generate --check    # exit 1 if the shipped table is stale
    .venv/bin/python -m rewrites.tf_api.generate --stdout   # print it

This is the only module of the project that imports TensorFlow outside the parity
harness; nothing imports it at run time.

How a compat.v1 path P is classified (``tensorflow.compat.v1.P`` against TF2's ``tensorflow``):

* the public API of ``tf.compat.v1`` and of ``tf`` (without ``tf.compat``) is walked
  recursively: the public names of API modules, submodules only when they are generated
  API modules (``tf.tools``, ``tf.tsl``... which Python's import system leaves on the
  package are internals), and class members where they can matter: the static and class
  methods, constants and nested classes of every class whose TF2 namesake is another
  class (``data.Dataset``, ``losses.Reduction``, ``image.ResizeMethod``...), the
  members such a class has and its TF2 namesake has not (``make_one_shot_iterator``),
  and every member of ``MEMBER_CLASSES``. A method or property used on instances
  answers with its class (nobody spells ``tf.data.Dataset.batch``);
* an object (function, class, dtype, enum member...) is *same* when a TF2 public path
  holds the very same object (``is``): P itself if it does, else the most canonical
  TF2 path (the fewest ``experimental`` / ``raw_ops`` / ``__internal__`` components,
  TensorFlow's own first export name, the shortest). Never a path through Keras
  (``tf.keras``, and ``tf.losses``, ``tf.metrics``, ``tf.optimizers``, ``tf.initializers``,
  Keras modules in TF2): from TensorFlow 2.16 they are Keras 3, another library, while
  ``tf.compat.v1.P`` stays what it was. ``tf.estimator`` only for an Estimator API
  (``tf.compat.v1.train.SessionRunHook`` is TensorFlow's own and outlives
  tensorflow-estimator, which TensorFlow 2.16 dropped);
* *same computation* (``~``) when the TF2 object is TensorFlow's WeakTensor wrapper of
  it (``tf.math.log`` wraps what ``tf.compat.v1.math.log`` is; ``tf.compat.v1.log``
  is the wrapper too), which calls it unchanged unless numpy-style dtype promotion is
  switched on with ``tf.experimental.numpy.experimental_enable_numpy_behavior``;
* a plain value (str, int, float, bool, None, tuple, frozenset) is never matched by
  identity (small ints and strings are shared by Python). A module-level constant is
  *same* only when TensorFlow's export registry (``tf_export(...).export_constant``)
  says the v1 and the v2 name export the same variable; a class attribute only when
  its class is *same*;
* a module is *same* (Q = P) when TF2 has a module at P that is not Keras: a namespace
  computes nothing, its members have their own answers;
* otherwise *v1only* when TF2 has nothing at P, *differs* when it has something else.

The table is then compressed: a line is dropped when the nearest line above it in
the path hierarchy already gives the same answers for it (its TF2 spelling, whether it
exists in TF2, whether it is v1-only), so the lookup by longest prefix stays exact
for every path walked. ``keras`` (``tf.compat.v1.keras``) is not walked: one line says
"keep the compat.v1 spelling", which is always the same object.
"""

from __future__ import annotations

import argparse
import functools
import inspect
import sys
import types
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

TABLE = Path(__file__).resolve().parent / "tf2_spelling.txt"

# Classes whose members are walked even when the class itself is the same object in
# TF2 or is v1-only (their members are then covered by the class's line).
MEMBER_CLASSES = (
    "estimator.ModeKeys",
    "GraphKeys",
    "losses.Reduction",
    "data.Dataset",
    "data.TextLineDataset",
    "data.TFRecordDataset",
    "data.FixedLengthRecordDataset",
)

# Generated API modules (a module whose __name__ starts so is part of the public API).
API_MODULE_PREFIXES = (
    "tensorflow._api.",
    "tensorflow.compat.v1.",  # tf.compat.v1.logging
    "keras.api.",
    "tensorflow_estimator.python.estimator.api.",
    "tensorboard.summary._tf.",
)

# Not walked below: one line keeps them on their compat.v1 spelling.
OPAQUE = ("keras",)

# Components a TF2 spelling should avoid, and the Keras namespaces it never takes.
DISCOURAGED = {"experimental", "raw_ops", "__internal__", "compat", "v1", "v2"}
KERAS_MODULE_PREFIX = "keras."

# TF2 wraps many ops for WeakTensor dtype promotion; the wrapper calls the op unchanged
# unless tf.experimental.numpy.experimental_enable_numpy_behavior(dtype_conversion_mode=...)
# is on (weak_tensor_ops.py: `if not ops.is_auto_dtype_conversion_enabled(): return op(...)`).
WEAK_TENSOR_WRAPPERS = ("tensorflow/python/ops/weak_tensor_ops.py",)

PLAIN = (str, bytes, int, float, complex, bool, type(None), tuple, frozenset)

SAME, MOVED, V1ONLY, DIFFERS, TF2ONLY, WRAPPED = "=", ">", "-", "!", "+", "~"


# --------------------------------------------------------------------------------------------------
# Walking the API


@dataclass
class Api:
    """Every public path of one API root -> its object, and for TF2 the reverse index."""

    objects: dict[str, object]
    keras_paths: set[str]  # paths reached through a Keras module (TF2: tf.losses, tf.metrics...)
    by_id: dict[int, list[str]]
    weak_wrappers: dict[int, list[str]]  # id of a function -> the paths of TF2's WeakTensor wrappers of it


def _is_api_module(module: types.ModuleType) -> bool:
    return getattr(module, "__name__", "").startswith(API_MODULE_PREFIXES)


def _public_names(obj) -> list[str]:
    try:
        names = dir(obj)
    except Exception:  # noqa: BLE001 - a broken lazy loader is simply not walked
        return []
    return sorted(name for name in names if not name.startswith("_"))


def _get(obj, name):
    try:
        return getattr(obj, name)
    except Exception:  # noqa: BLE001 - deprecated or broken endpoints: not part of the table
        return _MISSING


_MISSING = object()


def walk(root: types.ModuleType, skip: set[str]) -> Api:
    objects: dict[str, object] = {}
    keras_paths: set[str] = set()

    def visit(module, prefix: str, stack: tuple[int, ...], through_keras: bool) -> None:
        for name in _public_names(module):
            path = prefix + name
            if path in skip:
                continue
            obj = _get(module, name)
            if obj is _MISSING:
                continue
            if isinstance(obj, types.ModuleType):
                if not _is_api_module(obj):
                    # `tf.tools`, `tf.tsl`: the package's submodules, not API. `tf.compat.v1.flags`
                    # (absl's flags under another name) is API: a leaf.
                    if obj.__name__ == f"{getattr(module, '__name__', '')}.{name}":
                        continue
                    objects[path] = obj
                    continue
                objects[path] = obj
                keras = through_keras or obj.__name__.startswith(KERAS_MODULE_PREFIX)
                if keras:
                    keras_paths.add(path)
                if id(obj) in stack or path in OPAQUE:
                    continue
                visit(obj, path + ".", stack + (id(obj),), keras)
            else:
                objects[path] = obj
                if through_keras:
                    keras_paths.add(path)

    visit(root, "", (id(root),), False)
    by_id: dict[int, list[str]] = defaultdict(list)
    for path, obj in objects.items():
        if not isinstance(obj, PLAIN) and not isinstance(obj, types.ModuleType):
            by_id[id(obj)].append(path)
    weak_wrappers: dict[int, list[str]] = defaultdict(list)
    for path, obj in objects.items():
        wrapped = getattr(obj, "__wrapped__", None) if isinstance(obj, types.FunctionType) else None
        if wrapped is not None and obj.__code__.co_filename.endswith(WEAK_TENSOR_WRAPPERS):
            weak_wrappers[id(wrapped)].append(path)
    return Api(objects, keras_paths, by_id, weak_wrappers)


def exported_constants(module_attr: str) -> dict[tuple[str, str], tuple[str, ...]]:
    """TensorFlow's and the Estimator's export registries of constants: (module, name) -> API names."""
    found: dict[tuple[str, str], tuple[str, ...]] = {}
    for module_name, module in list(sys.modules.items()):
        try:
            namespace = vars(module)  # not getattr: it would wake lazy loaders
        except TypeError:
            continue
        for prefix in ("_tf", "_estimator"):
            entries = namespace.get(prefix + module_attr)
            if isinstance(entries, list):
                for names, name in entries:
                    found[(module_name, name)] = found.get((module_name, name), ()) + tuple(names)
    return found


# --------------------------------------------------------------------------------------------------
# Classifying


@dataclass(frozen=True)
class Entry:
    kind: str  # SAME, MOVED, V1ONLY, DIFFERS, TF2ONLY, WRAPPED
    tf2: str | None = None  # the TF2 path when not the v1 path (MOVED, WRAPPED, DIFFERS with the object elsewhere)

    def answers(self, path: str) -> tuple[str | None, bool, bool]:
        """(TF2 spelling or None for "compat.v1."+path, exists in TF2, v1-only) for ``path`` itself."""
        return self.derive(path, path)

    def derive(self, own: str, path: str) -> tuple[str | None, bool, bool]:
        """The answers for ``path``, a descendant of this entry's ``own`` path (or itself)."""
        rest = path[len(own):]
        spelled = self.kind in (SAME, MOVED, WRAPPED) or (self.kind == DIFFERS and self.tf2)
        spelling = (self.tf2 or own) + rest if spelled else None
        exists = self.kind in (SAME, DIFFERS, TF2ONLY) or (self.kind == WRAPPED and not self.tf2)
        return spelling, exists, self.kind == V1ONLY


def _canonical_names(obj) -> tuple[str, ...]:
    own = getattr(obj, "__dict__", {}) if isinstance(obj, type) else None
    names = []
    for attr in ("_tf_api_names", "_estimator_api_names"):
        value = own.get(attr) if own is not None else getattr(obj, attr, None)
        if isinstance(value, (list, tuple)):
            names += value
    return tuple(names)


def _preference(path: str, want: str, canonical: tuple[str, ...]):
    parts = path.split(".")
    return (
        path != want,
        sum(part in DISCOURAGED for part in parts),
        path not in canonical[:1],
        path not in canonical,
        len(parts),
        len(path),
        path,
    )


def _may_spell(v1_path: str, tf2_path: str, tf2: Api) -> bool:
    """Whether TF2 code may write ``tf2_path`` for the compat.v1 API ``v1_path``.

    Never a Keras namespace (Keras 3 from TensorFlow 2.16), and ``tf.estimator`` only for
    what was an Estimator API already (``tf.compat.v1.train.SessionRunHook`` is TensorFlow's
    own and outlives tensorflow-estimator, which TensorFlow 2.16 dropped).
    """
    if tf2_path in tf2.keras_paths:
        return False
    return tf2_path.split(".")[0] != "estimator" or v1_path.split(".")[0] == "estimator"


def _tf2_at(tf2: Api, path: str):
    """The TF2 object at ``path`` (class members too), or _MISSING."""
    if path in tf2.objects:
        return tf2.objects[path]
    owner, _, name = path.rpartition(".")
    if owner and isinstance(tf2.objects.get(owner), type):
        return _get(tf2.objects[owner], name)
    return _MISSING


_INSTANCE_MEMBERS = (
    types.FunctionType,
    property,
    functools.cached_property,
    types.MemberDescriptorType,
    types.GetSetDescriptorType,
    types.WrapperDescriptorType,
    types.MethodDescriptorType,
)


def _instance_member(cls: type, name: str) -> bool:
    """A method or property (as opposed to a constant, nested class, static or class method)."""
    try:
        return isinstance(inspect.getattr_static(cls, name), _INSTANCE_MEMBERS)
    except AttributeError:
        return False


def _same_member(a, b) -> bool:
    if isinstance(a, types.MethodType) and isinstance(b, types.MethodType):
        return a.__func__ is b.__func__ and a.__self__ is b.__self__
    return a is b


def classify(v1: Api, tf2: Api) -> dict[str, Entry]:
    v1_constants = exported_constants("_api_constants_v1")
    v2_constants = exported_constants("_api_constants")
    constant_sources: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for source, names in v1_constants.items():
        for name in names:
            constant_sources[name].append(source)

    table: dict[str, Entry] = {}
    for path, obj in sorted(v1.objects.items()):
        there = _tf2_at(tf2, path)
        exists = there is not _MISSING
        if isinstance(obj, types.ModuleType):
            namespace = isinstance(there, types.ModuleType) and _may_spell(path, path, tf2)
            kind = SAME if namespace else DIFFERS if exists else V1ONLY
            table[path] = Entry(kind, None)
            continue
        if isinstance(obj, PLAIN):
            candidates = [name for source in constant_sources.get(path, ()) for name in v2_constants.get(source, ())]
            candidates = [name for name in candidates if name in tf2.objects]
        else:
            candidates = tf2.by_id.get(id(obj), [])
        candidates = [name for name in candidates if _may_spell(path, name, tf2)]
        canonical = _canonical_names(obj)
        if candidates:
            best = min(candidates, key=lambda name: _preference(name, path, canonical))
            kind = SAME if best == path else DIFFERS if exists else MOVED
            table[path] = Entry(kind, None if best == path else best)
            continue
        wrappers = [name for name in tf2.weak_wrappers.get(id(obj), ()) if _may_spell(path, name, tf2)]
        if wrappers and not isinstance(obj, PLAIN):
            best = min(wrappers, key=lambda name: _preference(name, path, canonical))
            if best == path or not exists:
                table[path] = Entry(WRAPPED, None if best == path else best)
                continue
        table[path] = Entry(DIFFERS if exists else V1ONLY)

    # Class members: where the TF2 namesake is another class, and for MEMBER_CLASSES.
    for path, obj in sorted(v1.objects.items()):
        if not isinstance(obj, type) or path.split(".")[0] in OPAQUE:
            continue
        entry = table[path]
        there = _tf2_at(tf2, path)
        if not (entry.kind == DIFFERS and isinstance(there, type)) and path not in MEMBER_CLASSES:
            continue
        for name in _public_names(obj):
            member_path = f"{path}.{name}"
            if member_path in table:
                continue
            member = _get(obj, name)
            if member is _MISSING or isinstance(member, types.ModuleType):
                continue
            if entry.tf2:  # the class is the same object at another TF2 path: so are its members
                table[member_path] = Entry(entry.kind, f"{entry.tf2}.{name}")
                continue
            if entry.kind == SAME:
                table[member_path] = Entry(SAME)
                continue
            theirs = _get(there, name) if isinstance(there, type) else _MISSING
            if theirs is _MISSING:
                table[member_path] = Entry(V1ONLY)
            elif _instance_member(obj, name):
                continue  # used on instances, not spelled from `tf`: its class's line answers for it
            elif not isinstance(member, PLAIN) and _same_member(member, theirs):
                table[member_path] = Entry(SAME)
            else:
                table[member_path] = Entry(DIFFERS)
        if isinstance(there, type) and entry.kind == DIFFERS:
            for name in _public_names(there):
                table.setdefault(f"{path}.{name}", Entry(TF2ONLY))

    for path in tf2.objects:
        if path not in table:
            table[path] = Entry(TF2ONLY)
    return table


def compress(table: dict[str, Entry]) -> dict[str, Entry]:
    """Drop each line whose nearest kept ancestor already answers the same for it.

    TF2ONLY paths are not compat.v1 APIs: only their existence and v1-only answers count.
    Dropping a line never changes its descendants' answers (same answers at the line
    itself imply the same derivation below it), so top-down is exact.
    """
    kept: dict[str, Entry] = {}
    unlisted = (None, False, False)  # no listed prefix: the compat.v1 spelling, not in TF2, not known v1-only

    def nearest(path: str) -> tuple[str, Entry] | None:
        while "." in path:
            path = path.rpartition(".")[0]
            if path in kept:
                return path, kept[path]
        return None

    for path in sorted(table):
        entry = table[path]
        ancestor = nearest(path)
        derived = ancestor[1].derive(ancestor[0], path) if ancestor else unlisted
        own = entry.answers(path)
        if entry.kind == TF2ONLY:
            keep = derived[1:] != own[1:]
        else:  # a WRAPPED line stays even where its prefix implies its answers: it says why
            keep = derived != own or entry.kind == WRAPPED
        if keep:
            kept[path] = entry
    return kept


# --------------------------------------------------------------------------------------------------
# Rendering


def render(table: dict[str, Entry], version: str) -> str:
    head = f"""\
# TF2 spellings of the TensorFlow 1 (tf.compat.v1) API, generated with TensorFlow {version}
# by `python -m rewrites.tf_api.generate`; read by rewrites/tf_api/__init__.py. Do not edit.
#
# One line per path below the TensorFlow root, sorted: PATH MARK [TF2PATH]
#   P =        same: tf.P in TF2 is the very same object as tf.compat.v1.P
#   P > Q      same, moved: tf.Q in TF2 is that object; tf.P does not exist in TF2
#   P ! Q      same at tf.Q, but tf.P exists in TF2 and is another object
#   P ~        same computation: tf.P in TF2 is TensorFlow's WeakTensor wrapper of tf.compat.v1.P,
#              which calls it unchanged unless numpy-style dtype promotion is switched on
#              (tf.experimental.numpy.experimental_enable_numpy_behavior)
#   P ~ Q      the same through tf.Q; tf.P does not exist in TF2
#   P !        differs: tf.P exists in TF2 and is another object: keep tf.compat.v1.P
#   P -        v1 only: nothing in TF2 is that object and tf.P does not exist: keep tf.compat.v1.P
#   P +        TF2 only: tf.P exists in TF2, tf.compat.v1.P does not
# A path not listed takes its answer from its longest listed prefix: below "=", ">", "~" and
# "! Q" lines the rest of the path is appended to the TF2 path (estimator.ModeKeys.TRAIN,
# io.gfile.GFile.read), below "!", "-" and "+" lines the compat.v1 spelling is kept
# (data.Dataset.from_tensor_slices), and a path without a listed prefix keeps it too.
# A module line says whether TF2 has that module (its members have their own answers).
# Lines that their prefix already implies are left out: every path the generator walked
# resolves exactly. keras (tf.compat.v1.keras) is not walked: it keeps its compat.v1 spelling.
"""
    lines = []
    for path in sorted(table):
        entry = table[path]
        lines.append(f"{path} {entry.kind}" + (f" {entry.tf2}" if entry.tf2 else ""))
    return head + "\n".join(lines) + "\n"


def build() -> tuple[str, dict[str, Entry], dict[str, Entry]]:
    """(text, full table, compressed table) for the installed TensorFlow."""
    import os

    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import warnings

    warnings.filterwarnings("ignore")
    import tensorflow as tf

    tf.get_logger().setLevel("ERROR")  # walking every name wakes every deprecation warning
    v1 = walk(tf.compat.v1, skip={"compat"})
    tf2 = walk(tf, skip={"compat"})
    full = classify(v1, tf2)
    kept = compress(full)
    return render(kept, tf.version.VERSION), full, kept


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m rewrites.tf_api.generate", description=__doc__.splitlines()[0])
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--check", action="store_true", help="exit 1 if the shipped table differs from a regenerated one")
    group.add_argument("--stdout", action="store_true", help="print the table instead of writing it")
    args = parser.parse_args(argv)
    text, full, kept = build()
    if args.stdout:
        sys.stdout.write(text)
        return 0
    if args.check:
        stale = not TABLE.exists() or TABLE.read_text(encoding="utf-8") != text
        print(f"{TABLE}: {'stale' if stale else 'up to date'}")
        return int(stale)
    TABLE.write_text(text, encoding="utf-8")
    kinds = (SAME, MOVED, WRAPPED, DIFFERS, V1ONLY, TF2ONLY)
    walked = {kind: sum(entry.kind == kind for entry in full.values()) for kind in kinds}
    lines = {kind: sum(entry.kind == kind for entry in kept.values()) for kind in kinds}
    print(f"{TABLE}: {len(kept)} lines {lines} for {len(full)} paths walked {walked}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
