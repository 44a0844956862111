"""A small "facts" task for notebook 06: answers that are *not* in the context.

The post's "MLPs store facts" hypothesis says attention moves information between positions, and
the MLP adds information stored in the weights (the post's example: where the world's largest ball
of paint is). To make it concrete we invent people and facts about them:

    prompt "bako car"  -> answer "green"      (the colour of bako's car)
    prompt "bako hat"  -> answer "red"        (the colour of bako's hat)

Every (person, thing) pair gets a random colour from the same list of colours, so the answer
depends on the *combination* of the two tokens: nothing in the context says "green", and neither
token alone determines it. The model has to memorise the whole table.

Tokens: people first, then things, then colours. A prompt is (person, thing), n = 2; the model's
prediction at the last position is scored against the colour.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch.nn import functional as F

from helpers.model.config import Config
from helpers.optim import AdamW
from helpers.runtime import release_memory
from helpers.train import fresh_model

THINGS = ["car", "hat", "door", "bike", "cup", "kite", "boat", "coat"]
COLOURS = ["red", "blue", "green", "yellow", "black", "white", "pink", "grey",
           "brown", "purple", "orange", "gold", "silver", "teal", "navy", "olive"]
_CONS, _VOWELS = "bdfgklmnprstvz", "aeiou"


def _names(k: int, seed: int) -> list[str]:
    """k distinct made-up two-syllable names ("bako", "demi", ...), repeatable from ``seed``."""
    g = torch.Generator().manual_seed(seed)
    names: list[str] = []
    while len(names) < k:
        c = torch.randint(len(_CONS), (2,), generator=g).tolist()
        v = torch.randint(len(_VOWELS), (2,), generator=g).tolist()
        name = _CONS[c[0]] + _VOWELS[v[0]] + _CONS[c[1]] + _VOWELS[v[1]]
        if name not in names:
            names.append(name)
    return names


@dataclass
class FactsTask:
    """people x things -> colours, a random table to memorise."""

    people: list[str]
    things: list[str]
    colours: list[str]
    table: torch.Tensor  # (n_people, n_things) colour index of each fact

    @classmethod
    def make(cls, n_people: int = 48, n_things: int = 4, n_colours: int = 8, seed: int = 0) -> "FactsTask":
        if not 1 <= n_things <= len(THINGS):
            raise ValueError(f"n_things must be 1..{len(THINGS)}, got {n_things}")
        if not 2 <= n_colours <= len(COLOURS):
            raise ValueError(f"n_colours must be 2..{len(COLOURS)}, got {n_colours}")
        if n_people < 1:
            raise ValueError(f"n_people must be at least 1, got {n_people}")
        g = torch.Generator().manual_seed(seed)
        table = torch.randint(n_colours, (n_people, n_things), generator=g)
        return cls(_names(n_people, seed), THINGS[:n_things], COLOURS[:n_colours], table)

    @property
    def vocab(self) -> list[str]:
        return self.people + self.things + self.colours

    @property
    def n_vocab(self) -> int:
        return len(self.vocab)

    @property
    def n_facts(self) -> int:
        return self.table.numel()

    def token(self, word: str) -> int:
        try:
            return self.vocab.index(word)
        except ValueError:
            raise ValueError(f"{word!r} is not a person, thing or colour of this task") from None

    def prompts(self) -> tuple[torch.Tensor, torch.Tensor]:
        """Every fact: prompts (n_facts, 2) = (person, thing) token ids, answers (n_facts,) token ids."""
        P, T = self.table.shape
        person = torch.arange(P).repeat_interleave(T)
        thing = torch.arange(T).repeat(P)
        prompts = torch.stack([person, P + thing], dim=1)
        answers = P + T + self.table.reshape(-1)
        return prompts, answers

    def prompt(self, person: str, thing: str) -> torch.Tensor:
        """Token ids (2,) of one prompt, e.g. prompt("bako", "car")."""
        if person not in self.people:
            raise ValueError(f"{person!r} is not one of the task's people ({', '.join(self.people[:4])}, ...)")
        if thing not in self.things:
            raise ValueError(f"{thing!r} is not one of the task's things {self.things}")
        return torch.tensor([self.people.index(person), len(self.people) + self.things.index(thing)])

    def fact_index(self, person: str, thing: str) -> int:
        """Row of ``prompts()`` that holds (person, thing): the rows go person by person, every thing each."""
        p, t = self.prompt(person, thing).tolist()  # (checks both names)
        return p * len(self.things) + (t - len(self.people))

    def answer(self, person: str, thing: str) -> str:
        p, t = self.prompt(person, thing).tolist()
        return self.colours[int(self.table[p, t - len(self.people)])]

    def best_constant_loss(self) -> float:
        """Cross-entropy of always predicting the overall colour frequencies (no memory at all)."""
        freq = torch.bincount(self.table.reshape(-1), minlength=len(self.colours)).double()
        p = freq / freq.sum()
        return float(-(p[p > 0] * p[p > 0].log()).sum())


def answer_logits(model, prompts: torch.Tensor) -> torch.Tensor:
    """The model's logits at the last position of each prompt: (n_prompts, n_vocab)."""
    return model(prompts)[..., -1]


def fact_scores(model, task: FactsTask) -> dict[str, float]:
    """Cross-entropy (nats) of the right colour and accuracy (top-1) over every fact."""
    prompts, answers = task.prompts()
    with torch.no_grad():
        logits = answer_logits(model, prompts)
    return {"loss": float(F.cross_entropy(logits, answers)),
            "accuracy": float((logits.argmax(-1) == answers).float().mean())}


def train_facts(model, task: FactsTask, steps: int = 600, lr: float = 1e-2) -> list[float]:
    """Full-batch AdamW on every fact (memorising is the point); returns the loss every 10 steps."""
    prompts, answers = task.prompts()
    opt = AdamW(model.parameters(), lr=lr, weight_decay=0.0)
    model.train()
    curve = []
    for step in range(steps):
        loss = F.cross_entropy(answer_logits(model, prompts), answers)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if step % 10 == 0 or step == steps - 1:
            curve.append(loss.item())
    model.eval()
    release_memory()  # (the training steps' freed memory back to the system)
    return curve


# Notebook 06's comparison: one layer, 2 heads, n_ctx 2, no LayerNorm; the models differ only in width and MLP.
# The wide attention-only model has about as many parameters as the one with an MLP (within 3 %).
FACT_MODELS = {                     # name: (d_model, d_mlp)
    "attention only": (32, 0),
    "attention only, wide": (50, 0),
    "attention + MLP": (32, 128),   # d_mlp = 4 d_model
}


def compare_fact_models(task: FactsTask, seed: int = 0, steps: int = 300, lr: float = 1e-2) -> dict[str, dict]:
    """Train each of ``FACT_MODELS`` on every fact of ``task`` from the same seed for the same steps.

    Returns name -> {"loss", "accuracy", "params", "curve" (loss every 10 steps), "model", "config"}.
    """
    results = {}
    for name, (d_model, d_mlp) in FACT_MODELS.items():
        cfg = Config(n_vocab=task.n_vocab, d_model=d_model, n_ctx=2, n_layers=1, n_heads=2, d_mlp=d_mlp)
        model = fresh_model(cfg, seed=seed)
        curve = train_facts(model, task, steps=steps, lr=lr)
        results[name] = fact_scores(model, task) | {"params": model.n_params(), "curve": curve,
                                                    "model": model, "config": cfg}
    return results
