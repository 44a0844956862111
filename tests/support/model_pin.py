"""Fingerprints of every shipped checkpoint's activations, and of the interventions' outputs, on fixed inputs: the
pin that a change inside the model (its hook points, its files' layout) leaves everything a learner sees as it was.

    python tests/support/model_pin.py --write   # only when the model's numbers are meant to change (say why)

tests/unit/model/test_model_pin.py compares a fresh run with tests/support/model_pin.json. A fingerprint is each
activation's shape, its sum, the sum of its absolute values and 16 entries at fixed places: a change of any weight,
any activation's formula or any intervention's effect moves them, while another CPU's rounding (about 1e-6 relative)
does not.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import torch

from helpers.model import checkpoint, names

PIN = Path(__file__).with_name("model_pin.json")


def fingerprint(t: torch.Tensor) -> dict:
    t = t.detach().double()
    flat = t.flatten()
    finite = flat.isfinite()
    safe = torch.where(finite, flat, torch.zeros_like(flat))
    g = torch.Generator().manual_seed(flat.numel())
    at = torch.randint(0, flat.numel(), (16,), generator=g)
    return {"shape": list(t.shape), "sum": float(safe.sum()), "abs": float(safe.abs().sum()),
            "inf": int((~finite).sum()), "at": [float(v) if finite[i] else str(float(v)) for i, v in zip(at, flat[at])]}


def tokens_for(model, seed: int = 0, batch: int = 3) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return torch.randint(0, model.cfg.n_vocab, (batch, model.cfg.n_ctx), generator=g)


def fingerprints(only: list[str] | None = None, tamper=None) -> dict:
    """{checkpoint: {activation or intervention: fingerprint}} for every shipped checkpoint (or ``only`` these);
    ``tamper(model)``, if given, changes each model after loading (a test that the pin notices)."""
    from helpers.interp.ablation import ablated
    from helpers.interp.paths import path_ablated
    from helpers.interp.patching import patch_heads, patched, logit_difference
    from helpers.interp.lens import logit_lens

    out = {}
    for path in sorted(checkpoint.checkpoints_dir().glob("*.safetensors")):
        if only is not None and path.stem not in only:
            continue
        model = checkpoint.load(path)
        if tamper is not None:
            tamper(model)
        t = tokens_for(model)
        logits, cache = model.run_with_cache(t)
        entry = {k: fingerprint(v) for k, v in cache.items() if isinstance(v, torch.Tensor) and k != names.TOKENS}
        single = model.run_with_cache(t[0])[1]
        entry["single:" + names.LOGITS] = fingerprint(single[names.LOGITS])
        entry["lens"] = fingerprint(logit_lens(model, t))
        cfg = model.cfg
        if cfg.n_layers:
            with torch.no_grad():
                with ablated(model, heads=[(0, cfg.n_heads - 1)]):
                    entry["ablated head"] = fingerprint(model(t))
                with ablated(model, heads=[(0, 0)], how="mean", reference=tokens_for(model, 1)):
                    entry["mean-ablated head"] = fingerprint(model(t))
                if model.blocks[0].mlp is not None:
                    with ablated(model, neurons=[(0, 3), (0, 5)]):
                        entry["ablated neurons"] = fingerprint(model(t))
                with path_ablated(model, (0, 0), to="logits"):
                    entry["path logits"] = fingerprint(model(t))
                if cfg.n_layers > 1:
                    for kind in ("q", "k", "v"):
                        with path_ablated(model, [(0, 0), (0, 1)], to=(1, kind)):
                            entry[f"path {kind}"] = fingerprint(model(t))
                    with path_ablated(model, (0, 1), to=(1, 0, "k")):
                        entry["path one reader"] = fingerprint(model(t))
                    if model.blocks[0].mlp is not None:
                        with path_ablated(model, (0, 1), to=(0, "mlp")):
                            entry["path mlp"] = fingerprint(model(t))
                clean, bad = t[:1], t[:1].clone()
                bad[0, 2] = (bad[0, 2] + 1) % cfg.n_vocab
                _, clean_cache = model.run_with_cache(clean)
                last = len(model.run_with_cache(clean)[1].resid_names) - 1
                with patched(model, clean_cache, [names.head(0, 0), names.resid(last)], positions=[2, -1]):
                    entry["patched"] = fingerprint(model(bad))
                with patched(model, clean_cache, "x0", positions=[2]):
                    entry["patched x0"] = fingerprint(model(bad))
                right, wrong = int(logits[0, :, -1].argmax()), int(logits[0, :, -1].argmin())
                metric = logit_difference(right, wrong)
                # patch_heads gives fractions of the gap between the clean and the corrupted run, here as small as
                # 0.003 against a metric of about 20 (one token changed well before the end), so another CPU's
                # rounding (~1e-5 of a logit) moved a fraction by 1e-3 (an Intel Xeon with AVX-512 FP16,
                # 2026-12-06). Pinned: each fraction times the gap, the logit difference each patch restores.
                gap = metric(model(clean)) - metric(model(bad))
                try:
                    entry["patch_heads"] = fingerprint(patch_heads(model, clean, bad, metric) * gap)
                except ValueError:
                    pass
        out[path.stem] = entry
    return out


def compare(old: dict, new: dict, rtol: float = 1e-4, atol: float = 1e-4) -> list[str]:
    problems = []
    for ck in sorted(set(old) | set(new)):
        if ck not in old or ck not in new:
            problems.append(f"{ck}: in {'the pin' if ck in old else 'this run'} only")
            continue
        a, b = old[ck], new[ck]
        for key in sorted(set(a) | set(b)):
            if key not in a or key not in b:
                problems.append(f"{ck} {key}: in {'the pin' if key in a else 'this run'} only")
                continue
            x, y = a[key], b[key]
            if x["shape"] != y["shape"] or x["inf"] != y["inf"]:
                problems.append(f"{ck} {key}: shape/infinities {x['shape']}/{x['inf']} -> {y['shape']}/{y['inf']}")
                continue
            scale = max(1.0, x["abs"] / max(1, torch.Size(x["shape"]).numel()))
            # sums are held to atol relative to their size, as entries are, but never to less than atol itself: the
            # smallest fingerprints (patch_heads, logit differences of about 0.004 restored out of logits near 20)
            # move by a float32 step of those logits (1.9e-6) on another CPU, more than atol x 0.004
            total = max(1.0, x["abs"])
            pairs = [(x["sum"], y["sum"], total), (x["abs"], y["abs"], total)] + \
                [(u, v, scale) for u, v in zip(x["at"], y["at"])]
            for u, v, size in pairs:
                if isinstance(u, str) or isinstance(v, str):
                    if u != v:
                        problems.append(f"{ck} {key}: {u} -> {v}")
                        break
                elif abs(u - v) > atol * size + rtol * abs(u):
                    problems.append(f"{ck} {key}: {u!r} -> {v!r}")
                    break
    return problems


if __name__ == "__main__":
    torch.set_num_threads(1)
    if "--write" in sys.argv:
        PIN.write_text(json.dumps(fingerprints(), indent=0, sort_keys=True) + "\n")
        print(f"wrote {PIN}")
    else:
        print("\n".join(compare(json.loads(PIN.read_text()), fingerprints())) or "same")
