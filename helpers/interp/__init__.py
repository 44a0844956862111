"""Reading a trained model: compute only, below ``helpers.plots`` and ``helpers.widgets``.

A claim about what a head or a neuron does is shown by an intervention (ablation, attribution)
beside it, never by an attention pattern alone. The tools, in the post's notation and in that of
"A Mathematical Framework for Transformer Circuits" (Elhage et al., 2021), which the post follows:

validate.py     clear messages for a layer, head, neuron, position or token that does not exist
ablation.py     run a model with heads or MLP neurons zeroed or replaced by their mean (``ablated``)
paths.py        take one head's output out of one path only: a later layer's q, k or v, an MLP, the logits
patching.py     activation patching: copy a head's output, neurons or the stream from a clean run, measure what returns
lens.py         the logit lens: the next-token distribution read from every residual-stream state
attribution.py  direct logit attribution: each head's and neuron's share of one logit (or difference)
loss.py         per-position next-token loss of a token sequence
scores.py       previous-token, duplicate-token and induction scores of every head
sequences.py    repeated random token sequences, the standard test for induction heads
circuits.py     a head's QK and OV circuits, their token and position tables, composition scores
neurons.py      an MLP's hidden activations z and how often each neuron fires

Each module needs only ``helpers.model`` (and ``helpers.lessons.facts`` for a task's prompts).
"""
