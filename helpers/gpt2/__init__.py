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

The package, by idea: ``errors`` (the two one-sentence errors), ``convert`` (config.json and the weights to the
series' Transformer), ``tokenizer`` (the byte-level BPE), ``hub`` (fetching the files; ``bash run.sh gpt2``) and
``stand_in`` (a GPT-2 of random weights written here, for offline use). ``download`` fetches the three files with
``huggingface_hub`` (its progress bar, its cache); without the network and without a cached copy it raises
``GPT2Unavailable``, one sentence naming the command that fetches the files and their size, never the hub client's
traceback. ``tokenizer`` wraps GPT-2's byte-level BPE (Hugging Face
``tokenizers``) so that ``prepare_prompt``, the explorers and the interp tools take it as they take the series'
word tokenizer.
"""

from helpers.gpt2.convert import (FETCH, FILES, HUB_ACTIVATIONS, N_PARAMS_SMALL, SIZE, config_from_hub,
                                  from_hub_state, load_dir, skeleton, small_config)
from helpers.gpt2.errors import GPT2FileError, GPT2Unavailable
from helpers.gpt2.hub import REPO, download, load, main
from helpers.gpt2.stand_in import Loaded, load_or_stand_in, stand_in_config, write_random
from helpers.gpt2.tokenizer import BPETokenizer, byte_level_bpe, tokenizer

__all__ = ["BPETokenizer", "FETCH", "FILES", "GPT2FileError", "GPT2Unavailable", "HUB_ACTIVATIONS", "Loaded",
           "N_PARAMS_SMALL", "REPO", "SIZE", "byte_level_bpe", "config_from_hub", "download", "from_hub_state", "load",
           "load_dir", "load_or_stand_in", "main", "skeleton", "small_config", "stand_in_config", "tokenizer",
           "write_random"]
