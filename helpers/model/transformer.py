"""The GPT-style Transformer of the post, built from its components.

    x0     = W_E t + W_pos                                   (embedding)
    x_l+1  = x_l + sum_h o^h   ,   x_l+2 = x_l+1 + m         (each block: attention, then MLP)
    logits = W_U x_last ,  p = softmax(logits)               (unembedding)

With ``n_layers = 0`` this is the post's zero-layer Transformer, T(t) = softmax(W_U (W_E t_n + W_pos)).
Blocks live in ``helpers.model.block``. ``run_with_cache`` returns every activation under the post's
name (``helpers.model.names``): "x0", "x1", ... for the residual stream in order, "L0.q", "L0.A", ...
inside block 0, "logits" and "p" at the end; ``activations`` returns only the ones asked for, running a
big batch a few texts at a time.
"""

from __future__ import annotations

from collections.abc import ItemsView, Iterable, Iterator, KeysView, ValuesView
from contextlib import contextmanager

import torch
from torch import nn
from torch.nn import functional as F

from helpers.model import names
from helpers.model.config import Config
from helpers.model.embed import Embed, PosEmbed, Unembed
from helpers.softmax import softmax


TEXTS_PER_PASS = 16  # texts per forward pass where a big batch is run in pieces (memory; see activations)


class Cache(dict):
    """Activations by name. Residual-stream states are numbered in the order they are written:
    x0 (embedding), then x1, x2, ... after every residual add.

    "p" = softmax("logits") over the vocabulary is listed with the rest but computed the first time it
    is read, then kept: most readers want a few activations of a big batch, and p is as large as the
    logits (200 texts x 32 tokens x 2,000 words = 51 MB)."""

    def add_resid(self, x: torch.Tensor) -> None:
        self[names.resid(sum(1 for k in dict.__iter__(self) if names.is_resid(k)))] = x

    def _p_pending(self) -> bool:
        """True while "p" is due (the logits are in) but not computed yet."""
        return dict.__contains__(self, names.LOGITS) and not dict.__contains__(self, names.PROBS)

    def __setitem__(self, key: str, value) -> None:
        if key == names.LOGITS:
            dict.pop(self, names.PROBS, None)  # new logits: p is due again
        dict.__setitem__(self, key, value)

    def __missing__(self, key: str) -> torch.Tensor:
        if key == names.PROBS and self._p_pending():
            p = softmax(dict.__getitem__(self, names.LOGITS), dim=-2)  # (..., n_vocab, n)
            dict.__setitem__(self, names.PROBS, p)
            return p
        raise KeyError(key)

    def __contains__(self, key) -> bool:
        return dict.__contains__(self, key) or (key == names.PROBS and self._p_pending())

    def __iter__(self) -> Iterator[str]:
        yield from dict.__iter__(self)
        if self._p_pending():
            yield names.PROBS

    def __len__(self) -> int:
        return dict.__len__(self) + self._p_pending()

    def keys(self) -> KeysView:
        return KeysView(self)

    def items(self) -> ItemsView:
        return ItemsView(self)

    def values(self) -> ValuesView:
        return ValuesView(self)

    def get(self, key, default=None):
        return self[key] if key in self else default

    @property
    def resid_names(self) -> list[str]:
        return sorted((k for k in self if names.is_resid(k)), key=names.resid_index)


class Transformer(nn.Module):
    """tokens (batch, n) or (n,) -> logits (batch, n_vocab, n) or (n_vocab, n)."""

    def __init__(self, cfg: Config):
        super().__init__()
        self.cfg = cfg
        self.embed = Embed(cfg)
        self.pos_embed = PosEmbed(cfg) if cfg.positional else None
        if cfg.n_layers:
            from helpers.model.block import Block  # blocks are the attention / MLP notebooks' part

            self.blocks = nn.ModuleList(Block(cfg, layer) for layer in range(cfg.n_layers))
        else:
            self.blocks = nn.ModuleList()
        if cfg.layernorm:
            from helpers.model.layernorm import LayerNorm

            self.ln_final = LayerNorm(cfg.d_model)
        else:
            self.ln_final = None
        self.unembed = Unembed(cfg, tied_to=self.embed if cfg.tied_unembed else None)
        # None, or a function x -> x applied to the final residual stream before the unembedding (and its
        # LayerNorm): set and restored only by helpers.interp.paths, to take a head out of the direct path alone
        self.edit_final_input = None
        # None, or a function x0 -> x0 applied to the embedding's output: set and restored only by
        # helpers.interp.patching, to patch the stream x0 itself
        self.edit_x0 = None

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

    def forward(self, tokens, cache: Cache | None = None) -> torch.Tensor:
        tokens = self.check_tokens(tokens)
        single = tokens.dim() == 1
        if single:
            tokens = tokens[None]
        x = self.embed(tokens)  # (batch, d_model, n)
        if self.pos_embed is not None:
            x = x + self.pos_embed(tokens)
        if self.edit_x0 is not None:  # activation patching of x0
            x = self.edit_x0(x)
        if cache is not None:
            cache[names.TOKENS] = tokens
            cache.add_resid(x)  # x0
        for block in self.blocks:
            x = block(x, cache)
        if self.edit_final_input is not None:  # a path-specific ablation of the direct path to the logits
            x = self.edit_final_input(x)
        logits = self.read_out(x)  # (batch, n_vocab, n)
        if cache is not None:
            cache[names.LOGITS] = logits  # ("p" follows from them when read)
        if single:
            logits = logits[0]
            if cache is not None:
                for key, val in list(dict.items(cache)):
                    if isinstance(val, torch.Tensor) and val.shape[:1] == (1,):
                        cache[key] = val[0]
        return logits

    def read_out(self, x: torch.Tensor) -> torch.Tensor:
        """Logits from stream states: the final LayerNorm (if the model has one) and the unembedding, applied to
        x (..., d_model, n) column by column -> (..., n_vocab, n). What the model does to its last state, and what
        the logit lens (``helpers.interp.lens``) does to every earlier one."""
        return self.unembed(self.ln_final(x) if self.ln_final is not None else x)

    @torch.no_grad()
    def run_with_cache(self, tokens) -> tuple[torch.Tensor, Cache]:
        """Forward pass that also returns every activation by its name in the post."""
        cache = Cache()
        logits = self(tokens, cache)
        return logits, cache

    @torch.no_grad()
    def activations(self, tokens, keys: Iterable[str]) -> dict[str, torch.Tensor]:
        """Only the activations named in ``keys`` (see ``helpers.model.names``), each shaped as in
        ``run_with_cache``, for tokens (n,) or (batch, n); no gradients.

        A big batch runs ``TEXTS_PER_PASS`` texts at a time and the named activations are joined: the rest
        of the cache never exists for the whole batch at once (the logits of 200 texts alone are 51 MB).

            A = model.activations(windows, [names.key(0, "A")])[names.key(0, "A")]   # (batch, n_heads, n, n)
        """
        keys = list(keys)
        tokens = self.check_tokens(tokens)
        if tokens.dim() == 1:
            return self._named(self.run_with_cache(tokens)[1], keys)
        parts = [self._named(self.run_with_cache(tokens[a:a + TEXTS_PER_PASS])[1], keys)
                 for a in range(0, len(tokens), TEXTS_PER_PASS)]
        return {k: torch.cat([part[k] for part in parts]) for k in keys}

    @staticmethod
    def _named(cache: Cache, keys: list[str]) -> dict[str, torch.Tensor]:
        missing = [k for k in keys if k not in cache]
        if missing:
            raise KeyError(f"this model has no activation named {', '.join(map(repr, missing))}; "
                           f"its cache holds {', '.join(cache)}")
        return {k: cache[k] for k in keys}

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
