"""Notebook 06: write the MLP's two equations; find the hidden neurons one fact needs (an intervention)."""

from __future__ import annotations

import functools
from typing import Callable

import torch

from helpers.checks.base import ExerciseError, as_tensor, call, close, exercise, named, expect_shape, passed
from helpers.model import names
from helpers.model.mlp import mlp


MLP_CASES = ((6, 4, 16, 3), (61, 5, 7, 2))  # seed, d_model, d_mlp, n: two sizes, so a size written in shows


@exercise(answered_by=("helpers.model.mlp.mlp",))
def check_mlp(fn: Callable) -> bool:
    """fn(x, W_1, b_1, W_2, b_2) with x (d_model, n) -> m (d_model, n)."""
    what = named(fn, "mlp", "(x, W_1, b_1, W_2, b_2)")
    for case, (seed, d_model, d_mlp, n) in enumerate(MLP_CASES):
        g = torch.Generator().manual_seed(seed)
        x = torch.randn(d_model, n, generator=g)
        W_1, b_1 = torch.randn(d_mlp, d_model, generator=g), torch.randn(d_mlp, generator=g)
        W_2, b_2 = torch.randn(d_model, d_mlp, generator=g), torch.randn(d_model, generator=g)
        try:
            out = as_tensor(call(fn, x.clone(), W_1, b_1, W_2, b_2, what=what, forbid=("helpers.model.mlp.mlp",)),
                            what)
        except ExerciseError as e:
            if case > 0 and " raised " in str(e):
                raise ExerciseError(f"{e}. It worked for the first test (d_model 4, d_mlp 16, n 3) but not for "
                                    f"d_model {d_model}, d_mlp {d_mlp}, n {n}: is a size written into the code? "
                                    "Take every size from the tensors it is given.") from None
            if "must match the size" in str(e):
                raise ExerciseError(f"{e}. Hint: a bias is one number per row; add it as a column, b_1[:, None], "
                                    "so the same bias is added at every position.") from None
            raise
        if tuple(out.shape) == (d_mlp, n):
            raise ExerciseError(f"{what} returned shape (d_mlp, n) = {(d_mlp, n)}: that is the hidden layer z. "
                                "Project back down with m = W_2 z + b_2.")
        expect_shape(out, (d_model, n), what, "m has one column of d_model numbers per position, like x.")
        z, want = mlp(x, W_1, b_1, W_2, b_2)
        if close(out, want, atol=1e-4, rtol=1e-5):
            continue
        col = lambda b: b[:, None]  # noqa: E731
        pre = W_1 @ x + col(b_1)
        mistakes = [
            (W_2 @ pre + col(b_2), "There is no nonlinearity: without ReLU, W_2 (W_1 x + b_1) + b_2 is just one "
                                   "linear map, and the MLP could do nothing a single matrix could not. Apply ReLU "
                                   "to W_1 x + b_1 (torch.relu or .clamp(min=0))."),
            (torch.relu(want), "ReLU is applied to the output m as well; the post applies it only to the hidden "
                               "layer z. m = W_2 z + b_2 can be negative."),
            (x + want, "You returned x + m. The MLP returns m; the residual add x2 = x1 + m happens outside it."),
            (W_2 @ torch.relu(W_1 @ x) + col(b_2), "b_1 is missing: z = ReLU(W_1 x + b_1)."),
            (W_2 @ z, "b_2 is missing: m = W_2 z + b_2."),
            (W_2 @ torch.relu(W_1 @ x), "Both biases are missing: add b_1 before the ReLU and b_2 at the end."),
            (W_2 @ (torch.relu(W_1 @ x) + col(b_1)) + col(b_2),
             "b_1 is added after the ReLU; it goes inside: z = ReLU(W_1 x + b_1), so the bias moves where each "
             "neuron starts to fire."),
            (W_2 @ torch.nn.functional.gelu(pre) + col(b_2),
             "That is GELU (GPT-2's choice, shown beside ReLU in this notebook); this exercise follows the post: "
             "z = ReLU(W_1 x + b_1), max(0, .) entry by entry."),
            (W_2 @ torch.sigmoid(pre) + col(b_2),
             "That is a sigmoid; the post's MLP uses ReLU: z = max(0, W_1 x + b_1), entry by entry."),
            (W_2 @ torch.tanh(pre) + col(b_2),
             "That is tanh; the post's MLP uses ReLU: z = max(0, W_1 x + b_1), entry by entry."),
        ]
        for wrong, message in mistakes:
            if close(out, wrong, atol=1e-4, rtol=1e-5):
                raise ExerciseError(message)
        raise ExerciseError("Not the MLP yet. Compute z = ReLU(W_1 @ x + b_1[:, None]) of shape (d_mlp, n), then "
                            "m = W_2 @ z + b_2[:, None]; the [:, None] turns a bias into a column added to every "
                            "position." + (f" (It was right for the first test, not for d_model {d_model}, d_mlp "
                                           f"{d_mlp}, n {n}: is a size written into the code?)" if case else ""))
    return passed(f"{named(fn, 'mlp')} is right: z = ReLU(W_1 x + b_1), m = W_2 z + b_2, one position at a time.")


# --- exercise 6.2: the neurons a fact needs ------------------------------------------------------------

FACT_CHECK = dict(n_people=24, n_things=4, n_colours=12, seed=106)   # a table the notebook never shows
FACT_MODEL = dict(d_model=16, d_mlp=64, steps=200, seed=6)            # d_mlp 64, not the notebook's 128
N_FACTS = 8
MIN_TELLING = 3             # of them, facts where ordering by firing and by direct effect give other neurons
ACCEPTED = ("push", "|push|", "margin")   # the orderings by direct effect (_scores) an answer may use


@functools.lru_cache(maxsize=1)
def _fact_model():
    """A one-layer facts model, trained by the check itself (about a second): its own people, things and
    colours, so an answer written for the notebook's model has to work on a model it has never seen."""
    from helpers.lessons.facts import FactsTask, answer_logits, train_facts
    from helpers.interp.ablation import ablated
    from helpers.model.config import Config
    from helpers.train import fresh_model

    task = FactsTask.make(**FACT_CHECK)
    cfg = Config(n_vocab=task.n_vocab, d_model=FACT_MODEL["d_model"], n_ctx=2, n_layers=1, n_heads=2,
                 d_mlp=FACT_MODEL["d_mlp"])
    model = fresh_model(cfg, seed=FACT_MODEL["seed"])
    with torch.enable_grad():
        train_facts(model, task, steps=FACT_MODEL["steps"])
    prompts, answers = task.prompts()
    with torch.no_grad():
        known = answer_logits(model, prompts).argmax(-1) == answers
        with ablated(model, neurons=[(0, j) for j in range(cfg.d_mlp)]):    # facts the MLP holds: without
            known &= answer_logits(model, prompts).argmax(-1) != answers     # it, the model gets them wrong
    known = known.nonzero().flatten()
    g = torch.Generator().manual_seed(FACT_CHECK["seed"])
    order = known[torch.randperm(len(known), generator=g)].tolist()
    # facts on which ordering by firing and by direct effect give other neurons (notebook 06's point): at least
    # MIN_TELLING of the N_FACTS, found on this model (another CPU trains another one), so that the check tells the
    # two orderings apart wherever it runs
    picked = order[:N_FACTS]
    telling = [i for i in picked if _firing_order_differs(model, prompts[i], int(answers[i]))]
    extra = []
    for i in order[N_FACTS:]:
        if len(telling) + len(extra) >= MIN_TELLING:
            break
        if _firing_order_differs(model, prompts[i], int(answers[i])):
            extra.append(i)
    others = [i for i in reversed(picked) if i not in telling]
    for new, old in zip(extra, others):
        picked[picked.index(old)] = new
    return model, task, [(prompts[i].clone(), int(answers[i])) for i in picked]


def _scores(model, prompt: torch.Tensor, answer: int) -> dict[str, torch.Tensor]:
    """Each hidden neuron's score under the usual orderings, at the last position (the one that predicts):
    how strongly it fires (z_j), and its direct effect on the right colour's logit, z_j W_U[answer] . W_2[:, j], by
    value, by size, and on the margin over the runner-up colour. The last three are the orderings the check accepts."""
    with torch.no_grad():
        logits, cache = model.run_with_cache(prompt)
        z = cache[names.key(0, "z")][:, -1]
        W_U, W_2 = model.unembed.W_U, model.blocks[0].mlp.W_2
        rival = int(logits[:, -1].clone().index_fill_(0, torch.tensor([answer]), -torch.inf).argmax())
        push = z * (W_U[answer] @ W_2)
        return {"firing": z, "push": push, "|push|": push.abs(), "margin": z * ((W_U[answer] - W_U[rival]) @ W_2)}


def _greedy(model, prompt, answer, score: torch.Tensor) -> list[int]:
    """The neurons in order of ``score``, largest first, up to the first set whose zeroing flips the fact."""
    order = score.argsort(descending=True).tolist()
    return order[:_flip_size(model, prompt, answer, order)]


def _firing_order_differs(model, prompt, answer) -> bool:
    """Does ordering by firing give this fact another set of neurons than every accepted ordering would, at the
    same size? (Then an answer that orders by firing shows on this fact.)"""
    scores = _scores(model, prompt, answer)
    by_firing = _greedy(model, prompt, answer, scores["firing"])
    return set(by_firing) not in [_top(scores[k], len(by_firing)) for k in ACCEPTED]


def _flipped(model, prompt: torch.Tensor, answer: int, neurons: list[int]) -> bool:
    """Does zeroing these hidden neurons (z_j := 0, layer 0) make the model's first guess wrong?"""
    from helpers.interp.ablation import ablated

    with ablated(model, neurons=[(0, j) for j in neurons]):
        return int(model.next_token_probs(prompt).argmax()) != answer


def _flip_size(model, prompt, answer, order: list[int]) -> int:
    for size in range(1, len(order) + 1):
        if _flipped(model, prompt, answer, order[:size]):
            return size
    return len(order)


def _reference_size(model, prompt, answer) -> int:
    """How many neurons the usual orderings need: by direct push on the right colour's logit, and on its
    margin over the runner-up; the smaller of the two."""
    scores = _scores(model, prompt, answer)
    return min(len(_greedy(model, prompt, answer, scores[name])) for name in ("push", "margin"))


def _neuron_list(out, d_mlp: int, what: str) -> list[int]:
    if out is None:
        raise ExerciseError(f"{what} returned None: is a `return` missing?")
    if isinstance(out, (list, tuple)) and out and all(isinstance(o, (tuple, list)) and len(o) == 2 for o in out):
        raise ExerciseError(f"{what} returned (layer, neuron) pairs ({list(out)[:3]}...); return the neurons' "
                            "indices j alone (the model has one layer), as a list of ints.")
    if isinstance(out, (int, torch.Tensor)) and not isinstance(out, bool) and torch.as_tensor(out).dim() == 0:
        out = [int(out)]
    try:
        t = torch.as_tensor(out if not isinstance(out, (set, tuple)) else list(out))
    except Exception:
        raise ExerciseError(f"{what} should return a list of neuron numbers (ints), "
                            f"got {type(out).__name__}.") from None
    if t.dtype == torch.bool:
        raise ExerciseError(f"{what} returned booleans; return the neurons' numbers (for example "
                            "`mask.nonzero().flatten().tolist()`).")
    if t.is_floating_point():
        if not bool(torch.isfinite(t).all()) or not bool((t == t.round()).all()):
            raise ExerciseError(f"{what} returned numbers that are not whole: return the neurons' indices j (their "
                                "positions in z), not their activations or effects.")
        t = t.long()
    neurons = t.flatten().tolist()
    if not neurons:
        raise ExerciseError(f"{what} returned no neurons; with none switched off, the fact stays right.")
    bad = [j for j in neurons if not 0 <= j < d_mlp]
    if bad:
        raise ExerciseError(f"{what} returned neuron {bad[0]}, but this model has d_mlp = {d_mlp} hidden neurons "
                            f"(0 to {d_mlp - 1}). Read d_mlp from the model (model.cfg.d_mlp), not from the notebook.")
    if len(set(neurons)) != len(neurons):
        raise ExerciseError(f"{what} returned a neuron twice ({neurons}): a set of neurons has each one once.")
    return neurons


def _top(scores: torch.Tensor, k: int) -> set[int]:
    return set(scores.argsort(descending=True)[:k].tolist())


def _name_the_ordering(model, returned: list, what: str) -> None:
    """Three orderings flip every fact and can stay under the size bound, so they are named rather than left to
    it: the neurons that fire most strongly at the last position (notebook 06 argues against exactly that: what
    flips a fact is a neuron's direct effect on the right colour's logit, not its activation), the neurons most
    active at the *first* position (the person, where no colour is predicted), and a fixed number of neurons
    whatever the fact needs."""
    by_firing, told = True, []
    for fact, prompt, answer, neurons in returned:
        scores, k = _scores(model, prompt, answer), len(neurons)
        by_firing &= set(neurons) == _top(scores["firing"], k)
        if set(neurons) not in [_top(scores[name], k) for name in ACCEPTED]:
            told.append((fact, k, len(_greedy(model, prompt, answer, scores["push"]))))
    if by_firing and told:   # the strongest-firing neurons on every fact, and on some not those of any effect order
        fact, k, ref = max(told, key=lambda t: t[1] - t[2])
        than = f" where an order by direct effect needs {ref}" if ref < k else ""
        raise ExerciseError(
            f"{what} switches off the neurons that fire most strongly (the largest z_j at the last position): on "
            f"'{fact}' that is {k} neuron{'s' if k > 1 else ''}{than}, and not the one{'s' if k > 1 else ''} that "
            "push the right colour most. Firing is not being needed: a neuron can fire hard and push the right "
            "colour's logit only a little, or push another colour up as much. What flips a fact is each neuron's "
            "direct effect on the right colour's logit, z_j (W_U[answer] . W_2[:, j]): order the neurons by that.")
    first_position, only_there = True, 0
    for fact, prompt, answer, neurons in returned:
        _, cache = model.run_with_cache(prompt)
        z = cache[names.key(0, "z")]
        k = len(neurons)
        with torch.no_grad():
            push = z[:, -1] * (model.unembed.W_U[answer] @ model.blocks[0].mlp.W_2)
        first_position &= set(neurons) == _top(z[:, 0], k)
        only_there += set(neurons) not in (_top(z[:, -1], k), _top(push, k))
    if first_position and only_there >= 2:   # at 0 and -1 the top neurons often agree: two facts where they don't
        raise ExerciseError(
            f"{what} picks the neurons most active at the *first* position (z[:, 0], where the model reads the "
            "person). The colour is predicted at the last position, from the thing: take z at the last position "
            "(z[:, -1]) and order the neurons by how much each pushes the right colour's logit up.")
    k = len(returned[0][3])
    if k >= 2 and all(len(neurons) == k for *_, neurons in returned):
        for fact, prompt, answer, neurons in returned:
            for size in range(1, k):
                if _flipped(model, prompt, answer, neurons[:size]):
                    raise ExerciseError(
                        f"{what} switches off {k} neurons for every fact, but on '{fact}' the first {size} of them "
                        f"already flip it. A fact needs as many neurons as it takes: add them one at a time, in "
                        "order of their push on the right colour, and stop as soon as the model's first guess "
                        "is wrong.")


# Notebook 12's helpers that do exercise 6.2's work: every unit's direct push on the right colour, and the search.
SEARCHES = ("helpers.lessons.superposition.pushes", "helpers.lessons.superposition.units_needed")


@exercise(answered_by=())
def check_fact_neurons(fn: Callable) -> bool:
    """fn(model, prompt, answer) -> a list of layer-0 hidden neurons; zeroing them must make the model's first
    guess for that prompt wrong, with not many more neurons than ordering them by their direct push needs."""
    what = named(fn, "fact_neurons", "(model, prompt, answer)")
    try:  # an unfilled answer says so at once, before the check trains its model
        call(fn, None, torch.tensor([0, 1]), 2, what=what)
    except ExerciseError as e:
        if "not written yet" in str(e) or not callable(fn):
            raise
    model, task, facts = _fact_model()
    d_mlp = model.cfg.d_mlp
    sizes, refs, chance, returned = [], [], [], []
    g = torch.Generator().manual_seed(61)
    for prompt, answer in facts:
        fact = f"{task.vocab[int(prompt[0])]} {task.vocab[int(prompt[1])]} -> {task.vocab[answer]}"
        out = call(fn, model, prompt.clone(), answer, what=what, forbid=SEARCHES)
        neurons = _neuron_list(out, d_mlp, what)
        if not _flipped(model, prompt, answer, neurons):
            logits, cache = model.run_with_cache(prompt)
            z = cache[names.key(0, "z")][:, -1]
            with torch.no_grad():
                push = z * (model.unembed.W_U[answer] @ model.blocks[0].mlp.W_2)
            if bool((z[neurons] <= 0).all()):
                raise ExerciseError(
                    f"On the fact '{fact}', the neurons {neurons} do not fire (z = 0 there): zeroing them changes "
                    "nothing. Look at z at the *last* position (the thing), where the colour is predicted.")
            if len(neurons) <= 3 and float(push[neurons].sum()) < 0:
                raise ExerciseError(
                    f"On the fact '{fact}' (a model the check trained on a table of its own), zeroing neurons "
                    f"{neurons} leaves the right colour first: those neurons push it *down* "
                    "(z_j W_U[answer] . W_2[:, j] < 0). Take the neurons with the largest positive push, not the "
                    "most negative.")
            raise ExerciseError(
                f"On the fact '{fact}' (a model the check trained on a table of its own), zeroing neurons {neurons} "
                "leaves the right colour first: the set is not enough to flip the fact. Keep adding neurons, in "
                "order of how much each pushes the right colour's logit up, until switching them all off "
                "(helpers.interp.ablation.ablated) makes the model's first guess wrong.")
        sizes.append(len(neurons))
        refs.append(_reference_size(model, prompt, answer))
        returned.append((fact, prompt, answer, neurons))
        tries = [torch.randperm(d_mlp, generator=g)[:len(neurons)].tolist() for _ in range(20)]
        chance.append(sum(_flipped(model, prompt, answer, r) for r in tries) / len(tries))
    _name_the_ordering(model, returned, what)
    if sum(sizes) > max(3 * sum(refs), sum(refs) + 2 * len(facts)):
        raise ExerciseError(
            f"Every set flips its fact, but they are large: {sum(sizes)} neurons over {len(facts)} facts, where "
            f"ordering neurons by their direct push on the right colour needs {sum(refs)}. Switching off many "
            "neurons breaks anything; the question is which few a fact needs. Order them by z_j times how much "
            "W_2[:, j] raises the right colour's logit (W_U[answer] @ W_2), and stop as soon as the fact flips.")
    mean_size = sum(sizes) / len(sizes)
    return passed(f"fact_neurons is right: on {len(facts)} facts of a model you had not seen (d_mlp = {d_mlp}), "
                  f"switching off your {mean_size:.1f} neurons (on average) flips each fact; as many random neurons "
                  f"flip it {sum(chance) / len(chance):.0%} of the time.")
