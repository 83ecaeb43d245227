from _unused import unused

globals().update(unused("annoy", "AnnoyIndex"))
