"""helpers.lessons.ladder names notebook 08's checkpoints: one recipe, three seeds per rung, seed 0 of the shared rungs
stored once; tools/train_models.py trains exactly those; the ladder plots draw every seed."""


import matplotlib
import pytest

from helpers.lessons import ladder
from helpers.plots.ladder import curves, rung_dots

matplotlib.use("Agg")


def test_names_share_seed_zero_of_the_shipped_models_and_nothing_else():
    assert ladder.checkpoint_name("full1", 0) == "full1" and ladder.checkpoint_name("zero", 0) == "zero"
    assert ladder.checkpoint_name("full1", 1) == "ladder_full1_s1"
    assert ladder.checkpoint_name("attn", 0) == "ladder_attn_s0"      # attn1 has another recipe: not shared
    assert ladder.long_name("full2", 2) == "long_full2_s2"
    names = ladder.all_names()
    assert len(names) == len(ladder.RUNGS) * len(ladder.SEEDS) + len(ladder.LONG) * len(ladder.SEEDS)
    assert {rung for rung, _, _ in names.values()} == set(ladder.RUNGS)


@pytest.mark.parametrize("call", [lambda: ladder.checkpoint_name("mlp", 0), lambda: ladder.checkpoint_name("attn", 3),
                                  lambda: ladder.long_name("attn", 0)])
def test_unknown_rungs_and_seeds_say_what_exists(call):
    with pytest.raises(KeyError, match="rung|seeds"):
        call()


def test_every_checkpoint_is_trained_with_the_one_recipe():
    from tools.train_models import REGISTRY as registry
    for name, (rung, seed, steps) in ladder.all_names().items():
        spec = registry[name]
        assert spec.config == ladder.RUNGS[rung].config, name
        assert (spec.lr, spec.seed, spec.steps, spec.batch_size) == (ladder.LR, seed, steps, 32), name
        assert "pos_init_std" not in spec.config and "init_std" not in spec.config, name   # the default init
    # the rungs differ only in the pieces they have: width, context and heads are the same everywhere
    shared = {k: v for k, v in ladder.RUNGS["full2"].config.items() if k in ("d_model", "n_ctx")}
    assert all({k: r.config[k] for k in shared} == shared for r in ladder.RUNGS.values())


def test_plots_draw_a_dot_per_seed_and_a_band_per_run():
    ax = rung_dots(None, [("bigram", 3.9), ("attention", [3.5, 3.52, 3.51])])
    dots = [list(line.get_xdata()) for line in ax.lines if line.get_marker() == "o"]
    assert dots == [[3.9], [3.5, 3.52, 3.51]]                       # every seed drawn, not only the mean
    assert any("3.51 (3.50–3.52)" in t.get_text() for t in ax.texts)
    assert ax.get_xlim()[0] > 3.4                                   # the axis zooms in on the values
    ax = curves(None, {"a": [[4.0, 3.8, 3.7], [4.1, 3.9, 3.6]], "b": [[4.2, 3.9, 3.8]]}, every=250)
    assert [list(line.get_xdata()) for line in ax.lines] == [[250, 500, 750]] * 2
    assert len(ax.collections) == 2                      # one min-max band per run
