"""What one attention head costs, counted in multiplications and timed (notebook 10); and what combining a layer's
heads costs in each of the post's two forms, timed (notebook 05, at the end of this file).

"Transformers for software engineers" counts the multiplications of one head (matrix and dot products
only: the 1/sqrt(d_head) scaling and the softmax's exponentials are left out, as there):

usual version (the projections are lifted out of the loop over pairs of positions)
    q, k, v = W_Q x, W_K x, W_V x and o = W_O z     4 d_model d_head per position  -> 4 d_model d_head n_ctx
    S_ij = q_i . k_j and z_i = sum_j A_ij v_j        2 d_head per pair              -> 2 d_head n_ctx^2
    in all                                           2 d_head n_ctx (2 d_model + n_ctx)

circuits inside the loop (W_QK and W_OV kept in factored form, applied to every pair (i, j))
    W_Q x_i, W_K x_j, W_V x_j, W_O (A_ij W_V x_j)    4 d_model d_head per pair
    the dot product and the weight A_ij times v      2 d_head per pair
    in all                                           n_ctx^2 (4 d_model d_head + 2 d_head)

The text writes the second as n_ctx^2 (4 d_head d_model): its leading term; the 2 d_head n_ctx^2 left out
is exactly the pair work of the usual version. Both versions here compute every pair (i, j), also the
masked future ones, as performant implementations do.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass

import torch

from helpers.softmax import softmax


def _check_sizes(d_model: int, d_head: int, n_ctx: int) -> None:
    for name, value in (("d_model", d_model), ("d_head", d_head), ("n_ctx", n_ctx)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be a positive whole number, got {value!r}")


def usual_terms(d_model: int, d_head: int, n_ctx: int) -> dict[str, int]:
    """The usual head's multiplications by part: {"projections": 4 d_model d_head n_ctx, "pairs": 2 d_head n_ctx^2}."""
    _check_sizes(d_model, d_head, n_ctx)
    return {"projections": 4 * d_model * d_head * n_ctx, "pairs": 2 * d_head * n_ctx**2}


def usual_mults(d_model: int, d_head: int, n_ctx: int) -> int:
    """Multiplications of one head, projections once per position: 2 d_head n_ctx (2 d_model + n_ctx)."""
    return sum(usual_terms(d_model, d_head, n_ctx).values())


def formula(d_model: int, d_head: int, n_ctx: int) -> int:
    """The text's closed form 2 d_head n_ctx (2 d_model + n_ctx) (equal to ``usual_mults``)."""
    _check_sizes(d_model, d_head, n_ctx)
    return 2 * d_head * n_ctx * (2 * d_model + n_ctx)


def in_loop_mults(d_model: int, d_head: int, n_ctx: int) -> int:
    """Multiplications of one head with the factored circuits applied to every pair:
    n_ctx^2 (4 d_model d_head + 2 d_head)."""
    _check_sizes(d_model, d_head, n_ctx)
    return n_ctx**2 * (4 * d_model * d_head + 2 * d_head)


def quadratic_share(d_model: int, d_head: int, n_ctx: int) -> float:
    """The pair term's share of the usual cost: n_ctx / (2 d_model + n_ctx) (whatever d_head)."""
    t = usual_terms(d_model, d_head, n_ctx)
    return t["pairs"] / (t["projections"] + t["pairs"])


@dataclass(frozen=True)
class Head:
    """One head's weights in the post's shapes: W_Q, W_K, W_V (d_head, d_model), W_O (d_model, d_head)."""

    W_Q: torch.Tensor
    W_K: torch.Tensor
    W_V: torch.Tensor
    W_O: torch.Tensor


def random_head(d_model: int, d_head: int, seed: int = 0) -> Head:
    _check_sizes(d_model, d_head, 1)
    g = torch.Generator().manual_seed(seed)
    W = [torch.randn(d_head, d_model, generator=g) / d_model**0.5 for _ in range(3)]
    return Head(*W, torch.randn(d_model, d_head, generator=g) / d_head**0.5)


def usual_head(head: Head, x: torch.Tensor) -> torch.Tensor:
    """x (d_model, n) -> o (d_model, n): q, k, v once per position, then the pairs (every pair, no mask)."""
    d_head = head.W_Q.shape[0]
    q, k, v = head.W_Q @ x, head.W_K @ x, head.W_V @ x  # (d_head, n) each
    A = softmax(q.T @ k / d_head**0.5, dim=-1)  # (n, n): row i = query i
    return head.W_O @ (v @ A.T)  # z_i = sum_j A_ij v_j


def in_loop_head(head: Head, x: torch.Tensor) -> torch.Tensor:
    """The same o (d_model, n), with W_Q, W_K, W_V, W_O applied anew for every pair (i, j): for each query
    i, all keys j at once (a Python loop over i; each pair costs 4 d_model d_head + 2 d_head)."""
    d_head = head.W_Q.shape[0]
    n = x.shape[1]
    out = torch.empty_like(x)
    for i in range(n):
        q = head.W_Q @ x[:, i:i + 1].expand(-1, n)  # W_Q x_i, recomputed for every pair (d_head, n)
        s = (q * (head.W_K @ x)).sum(0) / d_head**0.5  # S_ij = (W_Q x_i) . (W_K x_j)
        a = softmax(s, dim=0)
        out[:, i] = (head.W_O @ ((head.W_V @ x) * a)).sum(1)  # sum_j W_O (A_ij W_V x_j)
    return out


def seconds(fn, *args, repeat: int = 3) -> float:
    """The fastest of ``repeat`` calls of fn(*args), in seconds (the least disturbed by other work)."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn(*args)
        best = min(best, time.perf_counter() - start)
    return best


def time_versions(sizes, d_head: int = 32, repeat: int = 3, seed: int = 0) -> list[dict]:
    """For each (d_model, n_ctx): counted multiplications and measured seconds of both versions."""
    rows = []
    for d_model, n_ctx in sizes:
        head = random_head(d_model, d_head, seed)
        x = torch.randn(d_model, n_ctx, generator=torch.Generator().manual_seed(seed))
        rows.append({"d_model": d_model, "n_ctx": n_ctx,
                     "usual_mults": usual_mults(d_model, d_head, n_ctx),
                     "in_loop_mults": in_loop_mults(d_model, d_head, n_ctx),
                     "usual_s": seconds(usual_head, head, x, repeat=repeat),
                     "in_loop_s": seconds(in_loop_head, head, x, repeat=repeat)})
    return rows


# The post's appendix models, and a long-context model where n_ctx >> d_model.
MODELS = {
    "GPT-2 Small": {"d_model": 768, "n_heads": 12, "d_head": 64, "n_ctx": 1024, "n_layers": 12},
    "GPT-3": {"d_model": 12288, "n_heads": 96, "d_head": 128, "n_ctx": 2048, "n_layers": 96},
    "long context (128k)": {"d_model": 4096, "n_heads": 32, "d_head": 128, "n_ctx": 131072, "n_layers": 32},
}


def model_attention_mults(d_model: int, n_heads: int, d_head: int, n_ctx: int, n_layers: int) -> int:
    """Every head of every layer on one full context: n_layers n_heads 2 d_head n_ctx (2 d_model + n_ctx)."""
    return n_layers * n_heads * formula(d_model, d_head, n_ctx)


# --------------------------------------------------------------------------- combining the heads (notebook 05)
# The post's reason for writing a layer's output as o = W_O R rather than sum_h W_O^h r^h: the two are equal, but
# one big matrix product runs faster than several small ones added up. Timed here, not assumed.


def heads_added(W_O: torch.Tensor, r: torch.Tensor) -> torch.Tensor:
    """sum_h W_O^h r^h: one small product per head, then added. W_O (n_heads, d_model, d_head), r (n_heads, d_head, n)
    -> o (d_model, n)."""
    o = W_O[0] @ r[0]
    for h in range(1, W_O.shape[0]):
        o = o + W_O[h] @ r[h]
    return o


def stacked(W_O: torch.Tensor, r: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The concatenated form's two matrices: [W_O^1 | ... | W_O^H] (d_model, n_heads d_head), stored once as a model
    stores it, and R, the results stacked (n_heads d_head, n) — a view of r, no copy. W_O (n_heads, d_model, d_head),
    r (n_heads, d_head, n)."""
    n_heads, d_model, d_head = W_O.shape
    if r.dim() != 3 or r.shape[:2] != (n_heads, d_head):
        raise ValueError(f"r has shape {tuple(r.shape)}, expected ({n_heads}, {d_head}, n) to match W_O's "
                         f"(n_heads, d_model, d_head) = {tuple(W_O.shape)}")
    W_O_cat = W_O.permute(1, 0, 2).reshape(d_model, n_heads * d_head).contiguous()
    return W_O_cat, r.reshape(n_heads * d_head, r.shape[-1])


def random_results(n_heads: int, d_model: int, d_head: int, n: int, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """Random W_O (n_heads, d_model, d_head) and r (n_heads, d_head, n), of the size a trained layer's have."""
    for name, value in (("n_heads", n_heads), ("d_model", d_model), ("d_head", d_head), ("n", n)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be a positive whole number, got {value!r}")
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(n_heads, d_model, d_head, generator=g) / d_head**0.5,
            torch.randn(n_heads, d_head, n, generator=g))


def time_combining(W_O: torch.Tensor, r: torch.Tensor, repeat: int = 15,
                   budget: float = 0.002) -> dict[str, dict[str, float] | list[tuple[float, float]]]:
    """Seconds per call of the two forms of a layer's output, W_O (n_heads, d_model, d_head), r (n_heads, d_head, n):

    "added"    sum_h W_O^h r^h (``heads_added``): n_heads small products and n_heads - 1 additions;
    "stacked"  W_O R (``stacked``): one product, with [W_O^1 | ... | W_O^H] made once, outside the clock.

    Each of ``repeat`` rounds times both forms, one right after the other (their order alternating), each over as
    many calls as last about ``budget`` seconds (at least one). Returns {"fastest": {form: seconds per call in its
    fastest round}, "median": {form: in its median round}, "runs": [(added, stacked) of every round]}. On a busy
    machine another process can take the core in the middle of a round: the fastest round is the one least
    disturbed, the median what a typical round got. A timing, not a count: it changes from run to run and machine
    to machine."""
    if not isinstance(repeat, int) or repeat < 1:
        raise ValueError(f"repeat must be a positive whole number, got {repeat!r}")
    W_O_cat, R = stacked(W_O, r)
    forms = {"added": lambda: heads_added(W_O, r), "stacked": lambda: W_O_cat @ R}
    calls = {}
    for name, fn in forms.items():  # the first call warms up; then as many calls as fill the budget
        fn()
        calls[name] = max(1, round(budget / max(seconds(fn, repeat=3), 1e-9)))
    runs = []
    for i in range(repeat):
        pair = {}
        for name in (("added", "stacked") if i % 2 == 0 else ("stacked", "added")):
            start = time.perf_counter()
            for _ in range(calls[name]):
                forms[name]()
            pair[name] = (time.perf_counter() - start) / calls[name]
        runs.append((pair["added"], pair["stacked"]))
    added, stacked_ = [a for a, _ in runs], [s for _, s in runs]
    return {"fastest": {"added": min(added), "stacked": min(stacked_)},
            "median": {"added": statistics.median(added), "stacked": statistics.median(stacked_)},
            "runs": runs}
