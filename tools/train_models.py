"""Train the small models the notebooks look at, and save them under checkpoints/.

    .venv/bin/python -m tools.train_models            # train every model in the registry
    .venv/bin/python -m tools.train_models attn1      # just one
    .venv/bin/python -m tools.train_models --list     # the registry and what is on disk

Every model is trained on ``helpers.data.default_data()`` (King James text, a 2,000-word vocabulary
unless its Spec sets ``max_vocab``) with a fixed seed, and saved as safetensors (float16 weights,
about 0.5 MB each) whose metadata records the held-out loss *measured after reloading the saved
file*, the steps, seed, training time and a hash of the vocabulary. ``tests/unit/model/test_checkpoints.py``
reloads each file with the current code and checks that the held-out loss is still what the
metadata says.

``INDUCTION`` holds three copies of notebook 09's character-level induction model (its own recipe, seeds 0-2),
float32, the references of exercise 9.3's check and the model notebook 10 reads, and one model of the earlier,
periodic recipe (notebook 09's lesson); their metadata records the head scores, repeat loss and copying by position
that the test re-measures. ``TEXT`` holds the two models of notebook 09's section 10 (the King James text alone, and
with passages written twice mixed in; helpers/lessons/text_induction.py), float16, with the curve recorded while they
trained.

To add a model, add one ``Spec`` to ``REGISTRY`` (e.g. "full1" with d_mlp and layernorm) and run
this script with its name. Use ``GT_THREADS=1`` on a shared machine.

``EXPERIMENTS`` holds specs that were tried and are *not* shipped (their result did not earn a place
in a notebook); `train_models.py NAME` trains one into checkpoints/experiments/ (not committed), and
its metadata keeps what was measured while training.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path

from helpers.lessons import ladder
from helpers.data import HELDOUT_PREDICTIONS

ROOT = Path(__file__).resolve().parent.parent
EVAL_TOKENS = HELDOUT_PREDICTIONS  # the recorded losses are on the series' held-out set (helpers.data)


@dataclass(frozen=True)
class Spec:
    """A named model: its architecture (Config fields other than n_vocab) and how to train it."""

    description: str
    config: dict = field(default_factory=dict)
    steps: int = 2000
    lr: float = 3e-3
    batch_size: int = 32
    seed: int = 0
    max_vocab: int = 2000  # the tokenizer's vocabulary: default_data(max_vocab=...) trains, evaluates, hashes
    probe: bool = False  # track induction heads while training (see train_probed); stored in the metadata
    size_limit: int = 1_000_000  # bytes the float16 file may take (tests/unit/model/test_checkpoints.py)
    stop_induction: float | None = None  # with probe: stop (before ``steps``) once a last-layer head's
    # induction score has been at least this at two probes in a row

    @property
    def masked(self) -> bool:
        """False: trained *without* the causal mask (notebook 04's cautionary model); Config.masked."""
        return self.config.get("masked", True)


# attn1 / attn2 recipe: with W_pos initialised like the other weights (std 0.02) and lr 3e-3, no
# head attended by position after 2000 steps (every head's mean weight on the previous token <= 0.26,
# held-out loss 3.540 / 3.528). W_pos at std 1.0 and lr 1e-2 give each model one previous-token head
# (attn1 head 2: mean weight 0.59 on the previous token; attn2 layer 1 head 3: 0.72) and a better
# loss (3.437 / 3.430). For attn2 this depends on the seed: seed 0 split the job over two heads
# (0.44 and 0.46), so attn2 uses seed 1. tests/unit/model/test_checkpoints.py checks the heads.
REGISTRY: dict[str, Spec] = {
    "attn1": Spec("1 layer, attention only, 4 heads of d_head 16",
                  dict(d_model=64, n_ctx=32, n_layers=1, n_heads=4, pos_init_std=1.0), lr=1e-2),
    # notebook 03 follows the post's simplified model: one layer with ONE head (d_head = d_model / 1), so every
    # row of its activation table is the model's real prediction; attn1's recipe.
    "attn1h1": Spec("1 layer, attention only, 1 head of d_head 64 (the post's simplified model)",
                    dict(d_model=64, n_ctx=32, n_layers=1, n_heads=1, pos_init_std=1.0), lr=1e-2),
    "attn2": Spec("2 layers, attention only, 4 heads of d_head 16 per layer",
                  dict(d_model=64, n_ctx=32, n_layers=2, n_heads=4, pos_init_std=1.0), lr=1e-2, seed=1),
    # seed 0 of three of notebook 08's ladder rungs (see the loop below): lr 3e-3 and W_pos std 0.02. With attn1's
    # recipe (lr 1e-2, W_pos std 1.0) they trained much worse (held-out zero 3.807, full1 4.234, full2 4.213
    # instead of 3.76 / 3.29 / 3.31), so the ladder's one recipe is this one.
    "zero": Spec("0 layers: embedding, positional embedding, unembedding (notebook 02's model)",
                 dict(d_model=64, n_ctx=32, n_layers=0)),
    "full1": Spec("1 layer with LayerNorm, attention (4 heads) and a ReLU MLP (d_mlp = 4 d_model = 256)",
                  dict(d_model=64, n_ctx=32, n_layers=1, n_heads=4, d_mlp=256, layernorm=True)),
    "full2": Spec("2 layers with LayerNorm, attention (4 heads) and a ReLU MLP (d_mlp = 256) each",
                  dict(d_model=64, n_ctx=32, n_layers=2, n_heads=4, d_mlp=256, layernorm=True)),
    "attn1_nomask": Spec("like attn1 but trained WITHOUT the causal mask: it learns to read the next token",
                         dict(d_model=64, n_ctx=32, n_layers=1, n_heads=4, masked=False), steps=1000, lr=1e-2),
}

# Notebook 08's ladder (helpers/lessons/ladder.py names every rung and seed): one recipe for every rung -- the same
# data,
# width, context, heads, steps, learning rate and initialisation (zero / full1 / full2's recipe above) -- three
# seeds per rung, and the depth experiment's LONG runs (the same recipe for 4x the steps). Seed 0 of zero / full1 /
# full2 is the checkpoint of that name, so the loop checks that its Spec really is the ladder's recipe.
for _name, (_rung, _seed, _steps) in ladder.all_names().items():
    _spec = Spec(f"ladder rung '{ladder.RUNGS[_rung].label}' (notebook 08), seed {_seed}"
                 + (f", {_steps:,} steps" if _steps != ladder.STEPS else ""),
                 ladder.RUNGS[_rung].config, steps=_steps, lr=ladder.LR, seed=_seed)
    if _name in REGISTRY:
        assert (REGISTRY[_name].config, REGISTRY[_name].steps, REGISTRY[_name].lr, REGISTRY[_name].seed) == \
            (_spec.config, _spec.steps, _spec.lr, _spec.seed), f"{_name} is not trained with the ladder's recipe"
    else:
        REGISTRY[_name] = _spec


# Tried for notebook 09 (induction heads from the King James text) and NOT shipped:
# no induction head formed within the budget of about 45 minutes on 2 shared cores with one thread.
# Induction needs two layers, a context long enough for a name to come back (n_ctx 128 instead of 32)
# and names that are not <unk> (8,000 words: 93 % of the capitalised words inside held-out verses are
# in the vocabulary, 74 % with 2,000). Measured with train_probed every 250 steps, 4000 steps (1972 s,
# 8.2 M tokens, ~10 passes over the 852 k training tokens): held-out loss 4.52 (step 250), 3.72 (1500),
# 3.66 (4000, flat since ~2500); layer-1 induction scores on repeated random tokens 0.000-0.011 at every
# probe, layer-0 previous-token scores 0.02-0.05, the repeat of random tokens no easier than its first
# half (24.52 vs 24.51 nats at the end). On held-out text the one previous-token head it grows is in
# layer 1 (head 2: 0.58), where no later head can read it (like attn2's), and a verse seen twice is only
# a little easier the second time (100 held-out verses: 4.17 -> 3.90 nats; Genesis 1:1 4.05 -> 3.88),
# unchanged by zeroing any one head. By the fit of Aoyama et al. 2025 ("Predicting the Formation of
# Induction Heads": tokens to formation ~ 10^5.7 sqrt(batch * n_ctx)), if it holds here, this run needs ~23 M
# tokens (~11 k steps, 1.4-2.3 h on this machine, ~27 passes over the text): about 3x what it saw.
EXPERIMENTS: dict[str, Spec] = {
    "induction_kjv": Spec("2 layers, attention only, 4 heads of d_head 16, n_ctx 128, 8,000-word vocabulary",
                          dict(d_model=64, n_ctx=128, n_layers=2, n_heads=4, pos_init_std=1.0),
                          steps=4000, lr=1e-2, batch_size=16, max_vocab=8000, probe=True, stop_induction=0.4,
                          size_limit=3_000_000),
}


# Notebook 09's model (characters, repeating sequences), trained with the notebook's own recipe for three seeds and
# shipped in float32 (about 0.2 MB each): the references exercise 9.3's check runs a learner's text on
# (helpers.checks.induction.reference_models). A model trained live differs from CPU to CPU, because another CPU
# rounds the last bit differently and training amplifies it; these files are the same on every machine, so a
# learner's answer gets the same verdict on a laptop, on the hub and on the grader's machine.
# ``induction_periodic`` is the lesson of notebook 09's section 7: the earlier recipe (a segment repeated from position
# 0, W_pos started at the other weights' spread), whose heads copy only when the earlier copy sits in the first 16
# positions.
INDUCTION: dict[str, int] = {f"induction_s{seed}": seed for seed in (0, 1, 2)} | {"induction_periodic": 0}
INDUCTION_RECIPE = dict(max_steps=1500, threshold=0.85, every_position=0.5, extra_steps=100)  # notebook 09's
PERIODIC_RECIPE = dict(max_steps=1500, threshold=0.85, extra_steps=100, batch_size=32, data="periodic")


# Notebook 09's section 10: induction heads grown from the King James text (helpers/lessons/text_induction.py says
# what was
# tried and why this shape). The same model and steps twice: the text alone, and the text with half of each batch's
# rows holding a passage written twice (those rows scored on the repeat). float16, measured after reloading.
TEXT: dict[str, dict] = {"text_induction": dict(steps=8000, batch_size=8, lr=3e-3, repeat_share=0.5, seed=0),
                         "text_plain": dict(steps=8000, batch_size=8, lr=3e-3, repeat_share=0.0, seed=0)}


def induction_recipe(name: str) -> dict:
    """The train_induction(...) arguments of one of INDUCTION."""
    return PERIODIC_RECIPE if name == "induction_periodic" else INDUCTION_RECIPE


def induction_config(name: str):
    """The Config of one of INDUCTION: notebook 09's, or for the periodic lesson the earlier one (W_pos at 0.02)."""
    import dataclasses

    from helpers.lessons.induction import config

    return dataclasses.replace(config(n_layers=2), pos_init_std=None) if name == "induction_periodic" else \
        config(n_layers=2)


def spec_of(name: str) -> Spec:
    """The Spec of a shipped model (REGISTRY) or of an experiment (EXPERIMENTS)."""
    if name in REGISTRY:
        return REGISTRY[name]
    if name in EXPERIMENTS:
        return EXPERIMENTS[name]
    raise KeyError(f"no model {name!r}: the registry has {list(REGISTRY)}, the experiments {list(EXPERIMENTS)}")


def output_path(name: str) -> Path:
    """Where train_one writes a model: checkpoints/NAME.safetensors, experiments under checkpoints/experiments/."""
    from helpers.model import checkpoint

    path = checkpoint.named_path(name)
    return path if name in REGISTRY else path.parent / "experiments" / path.name


def vocab_hash(tokenizer) -> str:
    return hashlib.sha256("\n".join(tokenizer.vocab).encode()).hexdigest()[:16]


def spec_data(name: str):
    """The tokenized corpus a registry model is trained and evaluated on (its vocabulary size)."""
    from helpers.data import default_data

    return default_data(max_vocab=spec_of(name).max_vocab)


def repeat_halves(model, seed: int = 0) -> dict:
    """Induction figures on [random half][the same half again] (half = n_ctx // 2, 8 texts, no token
    repeated inside a half): every layer's "induction" and "previous" head scores, and the mean loss
    on predicting the first half's tokens vs the repeated half's (its 2nd token on: the first token
    of the repeat cannot be predicted)."""
    from helpers.lessons.induction import repeat_loss
    from helpers.interp.scores import head_scores
    from helpers.interp.sequences import repeated_tokens

    ids = repeated_tokens(model.cfg.n_vocab, half=model.cfg.n_ctx // 2, batch=8, seed=seed, distinct=True)
    scores = head_scores(model, ids, which=("previous", "induction"))
    loss_first, loss_repeat = repeat_loss(model, ids)
    return {"induction": scores["induction"], "previous": scores["previous"],
            "loss_first": loss_first, "loss_repeat": loss_repeat}


def _lean_loss(model, batch):
    """Transformer.loss computed with the logits laid out (tokens, n_vocab): the same number (to float
    rounding), about 1.6 times faster for an 8,000-word vocabulary, where the unembedding dominates."""
    import torch.nn.functional as F

    tokens = batch[:, :-1]
    x = model.embed(tokens)
    if model.pos_embed is not None:
        x = x + model.pos_embed(tokens)
    for block in model.blocks:
        x = block(x)
    if model.ln_final is not None:
        x = model.ln_final(x)
    logits = x.transpose(1, 2).reshape(-1, x.shape[1]) @ model.unembed.W_U.T  # (batch * n, n_vocab)
    return F.cross_entropy(logits, batch[:, 1:].reshape(-1))


def train_probed(model, data, spec: Spec, name: str, every: int = 250):
    """helpers.train.train's loop (AdamW, seeded random windows) with, every ``every`` steps, the
    held-out loss and the induction figures of ``repeat_halves``. Returns (History, probe rows)."""
    import time

    import torch
    from tqdm.auto import tqdm

    from helpers.tokens import random_windows
    from helpers.train import History, evaluate

    g = torch.Generator().manual_seed(spec.seed)
    opt = torch.optim.AdamW(model.parameters(), lr=spec.lr, weight_decay=0.0)
    hist, rows, running = History(), [], []
    start = time.perf_counter()
    model.train()
    for step in tqdm(range(1, spec.steps + 1), desc=name, mininterval=5):
        loss = _lean_loss(model, random_windows(data.train_ids, model.cfg.n_ctx, spec.batch_size, g))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        running.append(loss.item())
        if step % every == 0 or step == spec.steps:
            model.eval()
            held = evaluate(model, data.heldout_ids, max_tokens=EVAL_TOKENS)
            rep = repeat_halves(model)
            model.train()
            hist.step.append(step)
            hist.train_loss.append(sum(running) / len(running))
            running = []
            hist.eval_step.append(step)
            hist.heldout_loss.append(held)
            row = {"step": step, "seconds": round(time.perf_counter() - start), "heldout": round(held, 3),
                   "induction_l1": [round(v, 3) for v in rep["induction"][-1].tolist()],
                   "previous_l0": [round(v, 3) for v in rep["previous"][0].tolist()],
                   "loss_first": round(rep["loss_first"], 3), "loss_repeat": round(rep["loss_repeat"], 3)}
            rows.append(row)
            print(json.dumps(row), flush=True)
            if spec.stop_induction is not None and len(rows) >= 2 and all(
                    max(r["induction_l1"]) >= spec.stop_induction for r in rows[-2:]):
                break
    model.eval()
    hist.seconds = time.perf_counter() - start
    return hist, rows


def heldout_loss(model, data, masked: bool = True) -> float:
    """Held-out loss with the causal mask on or off (restored afterwards)."""
    from helpers.model.transformer import mask_switched
    from helpers.train import evaluate

    with mask_switched(model, masked):
        return evaluate(model, data.heldout_ids, max_tokens=EVAL_TOKENS)


def train_one(name: str) -> dict:
    import torch

    from helpers import setup
    from helpers.data import default_data
    from helpers.model import checkpoint
    from helpers.model.config import Config
    from helpers.train import fresh_model, train

    spec = spec_of(name)
    setup(spec.seed)
    data = default_data(max_vocab=spec.max_vocab)
    cfg = Config(n_vocab=data.n_vocab, **spec.config)
    model = fresh_model(cfg, spec.seed)  # the mask as cfg.masked says; the saved config remembers it
    rows = None
    if spec.probe:
        hist, rows = train_probed(model, data, spec, name)
    else:
        hist = train(model, data.train_ids, spec.steps, batch_size=spec.batch_size, lr=spec.lr, seed=spec.seed,
                     heldout_ids=data.heldout_ids, eval_every=250, eval_tokens=EVAL_TOKENS, desc=name)
    path = output_path(name)
    path.parent.mkdir(parents=True, exist_ok=True)
    meta = {"name": name, "description": spec.description,
            "steps": str(hist.step[-1] if spec.probe else spec.steps), "seed": str(spec.seed), "lr": str(spec.lr),
            "batch_size": str(spec.batch_size), "vocab_hash": vocab_hash(data.tokenizer),
            "masked": str(spec.masked).lower(),
            "train_seconds": f"{hist.seconds:.0f}", "eval_tokens": str(EVAL_TOKENS),
            "heldout_curve": json.dumps([round(v, 3) for v in hist.heldout_loss])}
    if spec.max_vocab != 2000:
        meta["max_vocab"] = str(spec.max_vocab)
    if rows is not None:
        meta["probe_curve"] = json.dumps(rows)
    checkpoint.save(model, path, dtype=torch.float16, **meta)  # float16: about 0.5 MB a model
    reloaded = checkpoint.load(path)  # the loss is measured on what a notebook will actually load
    meta["heldout_loss"] = f"{heldout_loss(reloaded, data, spec.masked):.3f}"  # as trained
    if not spec.masked:  # and as it would have to be used, unable to see the future
        meta["heldout_loss_masked"] = f"{heldout_loss(reloaded, data, True):.3f}"
    if spec.probe:  # the induction figures of the file itself (tests/unit/model/test_checkpoints.py re-measures them)
        rep = repeat_halves(reloaded)
        meta["induction_scores"] = json.dumps([[round(v, 3) for v in row] for row in rep["induction"].tolist()])
        meta["previous_scores"] = json.dumps([[round(v, 3) for v in row] for row in rep["previous"].tolist()])
        meta["repeat_loss_first"] = f"{rep['loss_first']:.3f}"
        meta["repeat_loss_second"] = f"{rep['loss_repeat']:.3f}"
    checkpoint.save(model, path, dtype=torch.float16, **meta)
    return meta


def train_induction_reference(name: str) -> dict:
    """One of INDUCTION: notebook 09's recipe (or the periodic lesson's) with that seed; saved (float32) with the
    figures the check and tests/unit/model/test_checkpoints.py rely on: head scores, repeat loss on notebook 09's probe
    and copying by position, measured on the file."""
    import torch

    from helpers import setup
    from helpers.lessons.induction import copy_by_position, probe_tokens, repeat_loss, train_induction
    from helpers.interp.scores import head_scores
    from helpers.model import checkpoint
    from helpers.train import fresh_model

    seed, recipe = INDUCTION[name], induction_recipe(name)
    setup(seed)
    model = fresh_model(induction_config(name), seed=seed)
    run = train_induction(model, **recipe, seed=seed, progress=False)
    path = checkpoint.named_path(name)
    what = "the earlier, periodic recipe" if name == "induction_periodic" else "its recipe"
    meta = {"name": name, "description": f"notebook 09's model (2 layers, attention only), {what}, seed {seed}",
            "seed": str(seed), "steps": str(run.step[-1]), "formed_at": str(run.formed_at),
            "recipe": json.dumps(recipe), "train_seconds": f"{run.seconds:.0f}",
            "torch": torch.__version__, "cpu_capability": torch.backends.cpu.get_cpu_capability()}
    checkpoint.save(model, path, **meta)
    reloaded = checkpoint.load(path)
    probe = probe_tokens(reloaded.cfg.n_ctx)
    scores = head_scores(reloaded, probe, which=("previous", "induction"))
    first, repeat = repeat_loss(reloaded, probe)
    meta.update(previous_scores=json.dumps([[round(v, 3) for v in r] for r in scores["previous"].tolist()]),
                induction_scores=json.dumps([[round(v, 3) for v in r] for r in scores["induction"].tolist()]),
                repeat_loss_first=f"{first:.3f}", repeat_loss_second=f"{repeat:.3f}",
                copy_by_position=json.dumps([round(float(p), 3) for p in copy_by_position(reloaded)]))
    checkpoint.save(model, path, **meta)
    return meta


def train_text_reference(name: str) -> dict:
    """One of TEXT: trained, saved (float16) with its recipe, the curve recorded while training and the figures of
    helpers.lessons.text_induction.probe measured on the file itself (tests/unit/model/test_checkpoints.py re-measures
    them)."""
    import torch

    from helpers import setup
    from helpers.data import default_data
    from helpers.model import checkpoint
    from helpers.lessons.text_induction import config, probe, rounded, train_text
    from helpers.train import fresh_model

    recipe = TEXT[name]
    setup(recipe["seed"])
    model = fresh_model(config(), seed=recipe["seed"])
    run = train_text(model, **recipe)
    path = checkpoint.named_path(name)
    what = "with repeated passages mixed in" if recipe["repeat_share"] else "alone"
    meta = {"name": name,
            "description": f"notebook 09's section 10: 2 layers, attention only, the King James text {what}",
            "recipe": json.dumps(recipe), "steps": str(run.step[-1]), "train_seconds": f"{run.seconds:.0f}",
            "vocab_hash": vocab_hash(default_data().tokenizer), "curve": json.dumps(run.rows()),
            "torch": torch.__version__, "cpu_capability": torch.backends.cpu.get_cpu_capability()}
    checkpoint.save(model, path, dtype=torch.float16, **meta)
    figures = probe(checkpoint.load(path))
    meta["figures"] = json.dumps({k: rounded(x) for k, x in figures.items()})
    checkpoint.save(model, path, dtype=torch.float16, **meta)
    return meta


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="*", help=f"models to train (default: all of {', '.join(REGISTRY)})")
    ap.add_argument("--list", action="store_true", help="show the registry and the saved files")
    args = ap.parse_args(argv)
    from helpers.model import checkpoint

    if args.list:
        for name, spec in REGISTRY.items():
            p = checkpoint.named_path(name)
            got = checkpoint.metadata(p).get("heldout_loss", "?") if p.is_file() else "not trained"
            print(f"{name:13s} {spec.description}; held-out loss {got}")
        for name, seed in INDUCTION.items():
            p = checkpoint.named_path(name)
            got = checkpoint.metadata(p).get("repeat_loss_second", "?") if p.is_file() else "not trained"
            print(f"{name:13s} notebook 09's model, seed {seed} (exercise 9.3's reference); repeat loss {got}")
        for name, recipe in TEXT.items():
            p = checkpoint.named_path(name)
            got = json.loads(checkpoint.metadata(p)["figures"])["loss_repeat"] if p.is_file() else "not trained"
            print(f"{name:13s} notebook 09's model of the King James text, repeat share {recipe['repeat_share']}; "
                  f"loss on repeated passages {got}")
        for name, spec in EXPERIMENTS.items():
            p = output_path(name)
            got = checkpoint.metadata(p).get("heldout_loss", "?") if p.is_file() else "not trained"
            print(f"{name:13s} (experiment, not shipped) {spec.description}; held-out loss {got}")
        return 0
    unknown = [n for n in args.names if n not in REGISTRY and n not in EXPERIMENTS and n not in INDUCTION
               and n not in TEXT]
    if unknown:
        print(f"unknown model(s) {unknown}; the registry has {list(REGISTRY)}, the induction references "
              f"{list(INDUCTION)}, the experiments {list(EXPERIMENTS)}", file=sys.stderr)
        return 2
    for name in args.names or list(REGISTRY) + list(INDUCTION) + list(TEXT):
        if name in TEXT:
            meta = train_text_reference(name)
            print(f"{name}: {json.loads(meta['figures'])} after {meta['steps']} steps ({meta['train_seconds']} s)")
            continue
        if name in INDUCTION:
            meta = train_induction_reference(name)
            print(f"{name}: repeat loss {meta['repeat_loss_second']} nats/token after {meta['steps']} steps "
                  f"({meta['train_seconds']} s) -> {checkpoint.named_path(name).relative_to(ROOT)}")
            continue
        meta = train_one(name)
        print(f"{name}: held-out loss {meta['heldout_loss']} nats/token after {meta['steps']} steps "
              f"({meta['train_seconds']} s) -> {output_path(name).relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
