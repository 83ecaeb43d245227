from _unused import unused

globals().update(unused("IPython.display", "SVG", "display"))
