"""Helpers for the *Gentle Transformers* notebook series.

The series follows "A Gentle Introduction to Transformers" (the post) and uses its notation
everywhere. Column vectors, multiplied from the left:

=============  ===============================  ==========================================
name           shape                            meaning
=============  ===============================  ==========================================
t              (n_vocab, n) one-hot / (n,) ids  input tokens t_1 ... t_n
W_E            (d_model, n_vocab)               token embedding matrix
W_pos          (d_model, n_ctx)                 positional embeddings (first n columns used)
x0             (d_model, n)                     x^(0) = W_E t + W_pos, the residual stream
W_Q, W_K, W_V  (n_heads, d_head, d_model)       query / key / value weights per head
W_O            (n_heads, d_model, d_head)       output weights per head
q, k, v        (n_heads, d_head, n)             queries, keys, values
S, A           (n_heads, n, n)                  attention scores, attention pattern
r, o           (n_heads, d_head, n), (d_model, n)  attention result, attention output
W_1, b_1       (d_mlp, d_model), (d_mlp,)       MLP in
W_2, b_2       (d_model, d_mlp), (d_model,)     MLP out
z, m           (d_mlp, n), (d_model, n)         MLP hidden activation and output
gamma, beta    (d_model,)                       LayerNorm scale and shift
W_U            (n_vocab, d_model)               unembedding matrix
logits, p      (n_vocab, n)                     next-token logits and probabilities
=============  ===============================  ==========================================

A leading batch dimension is allowed everywhere and broadcasts. Dimension names never change:
``n_vocab, d_model, d_head, n_heads, d_mlp, n_ctx, n`` (sequence length).

Modules depend one way, floor by floor (pyproject.toml's [tool.importlinter] declares the floors; ``lint-imports``
checks them): corpus -> tokens / softmax -> model / ngrams / data / optim -> train / interp -> lessons / gpt2 ->
plots -> widgets -> checks. ``lessons`` holds what one notebook needs beyond the foundation; ``checks`` may use
anything and nothing imports it. Importing any module has no side effects.
"""

__version__ = "0.1.0"

from helpers.runtime import setup  # noqa: F401  (threads + seeds in one place)
