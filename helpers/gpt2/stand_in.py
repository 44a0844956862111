"""What notebook 11 runs on: the real GPT-2 Small when it is on this machine, otherwise a GPT-2-shaped model of random
weights written here in the Hub's own layout (``write_random``; also what the tests and the benchmark load)."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

import torch

from helpers.gpt2.convert import FILES, HUB_ACTIVATIONS, load_dir, small_config
from helpers.gpt2.errors import GPT2Unavailable
from helpers.gpt2.hub import load
from helpers.gpt2.tokenizer import BPETokenizer, byte_level_bpe
from helpers.model.config import Config
from helpers.model.transformer import Transformer


@dataclass
class Loaded:
    """What ``load_or_stand_in`` found: the model and its tokenizer, whether they are the real GPT-2, and a sentence
    for the top of a notebook saying which."""

    model: Transformer
    tokenizer: BPETokenizer
    real: bool
    note: str


def stand_in_config() -> Config:
    """A GPT-2 in everything but size (biases, tanh GELU, tied W_U, LayerNorm, 12 heads of d_head 16 in d_model 192),
    4 layers, 2,000 tokens: what a notebook about GPT-2 runs on offline, in a second."""
    return Config(n_vocab=2000, d_model=192, n_ctx=128, n_layers=4, n_heads=12, d_mlp=768, activation="gelu_tanh",
                  layernorm=True, attn_biases=True, tied_unembed=True)


def load_or_stand_in(folder: str | Path | None = None) -> Loaded:
    """The real GPT-2 Small if it is on this machine (``GT_GPT2_DIR``, ``folder`` or the Hugging Face cache);
    otherwise a GPT-2-shaped model of random weights (``stand_in_config``), written once into a cache folder, with a
    note that says so and names the command that fetches the real one. Never downloads: a notebook that starts a
    550 MB download unasked would stall a class (and CI) on the network; `bash run.sh gpt2` is the one way in."""
    try:
        model, tok = load(folder=folder, cached_only=True)
        return Loaded(model, tok, True, f"GPT-2 Small, {model.n_params():,} parameters: the real weights.")
    except GPT2Unavailable as e:
        why = str(e)
    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "gentle-transformers" / "gpt2-stand-in"
    if not all((cache / f).is_file() for f in FILES):
        import shutil

        partial = cache.with_name(f"{cache.name}.partial-{os.getpid()}")  # written whole, then put in place:
        write_random(partial, stand_in_config(), seed=0)                 # an interrupted write leaves no half file
        shutil.rmtree(cache, ignore_errors=True)
        os.replace(partial, cache)
    model, tok = load_dir(cache)
    note = (f"Not the real GPT-2: {why} Until then this notebook runs on a GPT-2-shaped model with random weights "
            f"({model.cfg.n_layers} layers, d_model {model.cfg.d_model}, {model.n_params():,} parameters), so every "
            "cell and widget works, but its predictions mean nothing.")
    return Loaded(model, tok, False, note)


def write_random(folder: str | Path, cfg: Config | None = None, seed: int = 0, std: float = 0.02,
                 text: str | None = None) -> Path:
    """Write a GPT-2 of random weights in the Hub's own layout into ``folder``: config.json, model.safetensors (the
    Hub's tensor names, Conv1D (in, out) weights, q, k, v fused in c_attn) and tokenizer.json (a byte-level BPE
    trained on ``text``, by default the King James text, filled up to cfg.n_vocab tokens with "<unused i>").
    Default: GPT-2 Small's shapes.
    What runs offline in place of the real weights (benchmark, tests, notebook 11 without the network)."""
    from safetensors.torch import save_file
    from tokenizers import AddedToken

    cfg = cfg or small_config()
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    g = torch.Generator().manual_seed(seed)
    D, F = cfg.d_model, cfg.d_mlp

    def rand(*shape):
        return torch.randn(*shape, generator=g) * std

    state = {"wte.weight": rand(cfg.n_vocab, D), "wpe.weight": rand(cfg.n_ctx, D),
             "ln_f.weight": torch.ones(D), "ln_f.bias": torch.zeros(D)}
    for L in range(cfg.n_layers):
        h = f"h.{L}."
        state |= {h + "ln_1.weight": torch.ones(D), h + "ln_1.bias": torch.zeros(D),
                  h + "ln_2.weight": torch.ones(D), h + "ln_2.bias": torch.zeros(D),
                  h + "attn.c_attn.weight": rand(D, 3 * D), h + "attn.c_attn.bias": rand(3 * D),
                  h + "attn.c_proj.weight": rand(D, D), h + "attn.c_proj.bias": rand(D),
                  h + "mlp.c_fc.weight": rand(D, F), h + "mlp.c_fc.bias": rand(F),
                  h + "mlp.c_proj.weight": rand(F, D), h + "mlp.c_proj.bias": rand(D)}
    save_file(state, str(folder / "model.safetensors"), metadata={"format": "pt"})
    act = next(hub for hub, ours in HUB_ACTIVATIONS.items() if ours == cfg.activation)  # the Hub's name for it
    hub_config = {"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"], "vocab_size": cfg.n_vocab,
                  "n_embd": D, "n_positions": cfg.n_ctx, "n_layer": cfg.n_layers, "n_head": cfg.n_heads,
                  "n_inner": None if F == 4 * D else F, "activation_function": act, "layer_norm_epsilon": 1e-5,
                  "tie_word_embeddings": cfg.tied_unembed, "bos_token_id": cfg.n_vocab - 1,
                  "eos_token_id": cfg.n_vocab - 1}
    (folder / "config.json").write_text(json.dumps(hub_config, indent=2), encoding="utf-8")
    if text is None:
        from helpers.corpus import load_text

        text = load_text()[:300_000]
    tok = byte_level_bpe(text, min(cfg.n_vocab, 2000))
    spare = cfg.n_vocab - tok.get_vocab_size()  # a few thousand merges are all this text gives: name the other
    if spare > 0:                               # rows of W_E "<unused i>", so every id the model can predict is text
        tok.add_special_tokens([AddedToken(f"<unused {i}>", special=True) for i in range(spare)])
    tok.save(str(folder / "tokenizer.json"))
    return folder

