"""Interactive explorers (ipywidgets) built on the pure compute functions and ``helpers.plots``.

base.py        the shared pattern: controls + a persistent figure + a caption naming the state
ngrams.py      notebook 01: next-token bars and samples for a typed prompt
embeddings.py  notebook 02: model vs bigram next-token distribution; softmax / temperature playground
"""
