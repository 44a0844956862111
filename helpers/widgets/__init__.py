"""Interactive explorers (ipywidgets) built on the pure compute functions and ``helpers.plots``.

base.py        the shared pattern: controls + a persistent figure + a caption naming the state
ngrams.py      notebook 01: next-token bars and samples for a typed prompt
attention.py   notebooks 03-04: the last token's weights; the attention pattern of any layer / head
embeddings.py  notebook 02: model vs bigram next-token distribution; softmax / temperature playground
"""
