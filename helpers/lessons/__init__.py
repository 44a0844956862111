"""The lessons' own modules: what one notebook needs beyond the foundation (the model, its training, its tools to
look inside), kept apart from it. Each module's docstring names its notebook.

lm.py              01, the post's opening: a model's probability of every continuation
glove.py           02: real word vectors for "king - man + woman ≈ queen"
cost.py            05 and 10: what heads cost, counted and timed
facts.py           06: a made-up facts task an MLP stores
ladder.py          08: the ladder of trained Transformers, rung by rung
induction.py       09: induction heads trained from scratch on random characters
text_induction.py  09, section 10: induction heads grown from real text
by_hand.py         10: the induction circuit written by hand
superposition.py   12: a toy model of superposition, a sparse autoencoder, and interventions with it on 06's facts model

The foundation never imports a lesson (the import contract in pyproject.toml); a lesson may use the foundation and,
where a notebook builds on an earlier one, another lesson.
"""
