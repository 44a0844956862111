"""GPT-2 Small in the series' own Transformer: the post's running example, loaded from the Hugging Face Hub.

GPT-2 computes the block layout of the series' ``Transformer`` (a LayerNorm before attention and before the MLP, a
final LayerNorm, eps 1e-5) with three additions, each a ``Config`` option that the series' own models leave off:
biases on q, k, v and o (``attn_biases``), the tanh form of GELU (``activation="gelu_tanh"``) and an unembedding
tied to the embedding, W_U = W_E^T (``tied_unembed``). GPT-2 Small: n_vocab 50,257, d_model 768, n_ctx 1,024,
12 layers of 12 heads (d_head 64), d_mlp 3,072: 124,439,808 parameters.

The Hub stores GPT-2 for row vectors with Conv1D weights of shape (in, out) and the three projections side by side
in one ``c_attn``. ``from_hub_state`` gives every weight its post's name and shape, as a *view* of the stored
tensor wherever a transpose, a split or a reshape will do (the model is built on the "meta" device first, so no
random weights are allocated either): loading costs the file's size in memory once, not twice.

    wte (n_vocab, d_model)          -> W_E = wte^T (d_model, n_vocab); W_U = W_E^T (tied)
    wpe (n_ctx, d_model)            -> W_pos = wpe^T
    h.L.ln_1 / ln_2 weight, bias    -> blocks[L].ln_attn / ln_mlp gamma, beta
    h.L.attn.c_attn.weight (d, 3d)  -> W_Q, W_K, W_V: each (d, d) column block transposed, split into heads
    h.L.attn.c_attn.bias (3d,)      -> b_Q, b_K, b_V (n_heads, d_head)
    h.L.attn.c_proj.weight (d, d)   -> W_O: row block h transposed, (n_heads, d_model, d_head); bias -> b_O
    h.L.mlp.c_fc (d, d_mlp), bias   -> W_1 = c_fc^T (d_mlp, d_model), b_1
    h.L.mlp.c_proj (d_mlp, d), bias -> W_2 = c_proj^T (d_model, d_mlp), b_2
    ln_f weight, bias               -> ln_final gamma, beta

``download`` fetches the three files with ``huggingface_hub`` (its progress bar, its cache); without the network and
without a cached copy it raises ``GPT2Unavailable``, one sentence naming the command that fetches the files and
their size, never the hub client's traceback. ``tokenizer`` wraps GPT-2's byte-level BPE (Hugging Face
``tokenizers``) so that ``prepare_prompt``, the explorers and the interp tools take it as they take the series'
word tokenizer.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path

import torch

from helpers.model.config import Config
from helpers.model.transformer import Transformer

REPO = "openai-community/gpt2"  # GPT-2 Small on the Hugging Face Hub
FILES = ("config.json", "model.safetensors", "tokenizer.json")
SIZE = "about 550 MB"  # model.safetensors 548 MB, tokenizer.json 1.4 MB, config.json 1 kB
FETCH = "bash run.sh gpt2"
N_PARAMS_SMALL = 124_439_808  # GPT-2 Small, with W_U tied to W_E (counted once)


class _OneSentence(Exception):
    def _render_traceback_(self) -> list[str]:  # in Jupyter: the sentence alone, not a traceback
        return [f"\x1b[0;33m{type(self).__name__}\x1b[0m: {self}"]


class GPT2Unavailable(_OneSentence, RuntimeError):
    """GPT-2's files are not on this machine and cannot be fetched now (offline, or the Hub unreachable)."""


class GPT2FileError(_OneSentence, ValueError):
    """A GPT-2 file is there but cannot be used: damaged, incomplete, or not GPT-2's layout."""


# --------------------------------------------------------------------------- config
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


# --------------------------------------------------------------------------- weights
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


def load_dir(folder: str | Path) -> tuple[Transformer, "BPETokenizer"]:
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


# --------------------------------------------------------------------------- the Hub
def download(repo: str = REPO, revision: str | None = None, cache_dir: str | Path | None = None,
             cached_only: bool = False) -> Path:
    """Fetch (or find in the Hugging Face cache) GPT-2's three files; returns their folder.

    Offline (``HF_HUB_OFFLINE=1``, no network, the Hub unreachable) and not cached: ``GPT2Unavailable``.
    cached_only: look in the cache and never connect (what a notebook does: it must not start a 550 MB download)."""
    from huggingface_hub import snapshot_download

    try:
        path = snapshot_download(repo, revision=revision, cache_dir=cache_dir, allow_patterns=list(FILES),
                                 local_files_only=cached_only)
    except OSError as e:
        if cached_only:
            raise _not_here() from None
        if not _network_error(e):  # a full disk, a cache folder that cannot be written: not the network's fault
            raise GPT2Unavailable(f"GPT-2's files could not be stored in the Hugging Face cache: {e}. Free some "
                                  f"space ({SIZE} are needed) or set HF_HOME to a folder you can write.") from None
        raise _unreachable(e) from None
    except Exception as e:  # the hub client raises many kinds (offline, connection, HTTP, gated): one message
        raise (_not_here() if cached_only else _unreachable(e)) from None
    folder = Path(path)
    missing = [f for f in FILES if not (folder / f).is_file()]
    if missing:
        raise GPT2Unavailable(f"the Hub's copy of {repo} lacks {', '.join(missing)}")
    return folder


def _network_error(e: OSError) -> bool:
    """A refused or failed connection (the offline guard, a DNS failure) rather than a local file problem."""
    import errno

    return e.errno in (None, errno.ECONNREFUSED, errno.ENETUNREACH, errno.EHOSTUNREACH, errno.ETIMEDOUT) \
        or "connect" in str(e).lower() or "network" in str(e).lower() or "resolve" in str(e).lower()


def _unreachable(e: Exception) -> GPT2Unavailable:
    offline = os.environ.get("HF_HUB_OFFLINE", "").lower() in ("1", "true", "yes", "on")
    why = "HF_HUB_OFFLINE is set" if offline else f"the Hugging Face Hub could not be reached ({type(e).__name__})"
    return GPT2Unavailable(f"GPT-2's weights are not on this machine and {why}. With the network on, `{FETCH}` "
                           f"fetches them once ({SIZE}, into the Hugging Face cache); every notebook then finds "
                           "them offline.")


def _not_here() -> GPT2Unavailable:
    return GPT2Unavailable(f"GPT-2's weights are not on this machine. `{FETCH}` fetches them once ({SIZE}, into the "
                           "Hugging Face cache; it needs the network; in Colab or on Binder, run `!python -m "
                           "helpers.gpt2` in a cell, then run the notebook again from this cell), and every notebook "
                           "then finds them offline.")


def load(repo: str = REPO, revision: str | None = None, cache_dir: str | Path | None = None,
         folder: str | Path | None = None, cached_only: bool = False) -> tuple[Transformer, "BPETokenizer"]:
    """GPT-2 and its tokenizer: from ``folder`` if given (or $GT_GPT2_DIR, a shared read-only folder on a class hub),
    else from the Hugging Face cache, downloading once (never, with ``cached_only``)."""
    folder = folder or os.environ.get("GT_GPT2_DIR")
    return load_dir(folder if folder else download(repo, revision, cache_dir, cached_only))


@dataclass
class Loaded:
    """What ``load_or_stand_in`` found: the model and its tokenizer, whether they are the real GPT-2, and a sentence
    for the top of a notebook saying which."""

    model: Transformer
    tokenizer: "BPETokenizer"
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


# --------------------------------------------------------------------------- the tokenizer
class BPETokenizer:
    """GPT-2's byte-level BPE, with the series' word tokenizer's interface (``helpers.tokens.Tokenizer``):
    ``vocab[i]`` is token i as text (" York", with its leading space), ``encode``, ``to_strings``, ``decode``,
    ``unknown_words`` (always none: every byte has a token). Case-sensitive; id 0 is "!", not ``<unk>``."""

    separator = ""  # tokens carry their own spaces: shown together, " York" after "New" reads "New York"

    def __init__(self, tok):
        self._tok = tok
        self.n_vocab = tok.get_vocab_size()
        # " York"; partial UTF-8 bytes show as "�"; special tokens ("<|endoftext|>") as themselves
        self.vocab = [tok.decode([i], skip_special_tokens=False) for i in range(self.n_vocab)]
        self.index: dict[str, int] = {}  # text -> id, as the word tokenizer's (the first id of a repeated "�")
        for i, text in enumerate(self.vocab):
            self.index.setdefault(text, i)

    def __len__(self) -> int:
        return self.n_vocab

    def ordinary_ids(self) -> torch.Tensor:
        """The ids of ordinary text tokens (n_ordinary,): every id but the special ones ("<|endoftext|>", a
        stand-in's "<unused i>"), which never occur inside a text. What random test sequences are drawn from."""
        special = set(self._tok.get_added_tokens_decoder())
        return torch.tensor([i for i in range(self.n_vocab) if i not in special], dtype=torch.long)

    def __contains__(self, word: str) -> bool:
        return len(self._tok.encode(word, add_special_tokens=False).ids) == 1

    def __repr__(self) -> str:
        return f"BPETokenizer(n_vocab={self.n_vocab:,}, byte-level BPE)"

    def encode(self, text: str, unknown: str = "unk") -> torch.Tensor:
        """Token ids (n,), dtype long. ``unknown`` is accepted for the series' interface; nothing is unknown."""
        if not isinstance(text, str):
            raise TypeError(f"the text must be a str, got {type(text).__name__}")
        return torch.tensor(self._tok.encode(text, add_special_tokens=False).ids, dtype=torch.long)

    def unknown_words(self, text: str) -> list[str]:
        return []

    def to_strings(self, ids) -> list[str]:
        out = []
        for i in torch.as_tensor(ids).reshape(-1).tolist():
            if not 0 <= i < self.n_vocab:
                raise IndexError(f"token id {i} is outside the vocabulary (ids run from 0 to {self.n_vocab - 1})")
            out.append(self.vocab[i])
        return out

    def decode(self, ids) -> str:
        return self._tok.decode(torch.as_tensor(ids).reshape(-1).tolist(), skip_special_tokens=False)


def tokenizer(path: str | Path) -> BPETokenizer:
    """GPT-2's tokenizer from a Hub ``tokenizer.json``."""
    from tokenizers import Tokenizer as HFTokenizer

    try:
        return BPETokenizer(HFTokenizer.from_file(str(path)))
    except Exception as e:  # tokenizers raises a plain Exception for a damaged file
        raise GPT2FileError(f"{path} is not a usable tokenizer file ({e}): delete it and run `{FETCH}` again") from None


# --------------------------------------------------------------------------- a stand-in, offline
def byte_level_bpe(text: str, vocab_size: int):
    """A byte-level BPE like GPT-2's (``tokenizers``: ByteLevel pre-tokenizer and decoder, all 256 bytes in the
    alphabet) trained on ``text`` to at most ``vocab_size`` tokens; ``.save(path)`` writes a Hub tokenizer.json."""
    from tokenizers import Tokenizer as HFTokenizer
    from tokenizers import decoders, models, pre_tokenizers, trainers

    tok = HFTokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator([text], trainers.BpeTrainer(vocab_size=vocab_size, show_progress=False,
                                                        initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    return tok


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


def main(argv: list[str] | None = None) -> int:
    """``bash run.sh gpt2 [--dir FOLDER]``: fetch GPT-2's files into the Hugging Face cache (or copy them into FOLDER,
    a shared read-only folder for a class hub: set GT_GPT2_DIR to it in every student's environment), then load
    them once to check them."""
    import argparse
    import shutil

    ap = argparse.ArgumentParser(prog="bash run.sh gpt2", description=main.__doc__)
    ap.add_argument("--dir", help="also copy the three files here (a shared folder for a class)")
    args = ap.parse_args(argv)
    try:
        folder = download()
        if args.dir:
            target = Path(args.dir)
            target.mkdir(parents=True, exist_ok=True)
            for f in FILES:
                # a new file, renamed over the old one: kernels that map the old one (GT_GPT2_DIR) keep reading it
                # whole, where rewriting it in place would pull pages out from under them
                shutil.copyfile(folder / f, target / f"{f}.partial")
                os.replace(target / f"{f}.partial", target / f)
            folder = target
        model, tok = load_dir(folder)
    except (GPT2Unavailable, GPT2FileError) as e:
        print(f"gpt2: {e}", file=sys.stderr)
        return 1
    except OSError as e:  # --dir somewhere this user cannot write, a full disk
        print(f"gpt2: could not write GPT-2's files into {args.dir}: {e.strerror or e}", file=sys.stderr)
        return 1
    print(f"GPT-2 is ready in {folder}: {model.n_params():,} parameters, {tok.n_vocab:,} tokens")
    return 0


if __name__ == "__main__":
    sys.exit(main())
