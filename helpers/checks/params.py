"""Notebook 08: count the parameters of a model from its Config."""

from __future__ import annotations

from typing import Callable

from helpers.checks.base import ExerciseError, call, exercise, passed
from helpers.model.config import Config
from helpers.model.params import count_config


@exercise(answered_by=("helpers.model.params.count_config", "helpers.model.params.count_params"))
def check_n_params(fn: Callable) -> bool:
    """fn(cfg: Config) -> int, the number of parameters of Transformer(cfg) (LayerNorm on, MLP on)."""
    cfg = Config(n_vocab=101, d_model=12, n_ctx=17, n_layers=2, n_heads=3, d_head=5, d_mlp=40, layernorm=True)
    what = "your n_params(cfg)"
    got = call(fn, cfg, what=what)
    try:
        got = int(got)
    except (TypeError, ValueError):
        raise ExerciseError(f"{what} should return a whole number, got {type(got).__name__}") from None
    want = count_config(cfg)
    if got == want:
        return passed(f"n_params is right: {want:,} for the test config "
                      "(d_model 12, 2 layers, 3 heads of 5, d_mlp 40).")
    D, H, d, L, V, C, M = cfg.d_model, cfg.n_heads, cfg.d_head, cfg.n_layers, cfg.n_vocab, cfg.n_ctx, cfg.d_mlp
    per_layer = 4 * H * d * D + 2 * D * M + M + D + 4 * D
    diff = want - got
    hints = {
        L * (H - 1) * 4 * d * D: "Each of the n_heads heads has its own W_Q, W_K, W_V, W_O: multiply by n_heads.",
        L * (M + D): "The MLP biases b_1 (d_mlp) and b_2 (d_model) are missing.",
        2 * D: "One LayerNorm (2 d_model: gamma and beta) is missing — the final one before W_U?",
        L * 4 * D: "The LayerNorms inside the layers (two per layer, 2 d_model each) are missing.",
        L * 4 * D + 2 * D: "All the LayerNorms are missing: two per layer plus the final one, 2 d_model each.",
        V * D: "One n_vocab x d_model matrix is missing: count both W_E and W_U (this model does not tie them).",
        C * D: "W_pos (d_model x n_ctx) is missing.",
        (L - 1) * per_layer: "Multiply the per-layer parameters by n_layers.",
        L * 2 * H * d * D: "Count all four head matrices W_Q, W_K, W_V and W_O (two seem missing).",
        L * H * d * D: "One of W_Q, W_K, W_V, W_O seems missing (each has d_head x d_model entries per head).",
        L * 4 * D * (H * d - D): (
            f"It looks like you counted 4 d_model^2 per attention layer (notebook 06's rule of thumb). That "
            f"assumes n_heads * d_head = d_model, but here n_heads * d_head = {H} * {d} = {H * d} and d_model = {D}: "
            "W_Q, W_K, W_V and W_O each have n_heads * d_head * d_model entries."),
    }
    if diff in hints:
        raise ExerciseError(f"{what} = {got:,}, but the model has {want:,}. {hints[diff]}")
    how = f"{abs(diff):,} too few" if diff > 0 else f"{abs(diff):,} too many"
    raise ExerciseError(f"{what} = {got:,}, but Transformer(cfg) has {want:,} ({how}). Go through the "
                        "parameter table: W_E, W_pos, per layer (attention, MLP with biases, 2 LayerNorms), "
                        "a final LayerNorm, W_U.")
