"""Notebook 06: pick a person and a thing, see which hidden MLP neurons fire and what the model answers
(the numbers come from ``helpers.interp.neurons``)."""

from __future__ import annotations

import ipywidgets as W
import torch

from helpers.facts import FactsTask
from helpers.interp.neurons import firing_counts, hidden
from helpers.model.transformer import Transformer
from helpers.plots.mlp import neuron_bars, neuron_table
from helpers.widgets.base import Explorer


class FactNeuronExplorer(Explorer):
    """Dropdowns: person, thing. Left: z (every hidden neuron) at the last position, top neurons
    labelled. Right: how strongly the most active neuron fires for the first people x every thing.
    The caption says on how many of all the prompts that neuron fires: the facts are stored in
    combinations of shared neurons, not one neuron per fact."""

    figsize = (9, 3.4)

    def __init__(self, model: Transformer, task: FactsTask, layer: int = 0, rows: int = 12):
        if model.cfg.d_mlp < 1:
            raise ValueError("this model has no MLP (d_mlp = 0): nothing to explore")
        self.model, self.task, self.layer, self.rows = model, task, layer, rows
        self.fires_on = firing_counts(model, task, layer)  # (d_mlp,): prompts each neuron fires on
        self.person = W.Dropdown(options=task.people, value=task.people[0], description="person")
        self.thing = W.Dropdown(options=task.things, value=task.things[0], description="thing")
        super().__init__([self.person, self.thing])

    def draw(self, fig):
        task = self.task
        tokens = task.prompt(self.person.value, self.thing.value)
        z = hidden(self.model, tokens, self.layer)
        p = self.model.next_token_probs(tokens)  # no_grad inside
        guess = task.vocab[int(p.argmax())]
        truth = task.answer(self.person.value, self.thing.value)
        top = torch.argsort(z, descending=True)[:3].tolist()
        n_on = int((z > 0).sum())
        a, b = fig.subplots(1, 2, width_ratios=[2, 1])
        neuron_bars(a, z.numpy(), top=5, title=f"z for '{self.person.value} {self.thing.value}'")
        people = task.people[: self.rows]
        grid = torch.stack([torch.stack([hidden(self.model, task.prompt(q, t), self.layer)[top[0]]
                                         for t in task.things]) for q in people])
        k = int(self.fires_on[top[0]])
        neuron_table(b, grid.numpy(), people, task.things,
                     title=f"neuron {top[0]}: fires on {k} of {task.n_facts} prompts")
        mark = "right" if guess == truth else f"wrong: the fact is {truth}"
        text = (f"'{self.person.value} {self.thing.value}' → model says <b>{guess}</b> "
                f"(p = {float(p.max()):.2f}; {mark}). {n_on} of {len(z)} neurons fire (z > 0); "
                f"the strongest are {', '.join(map(str, top))}. Neuron {top[0]} fires on {k} of all "
                f"{task.n_facts} prompts (right: the first {len(people)} people): no neuron belongs to one fact — "
                f"each fact is a combination of many shared neurons.")
        state = {"person": self.person.value, "thing": self.thing.value, "top": top[0], "fires_on": k,
                 "guess": guess}
        return text, state
