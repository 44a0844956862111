"""Notebook 08: count the parameters of a model from its Config."""

from __future__ import annotations

from typing import Callable

from helpers.checks.base import ExerciseError, call, exercise, named, passed
from helpers.model.config import Config
from helpers.model.params import count_config


CONFIGS = (Config(n_vocab=101, d_model=12, n_ctx=17, n_layers=2, n_heads=3, d_head=5, d_mlp=40, layernorm=True),
           Config(n_vocab=57, d_model=20, n_ctx=9, n_layers=3, n_heads=2, d_head=6, d_mlp=31, layernorm=True))


# what answers the exercise without counting: the series' counters, and building the model to count its parameters
COUNTERS = ("helpers.model.params.count_config", "helpers.model.params.count_params",
            "helpers.model.transformer.Transformer.__init__")


@exercise(answered_by=("helpers.model.params.count_config", "helpers.model.params.count_params"))
def check_n_params(fn: Callable) -> bool:
    """fn(cfg: Config) -> int, the number of parameters of Transformer(cfg) (LayerNorm on, MLP on); tried on two
    configs whose numbers all differ, so that a number written into the code shows. A mistake is named by how far
    off it puts *both* counts: two pieces the same size in one config (the final LayerNorm's 2 d_model and the MLPs'
    b_2, n_layers d_model, in a two-layer model) are not the same size in the other."""
    what = named(fn, "n_params", "(cfg)")
    counts = []
    for cfg in CONFIGS:
        got = call(fn, cfg, what=what, forbid=COUNTERS)
        try:
            got = int(got)
        except (TypeError, ValueError):
            raise ExerciseError(f"{what} should return a whole number, got {type(got).__name__}") from None
        counts.append((cfg, got, count_config(cfg)))
    wrong = [(i, cfg, got, want) for i, (cfg, got, want) in enumerate(counts) if got != want]
    if not wrong:
        return passed(f"n_params is right: {count_config(CONFIGS[0]):,} and {count_config(CONFIGS[1]):,} for two "
                      "test configs (d_model 12 and 20, 2 and 3 layers, heads of 5 and 6, d_mlp 40 and 31).")
    i, cfg, got, want = wrong[0]
    # the mistakes that explain every config's count; failing that, those that explain this config's
    every = [k for k in range(len(_mistakes(cfg))) if all(_mistakes(c)[k][0] == w - g for c, g, w in counts)]
    hint = " Or: ".join(_mistakes(cfg)[k][1] for k in every) or " Or: ".join(_hints(cfg, want - got))
    if hint:
        raise ExerciseError(f"{what} = {got:,}, but the model has {want:,}. {hint}")
    how = f"{abs(want - got):,} too few" if want > got else f"{abs(want - got):,} too many"
    if i > 0:
        raise ExerciseError(f"{what} is right for the first test config but not for a second one (d_model "
                            f"{cfg.d_model}, {cfg.n_layers} layers, {cfg.n_heads} heads of {cfg.d_head}, d_mlp "
                            f"{cfg.d_mlp}, n_vocab {cfg.n_vocab}, n_ctx {cfg.n_ctx}): {got:,} instead of "
                            f"{want:,} ({how}). Is a number of the first written into the code? Read every "
                            "size from cfg.")
    raise ExerciseError(f"{what} = {got:,}, but Transformer(cfg) has {want:,} ({how}). Go through the "
                        "parameter table: W_E, W_pos, per layer (attention, MLP with biases, 2 LayerNorms), "
                        "a final LayerNorm, W_U.")


def _hints(cfg: Config, diff: int) -> list[str]:
    """Every usual mistake that is off by exactly ``diff`` parameters on this config."""
    return [text for off, text in _mistakes(cfg) if off == diff]


def _mistakes(cfg: Config) -> list[tuple[int, str]]:
    """(how many parameters too few, what is missing) for every usual mistake, in one order for every config."""
    D, H, d, L, V, C, M = cfg.d_model, cfg.n_heads, cfg.d_head, cfg.n_layers, cfg.n_vocab, cfg.n_ctx, cfg.d_mlp
    per_layer = 4 * H * d * D + 2 * D * M + M + D + 4 * D
    hints = [
        (L * (H - 1) * 4 * d * D, "Each of the n_heads heads has its own W_Q, W_K, W_V, W_O: multiply by n_heads."),
        (L * (M + D), "The MLP biases b_1 (d_mlp) and b_2 (d_model) are missing."),
        (L * M, "The MLP's first bias b_1 (d_mlp per layer) is missing."),
        (L * D, "The MLP's second bias b_2 (d_model per layer) is missing."),
        (2 * D, "One LayerNorm (2 d_model: gamma and beta) is missing — the final one before W_U?"),
        (L * 4 * D, "The LayerNorms inside the layers (two per layer, 2 d_model each) are missing."),
        (L * 2 * D, "One LayerNorm per layer is missing: each layer has two, before attention and before the MLP "
                    "(gamma and beta, 2 d_model each)."),
        (L * 4 * D + 2 * D, "All the LayerNorms are missing: two per layer plus the final one, 2 d_model each."),
        (V * D, "One n_vocab x d_model matrix is missing: count both W_E and W_U (this model does not tie them)."),
        (C * D, "W_pos (d_model x n_ctx) is missing."),
        ((L - 1) * per_layer, "Multiply the per-layer parameters by n_layers."),
        (L * 2 * H * d * D, "Count all four head matrices W_Q, W_K, W_V and W_O (two seem missing)."),
        (L * H * d * D, "One of W_Q, W_K, W_V, W_O seems missing (each has d_head x d_model entries per head)."),
        (L * 4 * D * (H * d - D), (
            f"It looks like you counted 4 d_model^2 per attention layer (notebook 06's rule of thumb). That "
            f"assumes n_heads * d_head = d_model, but here n_heads * d_head = {H} * {d} = {H * d} and d_model = {D}: "
            "W_Q, W_K, W_V and W_O each have n_heads * d_head * d_model entries.")),
    ]
    return hints
