"""Input and output: files read safely, processes run and contained, encodings, text made
safe for a terminal, git. The lowest layer: it imports no other part of omk."""
