"""A head's two circuits, and how heads of different layers compose — "A Mathematical Framework for
Transformer Circuits" (Elhage et al. 2021), in the post's column-vector notation.

With x_i the residual stream at position i (d_model,), one head's score and output are

    S_ij = q_i . k_j / sqrt(d_head) = x_i^T  W_Q^T W_K  x_j / sqrt(d_head)     -> W_QK = W_Q^T W_K   (d_model, d_model)
    o_i  = sum_j A_ij W_O W_V x_j                                               -> W_OV = W_O W_V     (d_model, d_model)

QK circuit: which query attends to which key; OV circuit: what moving a token writes. Both have
rank <= d_head. Read through the embedding and the unembedding they become tables over tokens and
positions (LayerNorm, where present, is left out: these tables are of the raw weights):

    token_qk_table       W_E^T W_QK W_E      (n_vocab, n_vocab)  [a, b]: score of a query token a on a key token b
    token_ov_table       W_U W_OV W_E        (n_vocab, n_vocab)  [c, b]: logit of token c written by attending to b
    positional_qk_table  W_pos^T W_QK W_pos  (n_ctx, n_ctx)      [i, j]: score of query position i on key position j

Scores in these tables are x^T W_QK x, *not* divided by sqrt(d_head) (the model divides S by it). GPT-2's attention
biases are left out too, as the circuits paper does: b_K never changes a pattern (it adds the same q_i . b_K to every
score of row i), b_V and b_O add a constant vector to the stream, and b_Q adds b_Q^T W_K x_j, a preference for some
keys whatever the query.

Composition. A head h1 in an earlier layer writes W_OV^{h1} x into the stream; a head h2 in a later
layer can read that with its query (Q-composition), its key (K-composition) or its value
(V-composition). The paper's score is how much of the reading matrix M meets what h1 writes:

    score = ||M W_OV^{h1}||_F / (||M||_F ||W_OV^{h1}||_F)      (in [0, 1]; ||.||_F the Frobenius norm)
    Q-composition  M = W_QK^{h2 T}    (the query side of S reads h1's output: (W_OV^{h1} x_i)^T W_QK x_j)
    K-composition  M = W_QK^{h2}      (the key side reads it: x_i^T W_QK (W_OV^{h1} x_j))
    V-composition  M = W_OV^{h2}      (the value reads it: W_OV^{h2} W_OV^{h1} x_j)

Unrelated heads do not score 0: two random low-rank circuits score about 1 / sqrt(d_model) (measured:
0.12 for d_model = 64, 0.06 for 256, whatever d_head), and the paper compares scores with such a
baseline. An induction head reads a previous-token head by K-composition (notebooks 09, 10).
"""

from __future__ import annotations

import torch

from helpers.interp.validate import check_head, check_layer
from helpers.model.transformer import Transformer


def _weights(model: Transformer, layer: int, head: int):
    layer, head = check_head(model, layer, head)
    attn = model.blocks[layer].attn
    return (attn.W_Q[head].detach(), attn.W_K[head].detach(), attn.W_V[head].detach(), attn.W_O[head].detach())


def qk_circuit(model: Transformer, layer: int, head: int) -> torch.Tensor:
    """W_QK = W_Q^T W_K (d_model, d_model) of one head: S_ij = x_i^T W_QK x_j / sqrt(d_head)."""
    W_Q, W_K, _, _ = _weights(model, layer, head)
    return W_Q.T @ W_K


def ov_circuit(model: Transformer, layer: int, head: int) -> torch.Tensor:
    """W_OV = W_O W_V (d_model, d_model) of one head: attending to x_j writes W_OV x_j (times its weight)."""
    _, _, W_V, W_O = _weights(model, layer, head)
    return W_O @ W_V


def token_qk_table(model: Transformer, layer: int, head: int) -> torch.Tensor:
    """W_E^T W_QK W_E (n_vocab, n_vocab): [a, b] = score of query token a on key token b (embeddings only)."""
    W_E = model.embed.W_E.detach()
    return W_E.T @ qk_circuit(model, layer, head) @ W_E


def token_ov_table(model: Transformer, layer: int, head: int) -> torch.Tensor:
    """W_U W_OV W_E (n_vocab, n_vocab): column b = the logits written when the head attends to token b."""
    return model.unembed.W_U.detach() @ ov_circuit(model, layer, head) @ model.embed.W_E.detach()


def positional_qk_table(model: Transformer, layer: int, head: int) -> torch.Tensor:
    """W_pos^T W_QK W_pos (n_ctx, n_ctx): [i, j] = score of query position i on key position j (positions only).
    A previous-token head shows a band just below the diagonal."""
    W_QK = qk_circuit(model, layer, head)
    if model.pos_embed is None:
        raise ValueError("this model has no positional embeddings (positional = False): no W_pos to read")
    W_pos = model.pos_embed.W_pos.detach()
    return W_pos.T @ W_QK @ W_pos


def composition_score(M: torch.Tensor, W_OV: torch.Tensor) -> torch.Tensor:
    """||M W_OV||_F / (||M||_F ||W_OV||_F) for two (d_model, d_model) matrices: M reads what W_OV writes."""
    if M.dim() != 2 or W_OV.dim() != 2 or M.shape[-1] != W_OV.shape[0]:
        raise ValueError(f"M (d_model, d_model) must be able to read W_OV's output; got shapes "
                         f"{tuple(M.shape)} and {tuple(W_OV.shape)}")
    denominator = torch.linalg.matrix_norm(M) * torch.linalg.matrix_norm(W_OV)
    if float(denominator) == 0:
        raise ValueError("a circuit is all zeros: its composition score is undefined")
    return torch.linalg.matrix_norm(M @ W_OV) / denominator


KINDS = ("Q", "K", "V")


def reading_matrix(model: Transformer, layer: int, head: int, kind: str) -> torch.Tensor:
    """The matrix M with which head (layer, head) reads an earlier head's output: W_QK^T (Q), W_QK (K), W_OV (V)."""
    if kind not in KINDS:
        raise ValueError(f"kind must be 'Q', 'K' or 'V' (which of the later head's inputs reads), got {kind!r}")
    if kind == "V":
        return ov_circuit(model, layer, head)
    W_QK = qk_circuit(model, layer, head)
    return W_QK.T if kind == "Q" else W_QK


def composition_scores(model: Transformer, kind: str, layer1: int = 0, layer2: int = 1) -> torch.Tensor:
    """(n_heads, n_heads): entry [h1, h2] = the ``kind``-composition score ("Q", "K" or "V") of head h2
    in ``layer2`` reading head h1 in ``layer1`` (layer1 < layer2: a head reads only earlier layers)."""
    layer1, layer2 = check_layer(model, layer1), check_layer(model, layer2)
    if not layer1 < layer2:
        raise ValueError(f"a head can only read heads of earlier layers: layer1 = {layer1} must come before "
                         f"layer2 = {layer2}")
    H = model.cfg.n_heads
    M = [reading_matrix(model, layer2, h2, kind) for h2 in range(H)]
    return torch.stack([torch.stack([composition_score(M[h2], ov_circuit(model, layer1, h1)) for h2 in range(H)])
                        for h1 in range(H)])
