"""GPT-2 in the series' own Transformer (helpers/gpt2/), proved without the internet: a GPT-2-shaped checkpoint of
random weights written in the Hub's own layout and tensor names, with a byte-level BPE tokenizer file trained here in
the Hub's format, loaded by the series and by transformers' GPT2LMHeadModel (the reference): the same logits, the
same residual stream after every block, the same attention patterns; the tokenizer the same ids as `tokenizers`.
Offline, a damaged file, a wrong layout: one clear message each."""

from __future__ import annotations

import errno
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from helpers import gpt2
from helpers.model import names
from helpers.model.config import Config
from helpers.model.params import count_config
from helpers.model.transformer import Transformer
from helpers.tokens import prepare_prompt
from helpers.train import fresh_model

pytestmark = pytest.mark.slow  # GPT-2 written, served on 127.0.0.1, loaded, compared with transformers

transformers = pytest.importorskip("transformers")
TEXTS = ["In the beginning God created the heaven and the earth.", "The Empire State Building is in New",
         "  spaces,\ttabs and naïve UTF-8 ✓ 123"]


def _corpus() -> str:
    from helpers.corpus import load_text

    return load_text()[:200_000]


@pytest.fixture(scope="module")
def hub_dir(tmp_path_factory) -> Path:
    """config.json, model.safetensors (the Hub's tensor names, Conv1D (in, out) weights, c_attn fused) and
    tokenizer.json (a byte-level BPE trained here) of a small GPT-2 with random weights."""
    from safetensors.torch import save_file

    folder = tmp_path_factory.mktemp("gpt2_hub")
    tok = gpt2.byte_level_bpe(_corpus(), 400)
    tok.save(str(folder / "tokenizer.json"))
    config = transformers.GPT2Config(vocab_size=tok.get_vocab_size(), n_positions=32, n_embd=64, n_layer=2, n_head=4)
    torch.manual_seed(0)
    reference = transformers.GPT2LMHeadModel(config)
    with torch.no_grad():
        for p in reference.parameters():
            p.normal_(0.0, 0.3)  # larger than the usual init: every term of every layer shows in the output
    config.save_pretrained(folder)
    state = {k: v.contiguous() for k, v in reference.transformer.state_dict().items()}
    save_file(state, str(folder / "model.safetensors"))
    return folder


@pytest.fixture(scope="module")
def reference(hub_dir):
    return transformers.GPT2LMHeadModel.from_pretrained(hub_dir, attn_implementation="eager").eval()


@pytest.fixture(scope="module")
def ours(hub_dir):
    return gpt2.load_dir(hub_dir)


def test_the_config_and_the_parameter_count(hub_dir, ours):
    model, _ = ours
    cfg = model.cfg
    assert (cfg.activation, cfg.attn_biases, cfg.tied_unembed, cfg.layernorm) == ("gelu_tanh", True, True, True)
    assert model.n_params() == count_config(cfg)
    with torch.device("meta"):
        small = Transformer(gpt2.small_config())
    assert sum(p.numel() for p in small.parameters()) == count_config(small.cfg) == gpt2.N_PARAMS_SMALL


def test_logits_stream_and_patterns_equal_transformers(ours, reference):
    model, tok = ours
    for text in TEXTS:
        ids = tok.encode(text)[None]                                   # (1, n)
        with torch.no_grad():
            out = reference(ids, output_hidden_states=True, output_attentions=True)
            logits, cache = model.run_with_cache(ids)
        assert torch.allclose(logits.mT, out.logits, atol=1e-4, rtol=1e-4)      # (1, n, n_vocab) both ways
        for L in range(model.cfg.n_layers):
            x = cache[names.resid(2 * L)]                              # the stream entering block L
            assert torch.allclose(x.mT, out.hidden_states[L], atol=1e-4, rtol=1e-4)
            assert torch.allclose(cache[names.key(L, "A")], out.attentions[L], atol=1e-5)
        final = model.ln_final(cache[names.resid(2 * model.cfg.n_layers)])   # HF's last hidden state: after ln_f
        assert torch.allclose(final.mT, out.hidden_states[-1], atol=1e-4, rtol=1e-4)


def test_every_activation_inside_the_blocks_equals_transformers(ours, reference):
    """q, k, v, the result r, the MLP's hidden z and its output m, read from GPT2LMHeadModel's modules with forward
    hooks (row vectors, heads side by side) and compared with the series' cache (column vectors, heads apart)."""
    model, tok = ours
    ids = tok.encode(TEXTS[0])[None]
    seen = {}
    hooks = []
    for L, block in enumerate(reference.transformer.h):
        hooks += [block.attn.c_attn.register_forward_hook(lambda m, i, o, L=L: seen.__setitem__((L, "qkv"), o)),
                  block.attn.c_proj.register_forward_hook(lambda m, i, o, L=L: seen.__setitem__((L, "r"), i[0])),
                  block.mlp.act.register_forward_hook(lambda m, i, o, L=L: seen.__setitem__((L, "z"), o)),
                  block.mlp.c_proj.register_forward_hook(lambda m, i, o, L=L: seen.__setitem__((L, "m"), o))]
    try:
        with torch.no_grad():
            reference(ids)
            _, cache = model.run_with_cache(ids)
    finally:
        for h in hooks:
            h.remove()
    H, dh, D = model.cfg.n_heads, model.cfg.d_head, model.cfg.d_model
    close = lambda a, b: torch.allclose(a, b, atol=1e-4, rtol=1e-4)  # noqa: E731

    def heads_apart(rows):  # (1, n, H * d_head) rows -> (1, H, d_head, n) columns, as the series keeps them
        return rows.reshape(1, -1, H, dh).permute(0, 2, 3, 1)

    for L in range(model.cfg.n_layers):
        q, k, v = seen[(L, "qkv")].split(D, dim=-1)
        for name, theirs in (("q", q), ("k", k), ("v", v), ("r", seen[(L, "r")])):
            assert close(cache[names.key(L, name)], heads_apart(theirs)), (L, name)
        assert close(cache[names.key(L, "z")], seen[(L, "z")].mT) and close(cache[names.key(L, "m")], seen[(L, "m")].mT)


def test_weights_are_views_of_the_file_not_copies(hub_dir):
    from safetensors.torch import load_file

    state = load_file(str(hub_dir / "model.safetensors"))
    model = gpt2.from_hub_state(state, gpt2.config_from_hub(json.loads((hub_dir / "config.json").read_text())))
    same = lambda a, b: a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()  # noqa: E731
    hub = {"embed.W_E": "wte.weight", "pos_embed.W_pos": "wpe.weight", "ln_final.gamma": "ln_f.weight",
           "ln_final.beta": "ln_f.bias"}
    for L in range(model.cfg.n_layers):
        h, b = f"h.{L}.", f"blocks.{L}."
        hub |= {b + f"attn.{w}": h + "attn.c_attn.weight" for w in ("W_Q", "W_K", "W_V")}
        hub |= {b + f"attn.{w}": h + "attn.c_attn.bias" for w in ("b_Q", "b_K", "b_V")}
        hub |= {b + "attn.W_O": h + "attn.c_proj.weight", b + "attn.b_O": h + "attn.c_proj.bias",
                b + "mlp.W_1": h + "mlp.c_fc.weight", b + "mlp.b_1": h + "mlp.c_fc.bias",
                b + "mlp.W_2": h + "mlp.c_proj.weight", b + "mlp.b_2": h + "mlp.c_proj.bias",
                b + "ln_attn.gamma": h + "ln_1.weight", b + "ln_attn.beta": h + "ln_1.bias",
                b + "ln_mlp.gamma": h + "ln_2.weight", b + "ln_mlp.beta": h + "ln_2.bias"}
    ours = model.state_dict()
    assert set(ours) == set(hub)                                                # every weight, and no other
    assert all(same(ours[k], state[v]) for k, v in hub.items())                 # each a view of the file's tensor
    assert same(model.unembed.W_U, state["wte.weight"]) and "unembed.W_U" not in ours


def test_the_tokenizer_matches_tokenizers(hub_dir, ours):
    from tokenizers import Tokenizer

    _, tok = ours
    reference = Tokenizer.from_file(str(hub_dir / "tokenizer.json"))
    for text in TEXTS:
        ids = tok.encode(text)
        assert ids.tolist() == reference.encode(text).ids
        assert tok.decode(ids) == text
        # token by token, a character split across tokens (ï, ✓: several bytes) shows as "�": only ASCII joins back
        assert ("".join(tok.to_strings(ids)) == text) == text.isascii()
    prompt = prepare_prompt("The Empire State Building is in New", tok, n_ctx=4)
    assert prompt.dropped > 0 and len(prompt.ids) == 4 and not prompt.unknown and prompt.notice()
    assert TEXTS[1].endswith(prompt.shown) and prepare_prompt("in the beginning", tok).shown == "in the beginning"
    assert tok.vocab[int(tok.encode("!")[0])] == "!" and tok.unknown_words("anything") == []
    with pytest.raises(IndexError, match="outside the vocabulary"):
        tok.to_strings([tok.n_vocab])


# --- the biases: which fold away --------------------------------------------------------------------------

def test_b_K_drops_out_of_the_softmax_and_b_V_folds_into_b_O(ours):
    model, tok = ours
    ids = tok.encode(TEXTS[0])
    base = model(ids)
    attn = model.blocks[0].attn
    kept = {k: v.clone() for k, v in model.state_dict().items()}
    try:
        with torch.no_grad():
            attn.b_K.copy_(torch.randn_like(attn.b_K) * 3)           # q_i . b_K: the same for every key of row i
            assert torch.allclose(model(ids), base, atol=1e-4)
            folded = attn.b_O + torch.einsum("hdk,hk->d", attn.W_O, attn.b_V)   # b_O + sum_h W_O^h b_V^h
            attn.b_V.zero_()
            attn.b_O.copy_(folded)
            assert torch.allclose(model(ids), base, atol=1e-4)
    finally:
        model.load_state_dict(kept)


# --- bad files and no network ------------------------------------------------------------------------------

def _copy(hub_dir: Path, to: Path) -> Path:
    to.mkdir()
    for f in gpt2.FILES:
        (to / f).write_bytes((hub_dir / f).read_bytes())
    return to


@pytest.mark.parametrize("damage, error, message", [
    (lambda d: (d / "model.safetensors").write_bytes((d / "model.safetensors").read_bytes()[:5000]),
     gpt2.GPT2FileError, "model.safetensors is damaged or incomplete"),
    (lambda d: (d / "model.safetensors").unlink(), gpt2.GPT2Unavailable, "lacks model.safetensors.*bash run.sh gpt2"),
    (lambda d: (d / "config.json").write_text("{not json"), gpt2.GPT2FileError, "config.json is damaged"),
    (lambda d: (d / "config.json").write_text(json.dumps({"model_type": "llama"})), gpt2.GPT2FileError, "not GPT-2"),
    (lambda d: (d / "tokenizer.json").write_text("[]"), gpt2.GPT2FileError, "not a usable tokenizer file"),
])
def test_a_bad_folder_gets_one_clear_message(hub_dir, tmp_path, damage, error, message):
    folder = _copy(hub_dir, tmp_path / "copy")
    damage(folder)
    with pytest.raises(error, match=message):
        gpt2.load_dir(folder)


@pytest.mark.parametrize("change, message", [
    ({"tie_word_embeddings": False}, "tie_word_embeddings = False: a GPT-2 variant"),
    ({"scale_attn_weights": False}, "scale_attn_weights = False"),
    ({"scale_attn_by_inverse_layer_idx": True}, "scale_attn_by_inverse_layer_idx = True"),
    ({"n_embd": None}, "lacks GPT-2's sizes .*n_embd"),
    ({"layer_norm_epsilon": "1e-5"}, "layer_norm_epsilon"),
    ({"activation_function": "swish"}, "activation 'swish'"),
])
def test_a_config_the_series_cannot_compute_is_refused(hub_dir, change, message):
    hf = json.loads((hub_dir / "config.json").read_text()) | change
    with pytest.raises(gpt2.GPT2FileError, match=message):
        gpt2.config_from_hub(hf)
    with pytest.raises(gpt2.GPT2FileError, match="holds a list"):
        gpt2.config_from_hub([])


def test_a_tied_biased_model_survives_a_checkpoint_and_old_checkpoints_stay_as_they_were(ours, tmp_path):
    """A checkpoint of GPT-2's layout round-trips (W_U still tied, the biases kept); the config the series stores for
    its own models is the one stored in its shipped files, so a re-save writes the same bytes as before GPT-2."""
    from safetensors import safe_open

    from helpers.model import checkpoint

    model, tok = ours
    path = tmp_path / "gpt2.safetensors"
    checkpoint.save(model, path)
    again = checkpoint.load(path)
    assert again.cfg == model.cfg and again.cfg.tied_unembed and again.cfg.attn_biases
    ids = tok.encode(TEXTS[1])
    assert torch.allclose(again(ids), model(ids), atol=1e-6)
    assert again.unembed.W_U.data_ptr() == again.embed.W_E.data_ptr()          # still one matrix
    # what checkpoint.save stored for the series' own models before GPT-2's options existed (commit 43b3ae4)
    before = ('{"n_vocab": 64, "d_model": 64, "n_ctx": 32, "n_layers": 2, "n_heads": 2, "d_head": 32, "d_mlp": 0, '
              '"activation": "relu", "layernorm": false, "positional": true, "masked": true, "init_std": 0.02, '
              '"pos_init_std": null}')
    induction = checkpoint.load(checkpoint.named_path("induction_periodic"))   # notebook 09's earlier recipe
    assert json.dumps(induction.cfg.to_dict()) == before
    checkpoint.save(induction, tmp_path / "again.safetensors")
    with safe_open(str(tmp_path / "again.safetensors"), "pt") as f:
        assert f.metadata()["config"] == before


def test_a_checkpoint_of_another_layout_is_named(hub_dir):
    from safetensors.torch import load_file

    state = load_file(str(hub_dir / "model.safetensors"))
    cfg = gpt2.config_from_hub(json.loads((hub_dir / "config.json").read_text()))
    with pytest.raises(gpt2.GPT2FileError, match="no tensor 'h.1.mlp.c_fc.weight'"):
        gpt2.from_hub_state({k: v for k, v in state.items() if k != "h.1.mlp.c_fc.weight"}, cfg)
    with pytest.raises(gpt2.GPT2FileError, match="wte.weight has shape"):
        gpt2.from_hub_state(state | {"wte.weight": torch.zeros(3, 64)}, cfg)


BLOCKED = {"HF_ENDPOINT": "http://127.0.0.1:9",  # port 9 (discard): nothing listens, the connection is refused
           "HF_HUB_ETAG_TIMEOUT": "2", "HF_HUB_DOWNLOAD_TIMEOUT": "2"}


@pytest.mark.parametrize("env", [{"HF_HUB_OFFLINE": "1"}, BLOCKED, {"GT_OFFLINE": "1"}],
                         ids=["HF_HUB_OFFLINE", "connection refused", "huggingface.co unreachable"])
def test_offline_without_a_cached_copy_says_what_to_run(tmp_path, env):
    """The real hub client, in a fresh interpreter (it reads HF_HUB_OFFLINE when imported), with an empty cache; the
    third case asks huggingface.co itself, which the test suite's offline guard (tests/offline) refuses, as a machine
    without the network would."""
    code = DOWNLOAD
    guard = str(Path(__file__).resolve().parents[2] / "offline")   # the suite's offline guard, whatever GT_OFFLINE says
    path = os.pathsep.join([guard, os.environ.get("PYTHONPATH", "")])
    full = {**os.environ, **env, "HF_HOME": str(tmp_path / "hf"), "GT_GPT2_DIR": "", "PYTHONPATH": path}
    done = subprocess.run([sys.executable, "-c", code], env=full, capture_output=True, text=True, timeout=120)
    assert "MESSAGE" in done.stdout, done.stdout + done.stderr
    message = done.stdout.split("MESSAGE", 1)[1]
    assert "bash run.sh gpt2" in message and "550 MB" in message and "Traceback" not in done.stdout + done.stderr
    assert ("HF_HUB_OFFLINE is set" in message) == ("HF_HUB_OFFLINE" in env)


def _raising(error):
    def snapshot_download(*args, **kwargs):
        raise error
    return snapshot_download


def _httpx_error():
    import httpx2  # the HTTP client huggingface_hub uses; its errors are not OSErrors

    return httpx2.ConnectError("the connection was dropped mid-file")


@pytest.mark.parametrize("error, says", [
    (_httpx_error, "could not be reached (ConnectError)"),                     # a proxy, a dropped connection
    (lambda: OSError("Consistency check failed: file should be of size 548 MB"), "could not be reached"),
    (lambda: OSError(errno.ENOSPC, "No space left on device"), "Free some space"),
    (lambda: PermissionError(errno.EACCES, "Permission denied: '/root/.cache/huggingface'"), "set HF_HOME"),
], ids=["HTTP client error", "download cut short", "disk full", "cache not writable"])
def test_each_kind_of_download_failure_is_one_sentence_naming_its_cause(monkeypatch, error, says):
    """What huggingface_hub raises is sorted by its type (and an OSError by its errno), not by its message's words."""
    import huggingface_hub

    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    monkeypatch.setattr(huggingface_hub, "snapshot_download", _raising(error()))
    with pytest.raises(gpt2.GPT2Unavailable, match=re.escape(says)):
        gpt2.download()
    if "could not be reached" in says:   # asked for the cache only (a notebook), a network error names the command
        with pytest.raises(gpt2.GPT2Unavailable, match="weights are not on this machine. `bash run.sh gpt2`"):
            gpt2.download(cached_only=True)


# --- the interp tools on a model with biases ---------------------------------------------------------------

def test_direct_logit_attribution_counts_b_O(ours):
    from helpers.interp.attribution import direct_logit_attribution

    model, tok = ours
    ids = tok.encode(TEXTS[1])
    target = int(model(ids)[:, -1].argmax())
    dla = direct_logit_attribution(model, ids, target)
    terms = dla.terms()
    assert names.attn_bias(0) in terms and names.attn_bias(1) in terms and abs(terms[names.attn_bias(0)]) > 1e-3
    assert abs(sum(terms.values()) - float(model(ids)[target, -1].detach())) < 1e-3


def test_ablation_patching_paths_and_circuits_run_with_biases(ours):
    from helpers.interp.ablation import ablated
    from helpers.interp.circuits import composition_scores, ov_circuit, qk_circuit
    from helpers.interp.lens import logit_lens
    from helpers.interp.patching import logit_difference, restored
    from helpers.interp.paths import path_ablated

    model, tok = ours
    clean, corrupted = tok.encode("the heaven and the earth"), tok.encode("the heaven and the water")
    assert len(clean) == len(corrupted)
    base = model(clean)
    with ablated(model, heads=[(0, 1)]):
        assert not torch.allclose(model(clean), base)
    assert torch.equal(model(clean), base)                      # restored afterwards
    with path_ablated(model, [(0, 1)], (1, "k")):
        assert not torch.allclose(model(clean), base)
    moved = base[:, -1] - model(corrupted)[:, -1]              # the two words the changed word moves apart most
    metric = logit_difference(int(moved.argmax()), int(moved.argmin()))
    assert abs(restored(model, clean, corrupted, "x0", metric) - 1) < 1e-4     # the whole clean input: all of it
    assert abs(restored(model, clean, corrupted, "x4", metric) - 1) < 1e-4     # the final stream: all of it
    one_head = restored(model, clean, corrupted, names.head(1, 2), metric)
    assert -5 < one_head < 5 and abs(one_head - 1) > 1e-3                      # one head: some, not all
    assert qk_circuit(model, 1, 0).shape == ov_circuit(model, 1, 0).shape == (64, 64)
    assert composition_scores(model, "K").shape == (4, 4)
    lens = logit_lens(model, clean)
    assert torch.allclose(lens[-1], torch.softmax(base[:, -1], 0), atol=1e-5)


def test_gpt2_small_shapes_in_the_hub_layout_load_and_run(tmp_path, monkeypatch):
    """GPT-2 Small's own shapes (random weights cost the same bytes): written in the Hub's layout, found through
    GT_GPT2_DIR (a class hub's shared folder), 124,439,808 parameters, one forward pass."""
    folder = gpt2.write_random(tmp_path / "small")
    assert (folder / "model.safetensors").stat().st_size > 497_000_000          # float32, W_U stored once
    monkeypatch.setenv("GT_GPT2_DIR", str(folder))
    model, tok = gpt2.load()
    assert model.n_params() == gpt2.N_PARAMS_SMALL and model.cfg == gpt2.small_config()
    assert tok.n_vocab == 50257 and tok.vocab[-1].startswith("<unused")      # every id the model predicts is text
    ids = tok.encode("The Empire State Building is in New")
    with torch.no_grad():
        logits = model(ids)
    assert logits.shape == (50257, len(ids)) and torch.isfinite(logits).all()
    assert not any(p.requires_grad for p in model.parameters())                # for reading: no graph kept


# --- the download path: the real hub client against a stand-in Hub on 127.0.0.1 -----------------------------

DOWNLOAD = ("from helpers import gpt2\n"   # the download in a fresh interpreter, its one sentence printed
            "try:\n    gpt2.download()\nexcept gpt2.GPT2Unavailable as e:\n    print('MESSAGE', e)\n")


def _in_fresh_python(code: str, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], env={**os.environ, "GT_GPT2_DIR": "", **env},
                          capture_output=True, text=True, timeout=180, cwd=Path(__file__).resolve().parents[3])


def test_download_runs_the_hub_client_then_works_offline_from_its_cache(hub_dir, ours, tmp_path):
    from support.hub_standin import StandInHub

    hub = StandInHub(gpt2.REPO, hub_dir)
    try:
        code = ("from helpers import gpt2\nimport torch\nf = gpt2.download()\nm, t = gpt2.load_dir(f)\n"
                "print('FOLDER', f)\nprint('LOGIT', float(m(t.encode('In the beginning'))[7, -1]))\n")
        env = {"HF_ENDPOINT": hub.url, "HF_HOME": str(tmp_path / "hf")}
        online = _in_fresh_python(code, env)
        assert "FOLDER" in online.stdout, online.stdout + online.stderr
        folder = Path(online.stdout.split("FOLDER ", 1)[1].split("\n", 1)[0])
        assert str(tmp_path / "hf") in str(folder)                                   # the Hugging Face cache
        assert all((folder / f).read_bytes() == (hub_dir / f).read_bytes() for f in gpt2.FILES)
        assert {("GET", f"/{gpt2.REPO}/resolve/{hub.sha}/{f}") for f in gpt2.FILES} <= set(hub.requests)
        model, tok = ours
        logit = float(model(tok.encode("In the beginning"))[7, -1])
        printed = float(online.stdout.split("LOGIT ", 1)[1].split()[0])
        assert abs(printed - logit) < 1e-4                                           # the same model
        served = len(hub.requests)
        offline = _in_fresh_python(code, {**env, "HF_HUB_OFFLINE": "1"})             # the class, later, offline
        assert f"FOLDER {folder}" in offline.stdout, offline.stdout + offline.stderr
        assert len(hub.requests) == served                                           # nothing asked of the Hub
    finally:
        hub.close()


def test_run_sh_gpt2_copies_the_files_into_a_shared_folder(hub_dir, tmp_path):
    from support.hub_standin import StandInHub

    hub = StandInHub(gpt2.REPO, hub_dir)
    try:
        shared = tmp_path / "shared"
        done = subprocess.run([sys.executable, "-m", "helpers.gpt2", "--dir", str(shared)],
                              env={**os.environ, "HF_ENDPOINT": hub.url, "HF_HOME": str(tmp_path / "hf")},
                              capture_output=True, text=True, timeout=180)
        assert done.returncode == 0 and "GPT-2 is ready in" in done.stdout, done.stdout + done.stderr
        assert sorted(p.name for p in shared.iterdir()) == sorted(gpt2.FILES)
        not_a_folder = tmp_path / "not a folder"
        not_a_folder.write_text("")
        local = _in_fresh_python(DOWNLOAD, {"HF_ENDPOINT": hub.url, "HF_HOME": str(not_a_folder / "hf")})
        assert "could not be stored in the Hugging Face cache" in local.stdout, local.stdout + local.stderr
    finally:
        hub.close()
    blocked = tmp_path / "a file"
    blocked.write_text("")
    cannot = subprocess.run([sys.executable, "-m", "helpers.gpt2", "--dir", str(blocked / "gpt2")],
                            env={**os.environ, "GT_GPT2_DIR": "", "HF_HUB_OFFLINE": "1",
                                 "HF_HOME": str(tmp_path / "hf")},
                            capture_output=True, text=True, timeout=180)
    assert cannot.returncode == 1 and "could not write GPT-2's files into" in cannot.stderr, cannot.stderr
    assert "Traceback" not in cannot.stderr
    offline = subprocess.run([sys.executable, "-m", "helpers.gpt2"], capture_output=True, text=True, timeout=180,
                             env={**os.environ, "HF_HUB_OFFLINE": "1", "HF_HOME": str(tmp_path / "empty")})
    assert offline.returncode == 1 and "bash run.sh gpt2" in offline.stderr and "Traceback" not in offline.stderr


def test_the_explorers_take_gpt2_and_its_tokenizer(ours):
    """The series' explorers read GPT-2's byte-level tokens as they read words (one model, any text)."""
    from helpers.widgets.attention import HeadsExplorer
    from helpers.widgets.ladder import LadderExplorer, LensExplorer

    model, tok = ours
    explorers = [LensExplorer(model, tok, prompt=TEXTS[1]),
                 LadderExplorer({"GPT-2 (random)": model}, tok, prompt=TEXTS[1]),
                 HeadsExplorer(model, tok, text=TEXTS[1], layer=1)]
    for e in explorers:
        assert not e.last_error, e.last_error
        e.text.value = "Hello, world. Hello, wor"
        assert not e.last_error and "Hello" in e.last_state.get("prompt", e.last_state.get("text", ""))
    lens = explorers[0]
    assert lens.last_state["final"] == tok.vocab[int(model(tok.encode("Hello, world. Hello, wor"))[:, -1].argmax())]


def test_load_or_stand_in_says_which_model_it_gives(hub_dir, tmp_path):
    """With GPT-2's files: the real model, and a note saying so. Without them and offline: a GPT-2-shaped model of
    random weights, written once into the cache folder, and a note naming the command that fetches the real one."""
    code = ("from helpers import gpt2\nx = gpt2.load_or_stand_in()\n"
            "print('REAL', x.real, x.model.n_params(), x.tokenizer.n_vocab)\n"
            "print('NOTE', x.note)\n")
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache"), "HF_HOME": str(tmp_path / "hf"), "HF_HUB_OFFLINE": "1"}
    real = _in_fresh_python(code, {**env, "GT_GPT2_DIR": str(hub_dir)})
    assert "REAL True" in real.stdout and "the real weights" in real.stdout, real.stdout + real.stderr
    stand_in = _in_fresh_python(code, env)
    assert "REAL False" in stand_in.stdout, stand_in.stdout + stand_in.stderr
    _, n_params, n_vocab = stand_in.stdout.split("REAL ", 1)[1].split("\n", 1)[0].split()
    from helpers.model.params import count_config

    assert int(n_params) == count_config(gpt2.stand_in_config()) and int(n_vocab) == 2000
    note = stand_in.stdout.split("NOTE ", 1)[1]
    assert "Not the real GPT-2" in note and "bash run.sh gpt2" in note and "random weights" in note
    written = tmp_path / "cache" / "gentle-transformers" / "gpt2-stand-in" / "model.safetensors"
    assert written.is_file()
    stamp = written.stat().st_mtime_ns
    again = _in_fresh_python(code, env)                                 # written once: the second time only loads
    assert "REAL False" in again.stdout and written.stat().st_mtime_ns == stamp, again.stdout + again.stderr


def test_a_notebook_never_starts_the_download_but_finds_what_run_sh_fetched(hub_dir, tmp_path):
    """load_or_stand_in (notebook 11's first cell) looks in the cache only: with the Hub reachable and nothing cached
    it gives the stand-in without a request; after `download()` (what `bash run.sh gpt2` runs) it finds the real one."""
    from support.hub_standin import StandInHub

    hub = StandInHub(gpt2.REPO, hub_dir)
    try:
        code = "from helpers import gpt2\nx = gpt2.load_or_stand_in()\nprint('REAL', x.real)\n"
        env = {"HF_ENDPOINT": hub.url, "HF_HOME": str(tmp_path / "hf"), "XDG_CACHE_HOME": str(tmp_path / "cache")}
        first = _in_fresh_python(code, env)
        assert "REAL False" in first.stdout and not hub.requests, (first.stdout + first.stderr, hub.requests)
        fetched = _in_fresh_python("from helpers import gpt2\ngpt2.download()\n", env)
        assert fetched.returncode == 0 and hub.requests, fetched.stderr
        served = len(hub.requests)
        again = _in_fresh_python(code, env)
        assert "REAL True" in again.stdout and len(hub.requests) == served, again.stdout + again.stderr
    finally:
        hub.close()


def test_the_lens_explorer_names_tokens_and_fits_gpt2_smalls_25_states():
    """On a BPE the caption says "token" (a piece of a word), and the rise chart of GPT-2 Small's 25 states stays as
    narrow as a small model's 9 (no sideways scrolling in a notebook column)."""
    import re

    from helpers.widgets.ladder import LensExplorer

    cfg = gpt2.small_config()
    deep = Config(**{**cfg.to_dict(), "n_vocab": 300, "d_model": 24, "n_heads": 2, "d_mlp": 48, "n_ctx": 16})
    model = fresh_model(deep, 0).eval()
    assert deep.n_layers == 12

    class Pieces:                                              # a BPE-like tokenizer: no separator between tokens
        separator = ""
        vocab = [f"<{i}>" for i in range(300)]

        def encode(self, text, unknown="unk"):
            return torch.tensor([ord(c) % 300 for c in text])

        def to_strings(self, ids):
            return [self.vocab[int(i)] for i in ids]

        def unknown_words(self, text):
            return []

    e = LensExplorer(model, Pieces(), prompt="abc")
    assert not e.last_error, e.last_error
    assert "likeliest next token" in e.caption.value and "next word" not in e.caption.value
    widths = [float(w) for w in re.findall(r'<svg[^>]*width="([\d.]+)"', e.view.value)]
    assert len(widths) == 2 and max(widths) <= 620, widths
