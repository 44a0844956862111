"""Notebook 06's facts task (helpers/lessons/facts.py): a table of people, things and colours that the context never
holds, so the model has to store it."""

import pytest
import torch

from helpers.lessons.facts import FactsTask


def test_facts_task_is_a_table_not_in_the_context():
    task = FactsTask.make(n_people=6, n_things=3, n_colours=4, seed=1)
    prompts, answers = task.prompts()
    assert prompts.shape == (18, 2) and answers.shape == (18,)
    assert not any(int(a) in p.tolist() for p, a in zip(prompts, answers))  # the answer is never in the prompt
    p, t = task.people[2], task.things[1]
    assert task.vocab[int(answers[2 * 3 + 1])] == task.answer(p, t)
    assert torch.equal(task.prompt(p, t), prompts[2 * 3 + 1])
    assert task.fact_index(p, t) == 2 * 3 + 1
    assert all(torch.equal(prompts[task.fact_index(q, u)], task.prompt(q, u)) for q in task.people for u in task.things)
    with pytest.raises(ValueError, match="not one of the task's people"):
        task.prompt("nobody", t)
    with pytest.raises(ValueError, match="n_colours"):
        FactsTask.make(n_colours=1)
