"""GPT-2's three files from the Hugging Face Hub (``huggingface_hub``: its cache, its progress bar), or one sentence
saying why not; ``bash run.sh gpt2`` (``main``) fetches them ahead of a class."""

from __future__ import annotations

import errno
import os
import shutil
import sys
from pathlib import Path

from helpers.gpt2.convert import FETCH, FILES, SIZE, load_dir
from helpers.gpt2.errors import GPT2FileError, GPT2Unavailable
from helpers.gpt2.tokenizer import BPETokenizer
from helpers.model.transformer import Transformer

REPO = "openai-community/gpt2"  # GPT-2 Small on the Hugging Face Hub
LOCAL_ERRNOS = (errno.ENOSPC, errno.EDQUOT, errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOTDIR, errno.EISDIR,
                errno.EEXIST, errno.ENAMETOOLONG)  # a cache folder this machine cannot write: not the Hub's fault


def download(repo: str = REPO, revision: str | None = None, cache_dir: str | Path | None = None,
             cached_only: bool = False) -> Path:
    """Fetch (or find in the Hugging Face cache) GPT-2's three files; returns their folder.

    Offline (``HF_HUB_OFFLINE=1``, no network, the Hub unreachable) and not cached: ``GPT2Unavailable``.
    cached_only: look in the cache and never connect (what a notebook does: it must not start a 550 MB download)."""
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import HfHubHTTPError, LocalEntryNotFoundError

    try:
        path = snapshot_download(repo, revision=revision, cache_dir=cache_dir, allow_patterns=list(FILES),
                                 local_files_only=cached_only)
    except (LocalEntryNotFoundError, HfHubHTTPError) as e:
        # not in the cache, and the Hub not asked (cached_only, HF_HUB_OFFLINE), unreachable, or answering an error
        raise (_not_here() if cached_only else _unreachable(e)) from None
    except OSError as e:
        if e.errno in LOCAL_ERRNOS:  # a full disk, a cache folder that cannot be written: not the network's fault
            raise GPT2Unavailable(f"GPT-2's files could not be stored in the Hugging Face cache: {e}. Free some "
                                  f"space ({SIZE} are needed) or set HF_HOME to a folder you can write.") from None
        raise (_not_here() if cached_only else _unreachable(e)) from None  # e.g. a download cut short
    except Exception as e:  # the HTTP client's own errors (a proxy, a connection dropped mid-file): the network's
        raise (_not_here() if cached_only else _unreachable(e)) from None
    folder = Path(path)
    missing = [f for f in FILES if not (folder / f).is_file()]
    if missing:
        raise GPT2Unavailable(f"the Hub's copy of {repo} lacks {', '.join(missing)}")
    return folder


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
         folder: str | Path | None = None, cached_only: bool = False) -> tuple[Transformer, BPETokenizer]:
    """GPT-2 and its tokenizer: from ``folder`` if given (or $GT_GPT2_DIR, a shared read-only folder on a class hub),
    else from the Hugging Face cache, downloading once (never, with ``cached_only``)."""
    folder = folder or os.environ.get("GT_GPT2_DIR")
    return load_dir(folder if folder else download(repo, revision, cache_dir, cached_only))


def main(argv: list[str] | None = None) -> int:
    """``bash run.sh gpt2 [--dir FOLDER]``: fetch GPT-2's files into the Hugging Face cache (or copy them into FOLDER,
    a shared read-only folder for a class hub: set GT_GPT2_DIR to it in every student's environment), then load
    them once to check them."""
    import argparse

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

