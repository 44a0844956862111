"""Notebook 06: pick a person and a thing, see which hidden MLP neurons fire and what the model answers
(the numbers come from ``helpers.interp.neurons``)."""

from __future__ import annotations

import html

import ipywidgets as W
import torch

from helpers.lessons.facts import FactsTask
from helpers.interp.neurons import hidden
from helpers.model.transformer import Transformer
from helpers.plots import svg
from helpers.widgets.base import Explorer, choice


class FactNeuronExplorer(Explorer):
    """A person (slider over the task's people) and a thing (buttons). Left: z (every hidden neuron)
    at the last position, top neurons labelled. Right: how strongly the most active neuron fires for
    the first people x every thing. The caption says on how many of all the prompts that neuron fires:
    the facts are stored in combinations of shared neurons, not one neuron per fact."""

    def __init__(self, model: Transformer, task: FactsTask, layer: int = 0, rows: int = 12):
        if model.cfg.d_mlp < 1:
            raise ValueError("this model has no MLP (d_mlp = 0): nothing to explore")
        self.model, self.task, self.layer, self.rows = model, task, layer, rows
        # Every prompt's z and prediction, once (one batched forward pass): a redraw only reads them.
        ids, _ = task.prompts()  # (n_facts, 2): row task.fact_index(person, thing) is that fact
        self.Z = hidden(model, ids, layer)  # (n_facts, d_mlp)
        self.p = model.next_token_probs(ids)  # (n_facts, n_vocab)
        self.fires_on = (self.Z > 0).sum(0)  # (d_mlp,): prompts each neuron fires on
        # A slider, not a dropdown, for the many people: arrow keys work in JupyterLab (base.py says why).
        self.person = W.SelectionSlider(options=task.people, value=task.people[0], description="person",
                                        continuous_update=True, layout=W.Layout(width="26em"))
        self.thing = choice("thing", task.things, task.things[0], width="4.5em")
        super().__init__([self.person, self.thing])

    def render(self):
        task, person, thing = self.task, self.person.value, self.thing.value
        f = task.fact_index(person, thing)
        z, p = self.Z[f], self.p[f]
        guess, truth = task.vocab[int(p.argmax())], task.answer(person, thing)
        top = torch.argsort(z, descending=True)[:3].tolist()
        n_on = int((z > 0).sum())
        people = task.people[: self.rows]
        first = self.Z[: len(people) * len(task.things), top[0]].reshape(len(people), len(task.things))
        k = int(self.fires_on[top[0]])
        colours = [svg.ORANGE if v > 0 else svg.GREY for v in z.tolist()]
        view = svg.row(
            svg.vbars([], z.tolist(), title=f"z for '{person} {thing}'", ylabel="z (after ReLU)", colors=colours,
                      fmt=None, marks=[i for i in top if z[i] > 0], width=460,
                      xlabel=f"hidden neuron (0 ... d_mlp - 1 = {len(z) - 1})"),
            svg.grid(first.numpy(), people, task.things,
                     title=f"neuron {top[0]}: fires on {k} of {task.n_facts} prompts"))
        mark = "right" if guess == truth else f"wrong: the fact is {truth}"
        text = (f"'{html.escape(person)} {html.escape(thing)}' → model says <b>{html.escape(guess)}</b> "
                f"(p = {float(p.max()):.2f}; {mark}). {n_on} of {len(z)} neurons fire (z > 0); "
                f"the strongest are {', '.join(map(str, top))}. Neuron {top[0]} fires on {k} of all "
                f"{task.n_facts} prompts (right: the first {len(people)} people): no neuron belongs to one fact — "
                f"each fact is a combination of many shared neurons.")
        state = {"person": person, "thing": thing, "top": top[0], "fires_on": k, "guess": guess}
        return text, state, view
