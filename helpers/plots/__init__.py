"""Matplotlib figures for the notebooks; no widgets here (``helpers.widgets`` builds on these).

Every function draws onto an ``Axes`` it is given (or a new one) and returns it, so the same
drawing serves a static notebook cell and a widget that redraws one persistent figure.

basic.py      bars of top tokens, loss curves, a labelled heatmap
attention.py  weights over the context, score variance vs d_head, patterns (matplotlib and HTML)
ngrams.py     notebook 01: n-gram table growth and unseen rate
"""

from helpers.plots.basic import bars, heatmap, loss_curves, new_axes  # noqa: F401
