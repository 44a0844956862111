"""Notebook 06's explorer: a small MLP learns the facts table, and the explorer shows the neuron that fires
for the chosen fact."""

import pytest

from helpers.lessons.facts import FactsTask, fact_scores, train_facts
from helpers.model.config import Config
from helpers.train import fresh_model


def test_mlp_memorises_small_table_and_widget():
    from helpers.widgets.mlp import FactNeuronExplorer

    task = FactsTask.make(n_people=8, n_things=2, n_colours=4, seed=0)
    model = fresh_model(Config(n_vocab=task.n_vocab, d_model=16, n_ctx=2, n_layers=1, n_heads=2, d_mlp=64), 0)
    train_facts(model, task, steps=150, lr=1e-2)
    assert fact_scores(model, task)["accuracy"] == 1.0
    e = FactNeuronExplorer(model, task)
    e.person.value, e.thing.value = task.people[3], task.things[1]
    assert f"person={task.people[3]};thing={task.things[1]}" in e.caption.value
    assert f"guess={task.answer(task.people[3], task.things[1])}" in e.caption.value
    from helpers.interp.neurons import firing_counts, hidden
    counts = firing_counts(model, task)
    assert counts.shape == (64,) and int(counts.max()) <= task.n_facts
    top = int(hidden(model, task.prompt(task.people[3], task.things[1])).argmax())
    assert f"fires_on={int(counts[top])}" in e.caption.value and f"of all {task.n_facts} prompts" in e.caption.value
    assert 'class="gt-caption"' in e.caption.value and e.view.value
    no_mlp = fresh_model(Config(n_vocab=task.n_vocab, d_model=16, n_ctx=2, n_layers=1), 0)
    with pytest.raises(ValueError, match="no MLP"):
        FactNeuronExplorer(no_mlp, task)
