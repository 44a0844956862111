"""The GPT-style Transformer of the post, built from its components.

    x0     = W_E t + W_pos                                   (embedding)
    x_l+1  = x_l + sum_h o^h   ,   x_l+2 = x_l+1 + m         (each block: attention, then MLP)
    logits = W_U x_last ,  p = softmax(logits)               (unembedding)

With ``n_layers = 0`` this is the post's zero-layer Transformer, T(t) = softmax(W_U (W_E t_n + W_pos)).
Blocks live in ``helpers.model.block``. Every activation passes a named hook point (``helpers.model.hooks``):
``run_with_cache`` returns them all under the post's names (``helpers.model.names``): "x0", "x1", ... for the
residual stream in order, "L0.q", "L0.A", ... inside block 0, "logits" and "p" at the end; ``activations`` returns
only the ones asked for, running a big batch a few texts at a time.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager

import torch
from torch import nn
from torch.nn import functional as F

from helpers.model import names
from helpers.model.block import Block
from helpers.model.config import Config
from helpers.model.embed import Embed, PosEmbed, TiedUnembed, Unembed
from helpers.model.hooks import Cache, HookPoint, cached_names, caching, points_in_order
from helpers.model.layernorm import LayerNorm
from helpers.softmax import softmax

__all__ = ["Cache", "Transformer", "mask_switched"]

TEXTS_PER_PASS = 16  # texts per forward pass where a big batch is run in pieces (memory; see activations)


class Transformer(nn.Module):
    """tokens (batch, n) or (n,) -> logits (batch, n_vocab, n) or (n_vocab, n)."""

    def __init__(self, cfg: Config):
        super().__init__()
        self.cfg = cfg
        # (hook points registered in the order a forward pass reaches them: hook_points lists them that way)
        self.hook_t = HookPoint(names.TOKENS)
        self.embed = Embed(cfg)
        self.pos_embed = PosEmbed(cfg) if cfg.positional else None
        self.hook_x0 = HookPoint(names.resid(0))
        self.blocks = nn.ModuleList(Block(cfg, layer) for layer in range(cfg.n_layers))
        self.hook_x_final = HookPoint(names.FINAL, cached=False)
        self.ln_final = LayerNorm(cfg.d_model) if cfg.layernorm else None
        self.unembed = TiedUnembed(self.embed) if cfg.tied_unembed else Unembed(cfg)
        self.hook_logits = HookPoint(names.LOGITS)
        self.hook_p = HookPoint(names.PROBS)  # softmax(logits): computed only when something is attached
        self.hook_points = points_in_order(self)  # every activation by name: "t", "x0", "L0.q", ..., "logits", "p"

    def check_tokens(self, tokens) -> torch.Tensor:
        """Validate input token ids and say clearly what is wrong, in the post's terms."""
        tokens = torch.as_tensor(tokens)
        if tokens.is_floating_point() or tokens.dtype == torch.bool:
            raise TypeError(f"tokens must be integer token ids (t_1 ... t_n), got dtype {tokens.dtype}")
        if tokens.dim() not in (1, 2):
            raise ValueError(f"tokens must have shape (n,) or (batch, n), got {tuple(tokens.shape)}")
        n = tokens.shape[-1]
        if n == 0:
            raise ValueError("the context is empty (n = 0): give the model at least one token")
        if n > self.cfg.n_ctx:
            raise ValueError(
                f"the context has n = {n} tokens but this model's n_ctx is {self.cfg.n_ctx} "
                f"(W_pos has {self.cfg.n_ctx} columns): keep the last {self.cfg.n_ctx} tokens"
            )
        lo, hi = int(tokens.min()), int(tokens.max())
        if lo < 0 or hi >= self.cfg.n_vocab:
            bad = lo if lo < 0 else hi
            raise ValueError(f"token id {bad} is outside the vocabulary (0 ... {self.cfg.n_vocab - 1})")
        return tokens.long()

    def forward(self, tokens, read_out: bool = True) -> torch.Tensor:
        """logits (n_vocab, n) for tokens (n,), or (batch, n_vocab, n) for (batch, n). With read_out=False the pass
        stops at the final stream x_final, (d_model, n) or (batch, d_model, n): what the logit lens needs, without the
        n_vocab-tall logits of every position (notebook 08 reads 200 windows at once)."""
        tokens = self.check_tokens(tokens)
        single = tokens.dim() == 1
        t = self.hook_t(tokens[None] if single else tokens)  # (batch, n)
        x = self.embed(t) if self.pos_embed is None else self.embed(t) + self.pos_embed(t)  # (batch, d_model, n)
        out = self.run_from(0, self.hook_x0(x), read_out=read_out)  # (batch, n_vocab, n), or (batch, d_model, n)
        return out[0] if single else out

    def run_from(self, layer: int, x: torch.Tensor, read_out: bool = True) -> torch.Tensor:
        """The rest of a forward pass from the stream x (batch, d_model, n) entering block ``layer`` (the state named
        ``stream_into(layer)``): blocks layer, layer + 1, ..., then the unembedding -> logits (batch, n_vocab, n)
        (or, with read_out=False, the final stream (batch, d_model, n)). ``forward`` is run_from(0, x0). An edit that
        leaves the layers before ``layer`` as they were can start here from a cached state instead of from the tokens
        (``helpers.interp.patching``, the heads explorer)."""
        self._check_layer(layer)
        if not (isinstance(x, torch.Tensor) and x.dim() == 3 and x.shape[1] == self.cfg.d_model):
            got = tuple(x.shape) if isinstance(x, torch.Tensor) else type(x).__name__
            raise ValueError(f"run_from needs the stream entering block {layer} as (batch, d_model = "
                             f"{self.cfg.d_model}, n), got {got}")
        for block in self.blocks[layer:]:
            x = block(x)
        if not read_out:
            return self.hook_x_final(x)
        logits = self.hook_logits(self.read_out(self.hook_x_final(x)))  # (batch, n_vocab, n)
        if self.hook_p.fns:  # someone reads p (the cache): p = softmax(logits) over the vocabulary
            self.hook_p(softmax(logits, dim=-2))
        return logits

    def stream_into(self, layer: int) -> str:
        """The name of the residual-stream state block ``layer`` reads: "x0" for block 0, then one more for every
        attention layer and MLP before it ("x2" for block 1 of a model with MLPs, "x1" without)."""
        self._check_layer(layer)
        return names.resid(sum(1 + (block.mlp is not None) for block in self.blocks[:layer]))

    def _check_layer(self, layer) -> None:
        n = self.cfg.n_layers
        if isinstance(layer, bool) or not isinstance(layer, int) or not 0 <= layer <= n:
            raise ValueError(f"layer must be a whole number from 0 to n_layers = {n} (n_layers: the unembedding "
                             f"alone), got {layer!r}")

    def read_out(self, x: torch.Tensor) -> torch.Tensor:
        """Logits from stream states: the final LayerNorm (if the model has one) and the unembedding, applied to
        x (..., d_model, n) column by column -> (..., n_vocab, n). What the model does to its last state, and what
        the logit lens (``helpers.interp.lens``) does to every earlier one."""
        return self.unembed(self.ln_final(x) if self.ln_final is not None else x)

    @torch.no_grad()
    def run_with_cache(self, tokens) -> tuple[torch.Tensor, Cache]:
        """Forward pass that also returns every activation by its name in the post (one text (n,): no batch axis)."""
        logits, cache = self._run(self.check_tokens(tokens), None)
        return logits, cache

    def _run(self, tokens: torch.Tensor, keys: Iterable[str] | None) -> tuple[torch.Tensor, Cache]:
        with caching(self, Cache(), keys) as cache:
            logits = self(tokens)
        if tokens.dim() == 1:  # one text: the cache without its batch axis, like the logits
            for key, val in list(dict.items(cache)):
                cache[key] = val[0]
        return logits, cache

    @torch.no_grad()
    def activations(self, tokens, keys: Iterable[str]) -> dict[str, torch.Tensor]:
        """Only the activations named in ``keys`` (see ``helpers.model.names``), each shaped as in
        ``run_with_cache``, for tokens (n,) or (batch, n); no gradients.

        Only those are kept, and a big batch runs ``TEXTS_PER_PASS`` texts at a time, the pieces joined: the
        rest of the cache never exists (the logits of 200 texts alone are 51 MB).

            A = model.activations(windows, [names.key(0, "A")])[names.key(0, "A")]   # (batch, n_heads, n, n)
        """
        keys = list(keys)
        missing = [k for k in keys if k not in cached_names(self)]
        if missing:
            raise KeyError(f"this model has no activation named {', '.join(map(repr, missing))}; "
                           f"its cache holds {', '.join(cached_names(self))}")
        tokens = self.check_tokens(tokens)
        if tokens.dim() == 1:
            cache = self._run(tokens, keys)[1]
            return {k: cache[k] for k in keys}
        parts = [self._run(tokens[a:a + TEXTS_PER_PASS], keys)[1] for a in range(0, len(tokens), TEXTS_PER_PASS)]
        return {k: torch.cat([part[k] for part in parts]) for k in keys}

    def resid_names(self) -> list[str]:
        """The residual stream's states in order: ["x0", "x1", ...], one after the embedding and every add."""
        return [name for name in self.hook_points if names.is_resid(name)]

    def loss(self, tokens: torch.Tensor) -> torch.Tensor:
        """Mean next-token cross-entropy (nats) of a batch of windows, shape (batch, n + 1)."""
        logits = self(tokens[..., :-1])  # (batch, n_vocab, n)
        return F.cross_entropy(logits, tokens[..., 1:])

    @torch.no_grad()
    def next_token_probs(self, tokens) -> torch.Tensor:
        """p_{n+1}: the distribution of the token after the last one, shape (n_vocab,)."""
        return softmax(self(tokens)[..., -1], dim=-1)

    @torch.no_grad()
    def generate(self, prompt_ids, steps: int, temperature: float = 1.0, seed: int = 0) -> torch.Tensor:
        """Continue a prompt token by token (keeping the last n_ctx tokens as context)."""
        if not temperature > 0:
            raise ValueError(f"temperature must be positive, got {temperature}")
        g = torch.Generator().manual_seed(seed)
        out = self.check_tokens(prompt_ids).tolist()
        for _ in range(steps):
            logits = self(torch.tensor(out[-self.cfg.n_ctx:]))[:, -1]
            out.append(int(torch.multinomial(softmax(logits / temperature), 1, generator=g)))
        return torch.tensor(out)

    def n_params(self) -> int:
        return sum(p.numel() for p in self.parameters())


@contextmanager
def mask_switched(model: Transformer, on: bool) -> Iterator[Transformer]:
    """Inside the ``with`` block every attention layer of ``model`` has the causal mask ``on`` (True)
    or off (False); afterwards each layer gets back the setting it had, even if the block raised.
    A model starts with the setting it was trained with (``Config.masked``, kept in its checkpoint).

        with mask_switched(cheat, on=True):
            logits = cheat(ids)        # no query sees a later token
    """
    if not isinstance(on, bool):
        raise TypeError(f"on must be True (causal mask on) or False (off), got {on!r}")
    old = [b.attn.masked for b in model.blocks]
    try:
        for b in model.blocks:
            b.attn.masked = on
        yield model
    finally:
        for b, m in zip(model.blocks, old):
            b.attn.masked = m
