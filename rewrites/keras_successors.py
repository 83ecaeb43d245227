"""TF 1.x's own tf.keras (`tensorflow.python.keras`): the modules TF 2 dropped, and where their names live in Keras 2.

Shared by TFM010 (rewrites/keras_moved.py), which moves an import of a name listed here to the Keras 2 package
the migration targets, and TFM003 (rewrites/removed_apis.py), which names what stays. The static half imports
no Keras, so what Keras 2 has is written down here, checked against keras 2.15 and tf_keras 2.15 (the same names
in both), and a name is listed only where Keras 2's function is TF 1.x's: TF 1.x's
`tensorflow/python/keras/preprocessing/sequence.py` re-exported keras_preprocessing's functions, whose code was
compared with Keras 2's. `pad_sequences`, `make_sampling_table` and `skipgrams` are Keras 2's public
`preprocessing.sequence` names; `_remove_long_seq`, which TF 1.x exported under its private name, is in Keras
2's private module `src.preprocessing.sequence`, the same code. `preprocessing.text` is not listed: Keras 2's
`text_to_word_sequence` names its first parameter `input_text` (TF 1.x's `text`).

    successor("preprocessing.sequence", "pad_sequences") == "preprocessing.sequence.pad_sequences"
    successor("preprocessing.sequence", "_remove_long_seq") == "src.preprocessing.sequence._remove_long_seq"
    successor("preprocessing.sequence", "TimeseriesGenerator") is None
"""

from __future__ import annotations

from dataclasses import dataclass, field

ROOT = "tensorflow.python.keras"
# The modules of TF 1.x's Keras that TF 2's tensorflow.python.keras (a private remnant, its layers) does not have.
GONE = ("applications", "datasets", "estimator", "preprocessing", "premade", "wrappers")


@dataclass(frozen=True)
class Moved:
    """A module of TF 1.x's Keras: the names Keras 2 has as TF 1.x had them."""

    public: frozenset[str]                                   # in Keras 2's module of the same path
    private: dict[str, str] = field(default_factory=dict)    # name -> Keras 2's private module that holds it
    left: dict[str, str] = field(default_factory=dict)       # name -> why it does not move


# Below ROOT -> what of it moves.
MOVED = {
    "preprocessing.sequence": Moved(
        public=frozenset({"pad_sequences", "make_sampling_table", "skipgrams"}),
        private={"_remove_long_seq": "src.preprocessing.sequence"},
        left={"TimeseriesGenerator": "TF 1.x's is a subclass of its own Keras' Sequence; Keras 2's class was not "
                                     "compared with it"}),
}


def below_root(module: str) -> str | None:
    """"tensorflow.python.keras.preprocessing.sequence" -> "preprocessing.sequence"; other modules -> None."""
    return module[len(ROOT) + 1:] if module.startswith(ROOT + ".") else None


def successor(module: str, name: str) -> str | None:
    """Keras 2's path (below its package) of ``name`` of ``module`` (below ROOT), if it is TF 1.x's."""
    moved = MOVED.get(module)
    if moved is None:
        return None
    if name in moved.public:
        return f"{module}.{name}"
    return f"{moved.private[name]}.{name}" if name in moved.private else None


def why_not(module: str, name: str) -> str:
    """Why ``name`` of ``module`` (below ROOT, one of MOVED) does not move."""
    return MOVED[module].left.get(name, f"Keras 2's keras.{module} has no `{name}` of TF 1.x's")


def advice(module: str, names: list[str]) -> str:
    """What to do about an import of ``names`` from ``module`` (below ROOT) that stays."""
    general = (f"TF 1.x's tf.keras; TF 2's is the keras package: import the same names from keras.{module} (Keras 2; "
               f"tf_keras.{module} from TF 2.16)")
    if module not in MOVED or not names:
        return general
    staying = [name for name in names if successor(module, name) is None]
    if not staying:
        return (f"{general}; TFM010 moves them where each is used in the module, neither it nor `keras` is bound "
                "otherwise there, and (with --keras tf.keras) none is private")
    return "; ".join(f"`{name}`: {why_not(module, name)}" for name in staying) + f"; {general}"
