"""Notebook 10, section 10: the induction circuit of notebook 09, written by hand.

*A Mathematical Framework for Transformer Circuits* (Elhage et al. 2021) describes a previous-token head
and an induction head by their circuits, W_QK = W_Q^T W_K (who attends to whom) and W_OV = W_O W_V (what
attending writes). Here the learner writes those four matrices and this module turns them into a working
two-layer, attention-only Transformer of the series (one head per layer, the post's column vectors).

Why a wider residual stream than notebook 09's model. There, d_model = 64 holds 64 tokens, 32 positions
and whatever layer 0 writes, all in learned directions that share the same 64 dimensions; one head's
W_OV has rank <= d_head = 32, too few to copy 64 tokens exactly. To make every entry of a hand-written
matrix mean one thing, this model gives each kind of information its own block of one-hot directions:

    rows  TOK   0 ..  63   token identity        W_E t       puts token t at TOK[t]
          POS  64 ..  95   position              W_pos[:, i] puts position i at POS[i]
          PREV 96 .. 159   the token before      empty until layer 0's head writes there
          OUT 160 .. 223   the prediction        W_U reads these rows only: logit of t = x[OUT[t]]

so d_model = 224, and d_head = 64: just enough for a circuit that moves all 64 tokens (rank 64).

    previous-token head (layer 0):  W_QK0[POS[i], POS[i-1]] large   query at position i looks at key i - 1
                                    W_OV0[PREV[t], TOK[t]] = 1      and writes that key's token into PREV
    induction head (layer 1):       W_QK1[TOK[t], PREV[t]] large    query token t looks for "my predecessor was t"
                                    W_OV1[OUT[t], TOK[t]] large     and writes the token found there into OUT

``from_circuits`` factors each circuit into the head's weights (W_Q, W_K from W_QK; W_V, W_O from W_OV, by
a singular value decomposition): the model then runs the post's attention, q = W_Q x, S = q^T k / sqrt(d_head),
like every other model of the series.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from helpers.model.config import Config
from helpers.model.transformer import Transformer


@dataclass(frozen=True)
class Layout:
    """Where each kind of information lives in the hand-built model's residual stream (module docstring)."""

    n_vocab: int = 64
    n_ctx: int = 32

    @property
    def TOK(self) -> slice:
        return slice(0, self.n_vocab)

    @property
    def POS(self) -> slice:
        return slice(self.n_vocab, self.n_vocab + self.n_ctx)

    @property
    def PREV(self) -> slice:
        start = self.n_vocab + self.n_ctx
        return slice(start, start + self.n_vocab)

    @property
    def OUT(self) -> slice:
        start = 2 * self.n_vocab + self.n_ctx
        return slice(start, start + self.n_vocab)

    @property
    def d_model(self) -> int:
        return 3 * self.n_vocab + self.n_ctx

    @property
    def d_head(self) -> int:
        return max(self.n_vocab, self.n_ctx)  # the largest rank a circuit needs: one per token (or position)

    def _index(self, block: slice, i: int, what: str, size: int) -> int:
        if not isinstance(i, int) or isinstance(i, bool):
            i = int(i)  # a 0-d tensor or numpy integer from a loop over torch.arange
        if not 0 <= i < size:
            raise IndexError(f"{what} {i} does not exist: there are {size} ({what}s 0 ... {size - 1})")
        return block.start + i

    def tok(self, t: int) -> int:
        """The row of token t's identity."""
        return self._index(self.TOK, t, "token", self.n_vocab)

    def pos(self, i: int) -> int:
        """The row of position i (counted from 0, like the model's columns)."""
        return self._index(self.POS, i, "position", self.n_ctx)

    def prev(self, t: int) -> int:
        """The row that says "the token before me was t"."""
        return self._index(self.PREV, t, "token", self.n_vocab)

    def out(self, t: int) -> int:
        """The row W_U reads for token t's logit."""
        return self._index(self.OUT, t, "token", self.n_vocab)

    def blocks(self) -> dict[str, slice]:
        return {"TOK": self.TOK, "POS": self.POS, "PREV": self.PREV, "OUT": self.OUT}

    def config(self) -> Config:
        """Two attention-only layers of one head each, no LayerNorm: notebook 09's architecture, wider."""
        return Config(n_vocab=self.n_vocab, d_model=self.d_model, n_ctx=self.n_ctx, n_layers=2, n_heads=1,
                      d_head=self.d_head)


CIRCUIT_NAMES = ("W_QK0", "W_OV0", "W_QK1", "W_OV1")


def check_circuit(M, name: str, layout: Layout) -> torch.Tensor:
    """One circuit as a (d_model, d_model) float tensor of rank <= d_head, or a clear error."""
    d = layout.d_model
    if not isinstance(M, torch.Tensor):
        raise TypeError(f"{name} must be a torch tensor of shape (d_model, d_model) = ({d}, {d}), "
                        f"got {type(M).__name__}")
    if tuple(M.shape) != (d, d):
        raise ValueError(f"{name} has shape {tuple(M.shape)}; a circuit maps the residual stream to itself: "
                         f"(d_model, d_model) = ({d}, {d})")
    M = M.detach().to(torch.float64)
    if not torch.isfinite(M).all():
        raise ValueError(f"{name} contains inf or NaN")
    rank = int(torch.linalg.matrix_rank(M))
    if rank > layout.d_head:
        raise ValueError(f"{name} has rank {rank}, more than d_head = {layout.d_head}: a head's circuit passes "
                         f"through its d_head-dimensional q and k (or v), so its rank is at most d_head. "
                         "Write only the entries the head needs.")
    return M


def factor(M: torch.Tensor, d_head: int) -> tuple[torch.Tensor, torch.Tensor]:
    """M (d_model, d_model) of rank <= d_head -> (F, G), F (d_model, d_head), G (d_head, d_model), F @ G = M.

    By the singular value decomposition M = U diag(s) V^T: F = U sqrt(s), G = sqrt(s) V^T on the first
    d_head singular values (the rest are zero when the rank allows). W_QK = W_Q^T W_K gives W_Q = F^T,
    W_K = G; W_OV = W_O W_V gives W_O = F, W_V = G."""
    U, s, Vh = torch.linalg.svd(M.to(torch.float64))
    root = s[:d_head].sqrt()
    return U[:, :d_head] * root, root[:, None] * Vh[:d_head]


def embedding(layout: Layout) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """W_E (d_model, n_vocab), W_pos (d_model, n_ctx), W_U (n_vocab, d_model): the one-hot layout."""
    d, V, n = layout.d_model, layout.n_vocab, layout.n_ctx
    W_E, W_pos, W_U = torch.zeros(d, V), torch.zeros(d, n), torch.zeros(V, d)
    W_E[layout.TOK] = torch.eye(V)
    W_pos[layout.POS] = torch.eye(n)
    W_U[:, layout.OUT] = torch.eye(V)
    return W_E, W_pos, W_U


def from_circuits(W_QK0, W_OV0, W_QK1, W_OV1, layout: Layout | None = None) -> Transformer:
    """A two-layer, one-head-per-layer, attention-only Transformer whose heads have these circuits
    (each (d_model, d_model), rank <= d_head) and whose W_E, W_pos, W_U are ``embedding(layout)``."""
    layout = layout or Layout()
    circuits = [check_circuit(M, name, layout) for M, name in zip((W_QK0, W_OV0, W_QK1, W_OV1), CIRCUIT_NAMES)]
    model = Transformer(layout.config())
    W_E, W_pos, W_U = embedding(layout)
    with torch.no_grad():
        model.embed.W_E.copy_(W_E)
        model.pos_embed.W_pos.copy_(W_pos)
        model.unembed.W_U.copy_(W_U)
        for layer in range(2):
            attn = model.blocks[layer].attn
            F, G = factor(circuits[2 * layer], layout.d_head)  # W_QK = W_Q^T W_K
            attn.W_Q.copy_(F.T[None])
            attn.W_K.copy_(G[None])
            F, G = factor(circuits[2 * layer + 1], layout.d_head)  # W_OV = W_O W_V
            attn.W_O.copy_(F[None])
            attn.W_V.copy_(G[None])
    model.eval()
    return model


def main_block(M: torch.Tensor, layout: Layout) -> tuple[str, str, float]:
    """The (row block, column block) of M holding most of its squared entries, and that share:
    what a circuit writes (rows) and reads (columns), in the layout's names."""
    M = M.detach().to(torch.float64)
    total = float((M ** 2).sum())
    if total == 0:
        return "", "", 0.0
    blocks = layout.blocks()
    share = {(r, c): float((M[rs, cs] ** 2).sum()) / total for r, rs in blocks.items() for c, cs in blocks.items()}
    (r, c), best = max(share.items(), key=lambda kv: kv[1])
    return r, c, best


def induction_circuits(layout: Layout | None = None, score: float = 80.0, copy: float = 10.0):
    """The four circuits written out (notebook 10's Exercise 10.4 asks the learner for them first):
    (W_QK0, W_OV0, W_QK1, W_OV1), each (d_model, d_model).

    score: the entry of a wanted (query, key) pair; the model divides it by sqrt(d_head) = 8, so 80 puts
    the wanted key 10 above the others, e^10 = 22,000 times their weight. copy: the logit the copied token
    gets (times the attention weight)."""
    L = layout or Layout()
    d = L.d_model
    W_QK0, W_OV0, W_QK1, W_OV1 = (torch.zeros(d, d) for _ in range(4))
    for i in range(1, L.n_ctx):
        W_QK0[L.pos(i), L.pos(i - 1)] = score  # query at position i looks at the key at position i - 1
    for t in range(L.n_vocab):
        W_OV0[L.prev(t), L.tok(t)] = 1.0  # ... and writes "the token before me was t"
        W_QK1[L.tok(t), L.prev(t)] = score  # query token t looks for a key whose predecessor was t
        W_OV1[L.out(t), L.tok(t)] = copy  # ... and raises the logit of the token it finds there
    return W_QK0, W_OV0, W_QK1, W_OV1
