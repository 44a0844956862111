"""Exercises of notebook 10: a head's two circuits (before the notebook computes them), a K-composition
score (before the notebook says which side reads), and the cost of a causal head that skips the masked
pairs (which the notebook never counts). Each check calls the learner's function first, on cases the
notebook does not show, and names the usual mistake."""

from __future__ import annotations

import torch

from helpers.checks.base import ExerciseError, call, close, exercise, named, number_result, passed, tensor_result
from helpers.lessons.cost import usual_terms
from helpers.interp.scores import induction_mask, previous_token_mask


def _close(a: torch.Tensor, b: torch.Tensor) -> bool:
    return close(a, b, atol=1e-4, rtol=1e-4)


def _head(seed: int, d_model: int = 7, d_head: int = 3):
    """One random head in the post's shapes: W_Q, W_K, W_V (d_head, d_model), W_O (d_model, d_head)."""
    g = torch.Generator().manual_seed(seed)
    W_Q, W_K, W_V = (torch.randn(d_head, d_model, generator=g) for _ in range(3))
    return W_Q, W_K, W_V, torch.randn(d_model, d_head, generator=g)


CIRCUIT_HELPERS = ("helpers.interp.circuits.qk_circuit", "helpers.interp.circuits.ov_circuit")


@exercise(answered_by=CIRCUIT_HELPERS)
def check_head_circuits(fn) -> bool:
    """fn(W_Q, W_K, W_V (d_head, d_model), W_O (d_model, d_head)) -> (W_QK, W_OV), both (d_model, d_model):
    W_QK = W_Q^T W_K and W_OV = W_O W_V. Tried on heads of odd sizes (d_model 7 and 5, d_head 3 and 2)."""
    what = named(fn, "head_circuits", "(W_Q, W_K, W_V, W_O)")
    for seed, (d_model, d_head) in enumerate(((7, 3), (5, 2), (7, 3))):
        W_Q, W_K, W_V, W_O = _head(seed, d_model, d_head)
        QK, OV = W_Q.T @ W_K, W_O @ W_V
        out = call(fn, W_Q, W_K, W_V, W_O, what=what, forbid=CIRCUIT_HELPERS)
        if isinstance(out, torch.Tensor) and tuple(out.shape) == (2, d_model, d_model):
            out = tuple(out)                                   # torch.stack([W_QK, W_OV]): the two, stacked
        if not (isinstance(out, (tuple, list)) and len(out) == 2):
            raise ExerciseError(f"{what} should return two matrices, (W_QK, W_OV); got "
                                f"{'None' if out is None else type(out).__name__}.")
        qk, ov = out
        square = (d_model, d_model)
        if all(isinstance(m, torch.Tensor) and tuple(m.shape) == square for m in out) and \
                _close(qk, OV) and _close(ov, QK):
            raise ExerciseError(f"{what} returns the two circuits in the wrong order: (W_QK, W_OV) is asked for, "
                                "W_QK = W_Q^T W_K first.")
        if isinstance(qk, torch.Tensor) and tuple(qk.shape) == (d_head, d_head):
            raise ExerciseError(f"W_QK from {what} has shape (d_head, d_head) = {(d_head, d_head)}: that is "
                                "W_Q W_K^T (or W_K W_Q^T). The circuit acts on the stream, x_i^T W_QK x_j with "
                                "q_i = W_Q x_i: W_QK = W_Q^T W_K, (d_model, d_model).")
        qk = tensor_result(qk, square, f"W_QK from {what}", "W_QK maps the stream to the stream.")
        if _close(qk, QK.T):
            raise ExerciseError(f"W_QK from {what} is W_K^T W_Q, the transpose: query and key are swapped. "
                                "S_ij = q_i^T k_j = x_i^T (W_Q^T W_K) x_j, the query's x_i on the left.")
        if _close(qk, QK / d_head**0.5):
            raise ExerciseError(f"W_QK from {what} includes 1/sqrt(d_head): that scaling belongs to the scores S, "
                                "not to the circuit. W_QK = W_Q^T W_K.")
        if not _close(qk, QK):
            raise ExerciseError(f"W_QK from {what} differs from W_Q^T W_K on a random head: "
                                "q_i^T k_j = (W_Q x_i)^T (W_K x_j) = x_i^T W_Q^T W_K x_j.")
        if isinstance(ov, torch.Tensor) and tuple(ov.shape) == (d_head, d_head):
            if _close(ov, W_V @ W_O):
                raise ExerciseError(f"W_OV from {what} is W_V W_O, shape (d_head, d_head): the order is reversed. "
                                    "The value W_V x_j comes first, then W_O maps it back to the stream: "
                                    "W_OV = W_O W_V.")
        ov = tensor_result(ov, square, f"W_OV from {what}", "W_OV maps the stream to the stream.")
        if _close(ov, OV.T):
            raise ExerciseError(f"W_OV from {what} is (W_O W_V)^T = W_V^T W_O^T: transposed. Column vectors: "
                                "attending to x_j writes W_O (W_V x_j), so W_OV = W_O W_V with no transposes.")
        if not _close(ov, OV):
            raise ExerciseError(f"W_OV from {what} differs from W_O W_V on a random head. Attending to x_j writes "
                                "W_O (W_V x_j): the circuit is the product W_O W_V.")
    return passed(f"{what} = (W_Q^T W_K, W_O W_V) on 3 random heads of odd sizes (each of rank <= d_head).")


def _frobenius_ratio(M: torch.Tensor, W: torch.Tensor) -> float:
    return float(torch.linalg.matrix_norm(M @ W) / (torch.linalg.matrix_norm(M) * torch.linalg.matrix_norm(W)))


COMPOSITION_HELPERS = ("helpers.interp.circuits.composition_score", "helpers.interp.circuits.composition_scores")


@exercise(answered_by=COMPOSITION_HELPERS)
def check_k_composition(fn) -> bool:
    """fn(W_QK (d_model, d_model) of the later head, W_OV (d_model, d_model) of the earlier) -> a number in [0, 1]:
    ||W_QK W_OV||_F / (||W_QK||_F ||W_OV||_F). The helpers that compute it are refused."""
    what = named(fn, "k_composition", "(W_QK, W_OV)")
    for seed in range(3):
        g = torch.Generator().manual_seed(100 + seed)
        d, r = 8 + seed, 2
        W_QK = torch.randn(d, r, generator=g) @ torch.randn(r, d, generator=g) * 3
        W_OV = torch.randn(d, r, generator=g) @ torch.randn(r, d, generator=g) * 0.5
        right = _frobenius_ratio(W_QK, W_OV)
        out = number_result(call(fn, W_QK, W_OV, what=what, forbid=COMPOSITION_HELPERS), what)
        if abs(out - right) < 1e-4:
            continue
        if abs(out - float(torch.linalg.matrix_norm(W_QK @ W_OV))) < 1e-3 * max(1.0, abs(out)):
            raise ExerciseError(f"{what} = ||W_QK W_OV||_F without normalisation: it grows with the size of the "
                                "weights. Divide by ||W_QK||_F ||W_OV||_F so that the score lies in [0, 1].")
        if abs(out - _frobenius_ratio(W_OV, W_QK)) < 1e-4:
            raise ExerciseError(f"{what} multiplies on the wrong side (W_OV W_QK). The key reads what the earlier "
                                "head wrote: x_i^T W_QK (W_OV x_j), so the product is W_QK W_OV.")
        if abs(out - _frobenius_ratio(W_QK.T, W_OV)) < 1e-4:
            raise ExerciseError(f"{what} uses W_QK^T W_OV: that is Q-composition (the query side reads). For K, the "
                                "earlier head's output enters on the key side: W_QK W_OV.")
        norm = torch.linalg.matrix_norm
        if abs(out - float(norm(W_QK @ W_OV) ** 2 / (norm(W_QK) ** 2 * norm(W_OV) ** 2))) < 1e-4:
            raise ExerciseError(f"{what} squares the norms; the score is the plain ratio "
                                "||W_QK W_OV||_F / (||W_QK||_F ||W_OV||_F).")
        if abs(out - float(norm(W_QK * W_OV) / (norm(W_QK) * norm(W_OV)))) < 1e-4:
            raise ExerciseError(f"{what} multiplies entry by entry (W_QK * W_OV); the composition is the matrix "
                                "product, W_QK @ W_OV: what the earlier head writes, read by the later head's keys.")
        spectral = float(torch.linalg.matrix_norm(W_QK @ W_OV, ord=2)
                         / (torch.linalg.matrix_norm(W_QK, ord=2) * torch.linalg.matrix_norm(W_OV, ord=2)))
        if abs(out - spectral) < 1e-4:
            raise ExerciseError(f"{what} uses the spectral norm (ord=2, the largest singular value); the score uses "
                                "the Frobenius norm, torch.linalg.matrix_norm's default.")
        raise ExerciseError(f"{what} gives {out:.4f} on a random pair where the score is {right:.4f}: "
                            "||W_QK W_OV||_F / (||W_QK||_F ||W_OV||_F), torch.linalg.matrix_norm is Frobenius.")
    return passed(f"{what} matches the Frobenius ratio on 3 random pairs of rank-2 circuits.")


def _causal_mults(d_model: int, d_head: int, n_ctx: int) -> int:
    """One causal head that skips the masked pairs: 4 d_model d_head n_ctx + 2 d_head n_ctx (n_ctx + 1) / 2."""
    return 4 * d_model * d_head * n_ctx + d_head * n_ctx * (n_ctx + 1)


COST_HELPERS = ("helpers.lessons.cost.usual_mults", "helpers.lessons.cost.formula", "helpers.lessons.cost.usual_terms",
                "helpers.lessons.cost.in_loop_mults")


@exercise(answered_by=())
def check_causal_mults(fn) -> bool:
    """fn(d_model, d_head, n_ctx) -> int: the multiplications of one head that computes only the pairs the
    causal mask keeps (j <= i). No helper counts this; the helpers that count every pair are refused."""
    what = named(fn, "causal_mults", "(d_model, d_head, n_ctx)")
    for d_model, d_head, n_ctx in ((10, 3, 7), (768, 64, 1024), (64, 32, 201), (5, 2, 1)):
        right = _causal_mults(d_model, d_head, n_ctx)
        out = number_result(call(fn, d_model, d_head, n_ctx, what=what, forbid=COST_HELPERS), what)
        if out == right:
            continue
        sizes = f"(d_model, d_head, n_ctx) = {(d_model, d_head, n_ctx)}"
        if not out.is_integer():
            raise ExerciseError(f"{what} for {sizes} gives {out}, not a whole number: n_ctx^2 / 2 is not the number "
                                "of pairs j <= i. Count them: 1 + 2 + ... + n_ctx = n_ctx (n_ctx + 1) / 2.")
        t = usual_terms(d_model, d_head, n_ctx)
        projections, n = t["projections"], n_ctx
        if out == projections + t["pairs"]:
            raise ExerciseError(f"{what} for {sizes} is the usual count, {right + d_head * n * (n - 1)}: it computes "
                                "all n_ctx^2 pairs, also the future keys j > i that the mask throws away. Count "
                                "only the pairs j <= i.")
        if out == projections + d_head * n * (n - 1):
            raise ExerciseError(f"{what} for {sizes} leaves out the diagonal: a query also attends to its own "
                                "position (j = i). The pairs j <= i number n_ctx (n_ctx + 1) / 2.")
        if out == projections + d_head * n * n:
            raise ExerciseError(f"{what} for {sizes} takes n_ctx^2 / 2 pairs; the pairs j <= i are "
                                "n_ctx (n_ctx + 1) / 2 (the diagonal is kept whole).")
        if out == projections + d_head * n * (n + 1) // 2:
            raise ExerciseError(f"{what} for {sizes} counts one d_head per pair; there are two: the dot product "
                                "q_i . k_j and the weighted sum A_ij v_j.")
        if out == right - projections:
            raise ExerciseError(f"{what} for {sizes} leaves out the projections: q, k, v and W_O z are still "
                                "computed once per position, 4 d_model d_head n_ctx — the mask does not change them.")
        if out == right - projections // 4:
            raise ExerciseError(f"{what} for {sizes} counts three projections; W_O is the fourth (d_model d_head "
                                "per position).")
        if out == projections // n + d_head * n * (n + 1):
            raise ExerciseError(f"{what} for {sizes}: the projections are 4 d_model d_head *per position*; "
                                "multiply by n_ctx.")
        raise ExerciseError(f"{what} for {sizes} gives {out:.0f}; expected {right}. The projections don't change "
                            "(4 d_model d_head per position); the pair work is 2 d_head for each pair j <= i.")
    return passed(f"{what} = 4 d_model d_head n_ctx + d_head n_ctx (n_ctx + 1) for 4 sizes, GPT-2 Small's head "
                  "among them.")


# --------------------------------------------------------------------------- 10.4: the induction circuit by hand
EXPECTED_BLOCKS = {"W_QK0": ("POS", "POS"), "W_OV0": ("PREV", "TOK"), "W_QK1": ("TOK", "PREV"), "W_OV1": ("OUT", "TOK")}
UNSEEN_SEED = 4242  # the check's repeated sequences: neither the trained model nor the notebook has seen them
SHARE_NEEDED = 0.7  # of the trained model's drop in the loss on the repeat


def _entries(M: torch.Tensor, rows, cols) -> float:
    """The mean of M[rows[k], cols[k]] over k: how strongly a circuit pairs what it should pair."""
    return float(M[torch.as_tensor(rows), torch.as_tensor(cols)].mean())


def _blocks_said(M: torch.Tensor, L) -> tuple[str, str]:
    from helpers.lessons.by_hand import main_block

    return main_block(M, L)[:2]


def _weak_or_elsewhere(A: torch.Tensor, mask: torch.Tensor, head: str, key: str, entries: str, small: str = "") -> str:
    """A head that misses its key, A (batch, n, n), mask (n, n) or (batch, n, n) of the wanted keys: its scores are
    too small (the wanted key is the favourite but takes little weight), or its weight goes elsewhere."""
    mask = mask.expand_as(A)
    rows = mask.any(-1)  # (batch, n): the queries that have a wanted key
    weight = float((A * mask).sum(-1)[rows].mean())
    favourite = float(mask.gather(-1, A.argmax(-1, keepdim=True))[..., 0][rows].float().mean())
    if favourite > 0.9:
        return (f"{head} prefers {key} but gives it only {weight:.2f} of its weight on average: the scores are too "
                "small. The model divides each score x_i^T W_QK x_j by sqrt(d_head) = 8 before the softmax; a key "
                f"10 above the rest takes almost all the weight.{small}")
    return f"{head} puts only {weight:.2f} of its weight on {key}, on average. {entries}, the other entries 0."


def _layer0_wrong(QK0: torch.Tensor, A0: torch.Tensor, L) -> str:
    """Why layer 0's head does not attend to the previous position (A0: (batch, n, n))."""
    r, c = _blocks_said(QK0, L)
    if not r:
        return ("W_QK0 is all zeros: every score is 0, so each query spreads its weight evenly over the keys it sees. "
                "Pair each query position with the position before it: W_QK0[L.pos(i), L.pos(i - 1)].")
    if (r, c) != ("POS", "POS"):
        return (f"W_QK0's largest entries pair the {r} rows (the query's side) with the {c} columns (the key's). "
                "The previous token is found by position alone: W_QK0[L.pos(i), L.pos(i - 1)] for i = 1 ... 31.")
    i = torch.arange(1, L.n_ctx)
    query = [L.pos(k) for k in i]
    back = _entries(QK0, query, [L.pos(k - 1) for k in i])  # query i, key i - 1: what is wanted
    self_ = _entries(QK0, query, query)  # query i, key i
    forward = _entries(QK0, [L.pos(k - 1) for k in i], query)  # query i - 1, key i: the transpose
    if forward > max(back, self_, 0):
        return ("W_QK0 is transposed: it pairs query position i - 1 with key position i, a key the causal mask "
                "hides. Rows are the query's side: W_QK0[L.pos(i), L.pos(i - 1)].")
    if self_ > max(back, 0):
        return ("layer 0's head attends to its own position: W_QK0 pairs position i with position i. The previous "
                "token sits at key i - 1: W_QK0[L.pos(i), L.pos(i - 1)].")
    if back < 0:
        return ("W_QK0 gives the previous position a negative score: the softmax then takes weight away from "
                "key i - 1. Make the entries positive.")
    return _weak_or_elsewhere(A0, previous_token_mask(A0.shape[-1]), "layer 0's head",
                              "the previous position (key i - 1)",
                              "W_QK0[L.pos(i), L.pos(i - 1)] should be large for every query position i = 1 ... 31")


def _trace_wrong(OV0: torch.Tensor, L) -> str:
    r, c = _blocks_said(OV0, L)
    if not r:
        return ("W_OV0 is all zeros: layer 0's head attends to the previous position but writes nothing there. "
                "Copy the key's token into the PREV rows: W_OV0[L.prev(t), L.tok(t)] for every token t.")
    if (r, c) == ("TOK", "PREV"):
        return ("W_OV0 is transposed: rows are where it writes (the PREV rows), columns what it reads at the key "
                "(its token, TOK): W_OV0[L.prev(t), L.tok(t)].")
    if c == "PREV":
        return ("W_OV0 reads the PREV rows, which are empty before layer 0 writes them: it moves nothing. "
                "Columns are what the head reads at the key: its token, W_OV0[L.prev(t), L.tok(t)].")
    if c != "TOK":
        return (f"W_OV0 reads the {c} rows of the key; the trace is the key's token: W_OV0[L.prev(t), L.tok(t)].")
    if r != "PREV":
        said = (" (in the token rows it would look like a second token of the query's own)" if r == "TOK" else "")
        return (f"W_OV0 writes into the {r} rows{said}. The trace belongs in the PREV rows, where nothing else "
                "writes and where layer 1's keys will read it: W_OV0[L.prev(t), L.tok(t)].")
    return ("after layer 0, the PREV rows at position i should name token i - 1, and they often name another: "
            "W_OV0 must send each token t to its own row, W_OV0[L.prev(t), L.tok(t)], for every t.")


def _induction_wrong(QK1: torch.Tensor, A1: torch.Tensor, tokens: torch.Tensor, trace_sign: float, L) -> str:
    from helpers.interp.scores import duplicate_token_score

    r, c = _blocks_said(QK1, L)
    dup = float(duplicate_token_score(A1[:, None], tokens)[0])
    if not r:
        return ("W_QK1 is all zeros: layer 1's head spreads its weight evenly and finds nothing. Its query should ask "
                "with its token for a key whose trace names that token: W_QK1[L.tok(t), L.prev(t)].")
    if (r, c) == ("TOK", "TOK"):
        return (f"layer 1 compares the query's token with the key's own token: it finds the earlier copy of the token "
                f"(weight {dup:.2f} there), not the token after it. The key should be read through its trace: "
                "W_QK1[L.tok(t), L.prev(t)].")
    if (r, c) == ("PREV", "TOK"):
        return ("W_QK1 is transposed: rows are the query's side (the token it has, L.tok(t)), columns the key's "
                "(what came before the key, L.prev(t)): W_QK1[L.tok(t), L.prev(t)].")
    if (r, c) == ("PREV", "PREV"):
        return (f"layer 1 compares the query's predecessor with the key's predecessor: it finds the earlier copy of "
                f"the current token (weight {dup:.2f} there), not the token after it. The query should ask with its "
                "own token: W_QK1[L.tok(t), L.prev(t)].")
    if (r, c) != ("TOK", "PREV"):
        return (f"W_QK1 pairs the {r} rows (the query's side) with the {c} columns (the key's). An induction head's "
                "query asks with its token for a key whose trace names that token: W_QK1[L.tok(t), L.prev(t)].")
    t = range(L.n_vocab)
    match = _entries(QK1, [L.tok(k) for k in t], [L.prev(k) for k in t])
    if match * trace_sign < 0:
        if trace_sign < 0:
            return ("W_OV0 writes the trace with a negative sign, so W_QK1's positive entries push layer 1's weight "
                    "away from the token after the earlier copy. Make W_OV0's entries positive.")
        return ("W_QK1 gives a matching trace a negative score: layer 1's weight goes away from the token after the "
                "earlier copy. Make the entries positive.")
    return _weak_or_elsewhere(A1, induction_mask(tokens), "layer 1's head", "the token after the earlier copy",
                              "W_QK1[L.tok(t), L.prev(t)] should be large for every token t",
                              " A key's trace is what W_OV0 wrote, so layer 1's score is your W_QK1 entry times "
                              "W_OV0's: either can be too small.")


def _copy_wrong(OV1: torch.Tensor, L) -> str:
    r, c = _blocks_said(OV1, L)
    if not r:
        return ("W_OV1 is all zeros: layer 1's head finds the token after the earlier copy but writes nothing. "
                "Write the token it attends to where W_U reads: W_OV1[L.out(t), L.tok(t)].")
    if (r, c) == ("TOK", "OUT"):
        return ("W_OV1 is transposed: rows are where it writes (the OUT rows, which W_U reads), columns what it reads "
                "at the key (its token, TOK): W_OV1[L.out(t), L.tok(t)].")
    if r != "OUT":
        return (f"the copy does not reach the unembedding: W_OV1 writes into the {r} rows, but W_U reads only the OUT "
                "rows (the logit of token t is x[L.out(t)]). Write W_OV1[L.out(t), L.tok(t)].")
    if c == "PREV":
        return ("W_OV1 copies the attended key's trace (the token *before* it) instead of its own token: the "
                "prediction is one step behind. Read the TOK columns: W_OV1[L.out(t), L.tok(t)].")
    if c != "TOK":
        return f"W_OV1 reads the {c} rows of the key; it should copy the key's token: W_OV1[L.out(t), L.tok(t)]."
    t = range(L.n_vocab)
    if _entries(OV1, [L.out(k) for k in t], [L.tok(k) for k in t]) < 0:
        return ("W_OV1 has the wrong sign: it pushes the token it finds *down* (a negative logit). Make the entries "
                "positive.")
    return ("the attended token's logit is not the largest: W_OV1 must send each token t to its own logit, "
            "W_OV1[L.out(t), L.tok(t)], for every t.")


BY_HAND_HELPERS = ("helpers.lessons.by_hand.induction_circuits",)


@exercise(answered_by=BY_HAND_HELPERS)
def check_induction_circuits(fn, model) -> bool:
    """fn(L) -> (W_QK0, W_OV0, W_QK1, W_OV1), each (d_model, d_model) = (224, 224) for
    ``helpers.lessons.by_hand.Layout()``.
    The hand-built model (``helpers.lessons.by_hand.from_circuits``) and ``model`` (notebook 10's trained one) run on 32
    repeated random sequences neither has seen; the hand-built model's drop in the loss on the repeat, ln 64 minus
    that loss, must be at least 70 % of the trained model's. Otherwise the first stage that fails is named: layer 0's
    attention, the trace it writes, layer 1's attention, the copy into the logits, the size of the copy."""
    import math

    from helpers.lessons.by_hand import CIRCUIT_NAMES, Layout, from_circuits
    from helpers.lessons.induction import repeat_loss
    from helpers.interp.scores import induction_score, previous_token_score
    from helpers.interp.sequences import repeated_tokens
    from helpers.model import names
    from helpers.model.transformer import Transformer

    what = named(fn, "induction_circuits", "(L)")
    L = Layout()
    out = call(fn, L, what=what, forbid=BY_HAND_HELPERS)
    if not (isinstance(model, Transformer) and model.cfg.n_vocab == L.n_vocab and model.cfg.n_ctx == L.n_ctx):
        raise ExerciseError("the check compares your circuit with notebook 10's trained model: pass it as the second "
                            f"argument, check_induction_circuits({named(fn, 'induction_circuits')}, model).")
    if not (isinstance(out, (tuple, list)) and len(out) == 4):
        got = "None" if out is None else type(out).__name__
        if isinstance(out, (tuple, list)):
            got += f" of {len(out)}"
        raise ExerciseError(f"{what} should return four matrices, (W_QK0, W_OV0, W_QK1, W_OV1); got {got}.")
    d = L.d_model
    mats = [tensor_result(M, (d, d), f"{name} from {what}", f"A circuit maps the stream to itself: (d_model, d_model), "
                          f"with d_model = {d} here (L.d_model).") for M, name in zip(out, CIRCUIT_NAMES)]
    try:
        hand = from_circuits(*mats, L)  # the shapes are right by now: what it can refuse is a rank above d_head
    except ValueError as e:
        raise ExerciseError(f"{e} (A full matrix of noise has rank {d}.)") from None
    said = [_blocks_said(M, L) for M in mats]
    expected = [EXPECTED_BLOCKS[name] for name in CIRCUIT_NAMES]
    if said != expected and sorted(said) == sorted(expected):
        raise ExerciseError(f"{what} returns the right four circuits in another order: (W_QK0, W_OV0, W_QK1, W_OV1) "
                            "is asked for, layer 0's QK and OV first, then layer 1's.")
    QK0, OV0, QK1, OV1 = mats
    tokens = repeated_tokens(L.n_vocab, L.n_ctx // 2, batch=32, seed=UNSEEN_SEED)  # (32, 32)
    with torch.no_grad():
        _, cache = hand.run_with_cache(tokens)
    A0, A1 = cache[names.key(0, "A")][:, 0], cache[names.key(1, "A")][:, 0]  # (batch, n, n): the one head of each
    if float(previous_token_score(A0[:, None])[0]) < 0.5:
        raise ExerciseError(_layer0_wrong(QK0, A0, L))
    trace = cache[names.resid(1)][:, L.PREV, 1:]  # (batch, n_vocab, n - 1): what layer 0 wrote at positions 1 ...
    traced = trace.abs().argmax(1) == tokens[:, :-1]
    if float(traced.float().mean()) < 0.9:
        raise ExerciseError(_trace_wrong(OV0, L))
    trace_sign = float(trace.gather(1, tokens[:, None, :-1]).mean())
    if float(induction_score(A1[:, None], tokens)[0]) < 0.5:
        raise ExerciseError(_induction_wrong(QK1, A1, tokens, trace_sign, L))
    half = L.n_ctx // 2
    logits = cache[names.LOGITS][:, :, half:-1]  # (batch, n_vocab, half - 1): predictions of tokens half + 1 ...
    top = logits.argmax(1) == tokens[:, half + 1:]
    if float(top.float().mean()) < 0.9:
        raise ExerciseError(_copy_wrong(OV1, L))
    hand_loss = repeat_loss(hand, tokens)[1]
    trained_loss = repeat_loss(model, tokens)[1]
    uniform = math.log(L.n_vocab)
    share = (uniform - hand_loss) / (uniform - trained_loss)
    if share < SHARE_NEEDED:
        raise ExerciseError(f"the circuit works but the copy is too weak: on the repeat the hand-built model's loss is "
                            f"{hand_loss:.2f} nats (a typical right token gets p = e^-{hand_loss:.2f} = "
                            f"{math.exp(-hand_loss):.2f}), the trained model's "
                            f"{trained_loss:.2f}: {share:.0%} of the trained model's drop below ln 64, and "
                            f"{SHARE_NEEDED:.0%} is needed. W_U reads the OUT rows with weight 1, so the right token's "
                            "logit is your W_OV1 entry times the attention weight: make it larger.")
    return passed(f"{what}: on 32 repeated sequences neither model has seen, the hand-built model's loss on the repeat "
                  f"is {hand_loss:.2f} nats, the trained model's {trained_loss:.2f}; it falls {share:.0%} as far below "
                  f"ln 64 = {uniform:.2f} as the trained model's ({SHARE_NEEDED:.0%} needed).")
