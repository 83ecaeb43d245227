from _unused import unused

globals().update(unused("matplotlib.pyplot", "plot", "figure", "show", "subplots"))
