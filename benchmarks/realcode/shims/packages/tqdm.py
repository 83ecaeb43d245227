from _unused import unused

globals().update(unused("tqdm", "tqdm", "tqdm_notebook"))
