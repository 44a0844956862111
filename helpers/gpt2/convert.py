"""GPT-2's files in the series' own Transformer: the Hub's config.json as a ``Config``, and its weights under the post's
names (the table in ``helpers.gpt2``'s docstring), as views of the file's tensors."""

from __future__ import annotations

import json
from pathlib import Path

import torch

from helpers.gpt2.errors import GPT2FileError, GPT2Unavailable
from helpers.gpt2.tokenizer import BPETokenizer, tokenizer
from helpers.model.config import Config
from helpers.model.transformer import Transformer

FILES = ("config.json", "model.safetensors", "tokenizer.json")
SIZE = "about 550 MB"  # model.safetensors 548 MB, tokenizer.json 1.4 MB, config.json 1 kB
FETCH = "bash run.sh gpt2"
N_PARAMS_SMALL = 124_439_808  # GPT-2 Small, with W_U tied to W_E (counted once)


HUB_ACTIVATIONS = {"gelu_new": "gelu_tanh", "gelu_pytorch_tanh": "gelu_tanh", "gelu": "gelu", "relu": "relu"}
UNSUPPORTED = {"scale_attn_weights": False, "scale_attn_by_inverse_layer_idx": True, "reorder_and_upcast_attn": True,
               "tie_word_embeddings": False}  # GPT-2 variants the series' attention and unembedding do not compute


def config_from_hub(hf: dict) -> Config:
    """The series' Config for a Hub ``config.json`` of model_type gpt2 (GPT-2 Small and its larger siblings)."""
    if not isinstance(hf, dict):
        raise GPT2FileError(f"config.json holds a {type(hf).__name__}, not GPT-2's settings")
    if hf.get("model_type", "gpt2") != "gpt2":
        raise GPT2FileError(f"config.json describes a {hf.get('model_type')!r} model, not GPT-2")
    sizes = ("vocab_size", "n_embd", "n_positions", "n_layer", "n_head")
    bad = [k for k in sizes if not isinstance(hf.get(k), int) or isinstance(hf.get(k), bool) or hf[k] < 1]
    if bad:
        raise GPT2FileError(f"config.json lacks GPT-2's sizes (or gives one that is not a positive whole number): "
                            f"{', '.join(bad)}")
    odd = [f"{k} = {hf[k]}" for k, v in UNSUPPORTED.items() if k in hf and hf[k] == v]
    if odd:
        raise GPT2FileError(f"config.json asks for {', '.join(odd)}: a GPT-2 variant this loader does not compute "
                            "(it reads GPT-2 as OpenAI released it)")
    name = hf.get("activation_function", "gelu_new")
    if name not in HUB_ACTIVATIONS:
        raise GPT2FileError(f"config.json asks for the activation {name!r}, which the series' MLP does not have")
    eps = hf.get("layer_norm_epsilon", 1e-5)
    if not isinstance(eps, (int, float)) or abs(eps - 1e-5) > 1e-12:
        raise GPT2FileError(f"config.json has layer_norm_epsilon {eps}; the series' LayerNorm uses 1e-5, as GPT-2 does")
    d_model = hf["n_embd"]
    return Config(n_vocab=hf["vocab_size"], d_model=d_model, n_ctx=hf["n_positions"], n_layers=hf["n_layer"],
                  n_heads=hf["n_head"], d_mlp=hf.get("n_inner") or 4 * d_model, activation=HUB_ACTIVATIONS[name],
                  layernorm=True, attn_biases=True, tied_unembed=True)


def small_config() -> Config:
    """GPT-2 Small's shapes (what the Hub's config.json for openai-community/gpt2 says)."""
    return config_from_hub({"vocab_size": 50257, "n_embd": 768, "n_positions": 1024, "n_layer": 12, "n_head": 12})


def skeleton(cfg: Config | None = None) -> Transformer:
    """A Transformer of ``cfg``'s shapes (default: GPT-2 Small's) on the "meta" device: every parameter has its name
    and shape and no memory, so GPT-2 Small's parameter table can be read without its weights."""
    with torch.device("meta"):
        return Transformer(cfg or small_config()).requires_grad_(False)


def _hub_name(state: dict[str, torch.Tensor], name: str) -> torch.Tensor:
    for key in (name, f"transformer.{name}"):  # the Hub's file, or one saved by transformers' save_pretrained
        if key in state:
            return state[key]
    raise GPT2FileError(f"the checkpoint has no tensor {name!r}: it is not GPT-2's layout (or it is incomplete)")


def from_hub_state(state: dict[str, torch.Tensor], cfg: Config) -> Transformer:
    """The series' Transformer whose weights are ``state`` (the Hub's GPT-2 tensors), each under the post's name.
    Views where they suffice: the model's parameters share the memory of ``state``."""
    D, H, dh, V = cfg.d_model, cfg.n_heads, cfg.d_head, cfg.n_vocab
    if H * dh != D:
        raise GPT2FileError(f"GPT-2's heads split d_model exactly: n_heads {H} x d_head {dh} != d_model {D}")

    def get(name: str, shape: tuple) -> torch.Tensor:
        t = _hub_name(state, name)
        if tuple(t.shape) != shape:
            raise GPT2FileError(f"{name} has shape {tuple(t.shape)}; config.json's sizes say {shape}")
        return t

    ours = {"embed.W_E": get("wte.weight", (V, D)).T, "pos_embed.W_pos": get("wpe.weight", (cfg.n_ctx, D)).T,
            "ln_final.gamma": get("ln_f.weight", (D,)), "ln_final.beta": get("ln_f.bias", (D,))}
    for L in range(cfg.n_layers):
        h, b = f"h.{L}.", f"blocks.{L}."
        c_attn, c_attn_b = get(h + "attn.c_attn.weight", (D, 3 * D)), get(h + "attn.c_attn.bias", (3 * D,))
        for i, which in enumerate("QKV"):
            ours[b + f"attn.W_{which}"] = c_attn[:, i * D:(i + 1) * D].T.reshape(H, dh, D)  # row vectors -> ours
            ours[b + f"attn.b_{which}"] = c_attn_b[i * D:(i + 1) * D].reshape(H, dh)
        ours[b + "attn.W_O"] = get(h + "attn.c_proj.weight", (D, D)).reshape(H, dh, D).transpose(1, 2)
        ours[b + "attn.b_O"] = get(h + "attn.c_proj.bias", (D,))
        ours[b + "mlp.W_1"] = get(h + "mlp.c_fc.weight", (D, cfg.d_mlp)).T
        ours[b + "mlp.b_1"] = get(h + "mlp.c_fc.bias", (cfg.d_mlp,))
        ours[b + "mlp.W_2"] = get(h + "mlp.c_proj.weight", (cfg.d_mlp, D)).T
        ours[b + "mlp.b_2"] = get(h + "mlp.c_proj.bias", (D,))
        for ln, hub in (("ln_attn", "ln_1"), ("ln_mlp", "ln_2")):
            ours[b + f"{ln}.gamma"] = get(h + f"{hub}.weight", (D,))
            ours[b + f"{ln}.beta"] = get(h + f"{hub}.bias", (D,))
    with torch.device("meta"):
        model = Transformer(cfg)  # no random weights allocated: every parameter comes from the file
    model.load_state_dict(ours, strict=True, assign=True)
    model.requires_grad_(False)  # for reading, not training: a forward pass keeps no graph
    model.eval()
    return model


def load_dir(folder: str | Path) -> tuple[Transformer, BPETokenizer]:
    """GPT-2 from a folder holding the Hub's config.json, model.safetensors and tokenizer.json."""
    from safetensors import SafetensorError
    from safetensors.torch import load_file

    folder = Path(folder)
    missing = [f for f in FILES if not (folder / f).is_file()]
    if missing:
        raise GPT2Unavailable(f"{folder} lacks {', '.join(missing)}: `{FETCH} --dir {folder}` fetches GPT-2's files "
                              f"({SIZE}) into it")
    try:
        hf = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise GPT2FileError(f"{folder / 'config.json'} is damaged ({e}): delete it and run `{FETCH}` again") from None
    cfg = config_from_hub(hf)
    try:
        state = load_file(str(folder / "model.safetensors"))
    except (SafetensorError, OSError, ValueError) as e:
        raise GPT2FileError(f"{folder / 'model.safetensors'} is damaged or incomplete ({e}): delete it and run "
                            f"`{FETCH}` again") from None
    state = {k: v.float() for k, v in state.items()}  # the Hub's GPT-2 is float32 already: no copy then
    model = from_hub_state(state, cfg)
    return model, tokenizer(folder / "tokenizer.json")

