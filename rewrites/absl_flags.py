"""TFM013: a flag the program defines that TF 2 defines before it, through absl's logging.

TFM013 absl-logging-flag

What it does: `tf.app.flags.DEFINE_*(name, ...)` (or `tf.flags.DEFINE_*`) of a name absl's logging defines
(`log_dir`, `logtostderr`, `alsologtostderr`, `verbosity` / `v`, `stderrthreshold`, `showprefixforinfo`,
`logger_levels`) gets `allow_override=True`: the program's flag replaces absl's, as the program's own was the only
one in TF 1.x.
Why: TF 2 imports absl's logging, which defines these flags, when `tensorflow` is imported; the program's
definition of the same name then raises DuplicateFlagError when the program starts.
What may differ: nothing the program reads: its flag holds what its command line gives, as in TF 1.x. absl's
logging reads `log_dir` (and the others) too, only where a program writes absl's log files, which a TF1 program did
not.

Before:

    import tensorflow as tf

    tf.app.flags.DEFINE_string("log_dir", "/tmp/log", "where to save logs")

After:

    import tensorflow as tf

    tf.app.flags.DEFINE_string("log_dir", "/tmp/log", "where to save logs", allow_override=True)

Finding:

    3:1: TFM013 [exact] flag `log_dir` -> allow_override=True: TF 2 defines it before the program, through absl's
    logging (DuplicateFlagError otherwise)
"""

from __future__ import annotations

import libcst as cst

from rewrites.base import TFCodemod

RULE = "TFM013"
# The flags absl.logging defines when it is imported (absl-py 1.x and 2.x).
ABSL_LOGGING_FLAGS = ("log_dir", "logtostderr", "alsologtostderr", "verbosity", "v", "stderrthreshold",
                      "showprefixforinfo", "logger_levels")
MODULES = ("app.flags.", "flags.")  # TF's flags module, as tf.app.flags and tf.flags


class Rewrite(TFCodemod):
    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        name = self.tf_name(original.func)
        api = name.api if name is not None else ""
        if not any(api.startswith(f"{module}DEFINE_") for module in MODULES) or not original.args:
            return updated
        first = original.args[0]
        flag = first.value if first.keyword is None or first.keyword.value == "name" else None
        if not isinstance(flag, cst.SimpleString) or flag.evaluated_value not in ABSL_LOGGING_FLAGS \
                or any(arg.keyword is not None and arg.keyword.value == "allow_override" or arg.star
                       for arg in original.args) or not self.wants(RULE, original):
            return updated
        self.report(RULE, original, f"flag `{flag.evaluated_value}` -> allow_override=True: TF 2 defines it before "
                                    "the program, through absl's logging (DuplicateFlagError otherwise)")
        *args, last = updated.args
        added = cst.Arg(cst.Name("True"), keyword=cst.Name("allow_override"), comma=last.comma,
                        equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")))
        # After the last argument as the one before it leads into it (a trailing comma stays the last).
        between = args[-1].comma if args else cst.MaybeSentinel.DEFAULT
        if not isinstance(between, cst.Comma) or last.comma is cst.MaybeSentinel.DEFAULT:
            between = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
        return updated.with_changes(args=[*args, last.with_changes(comma=between), added])
