"""Notebook 10, section 10: the induction circuit written by hand (helpers/lessons/by_hand.py): the residual stream's
layout, the embedding, the factorisation of a circuit into a head's weights and the model built from circuits."""

import math

import pytest
import torch

from helpers.lessons import by_hand
from helpers.lessons.induction import repeat_loss
from helpers.interp.circuits import ov_circuit, qk_circuit
from helpers.interp.sequences import repeated_tokens


L = by_hand.Layout()
D = L.d_model


def test_layout_blocks_cover_the_stream_once():
    rows = [r for block in L.blocks().values() for r in range(block.start, block.stop)]
    assert sorted(rows) == list(range(D)) and D == 224 and L.d_head == 64
    assert (L.tok(0), L.pos(0), L.prev(0), L.out(63)) == (0, 64, 96, 223)
    assert L.pos(torch.tensor(3)) == 67                      # a 0-d tensor from a loop over torch.arange


@pytest.mark.parametrize("call, message", [
    (lambda: L.tok(64), "token 64 does not exist: there are 64"),
    (lambda: L.pos(32), "position 32 does not exist: there are 32"),
    (lambda: L.prev(-1), "token -1 does not exist"),
])
def test_layout_names_an_index_out_of_range(call, message):
    with pytest.raises(IndexError, match=message):
        call()


def test_embedding_is_one_hot_in_its_blocks():
    W_E, W_pos, W_U = by_hand.embedding(L)
    assert torch.equal(W_E[L.TOK], torch.eye(64)) and W_E[L.POS.start:].abs().sum() == 0
    assert torch.equal(W_pos[L.POS], torch.eye(32)) and W_pos.sum() == 32
    assert torch.equal(W_U[:, L.OUT], torch.eye(64)) and W_U.sum() == 64


def test_factor_is_exact_up_to_the_rank():
    g = torch.Generator().manual_seed(0)
    M = torch.randn(10, 3, generator=g, dtype=torch.float64) @ torch.randn(3, 10, generator=g, dtype=torch.float64)
    F, G = by_hand.factor(M, 4)
    assert F.shape == (10, 4) and G.shape == (4, 10)
    assert torch.allclose(F @ G, M, atol=1e-10)


def test_the_model_has_the_circuits_it_was_given():
    circuits = by_hand.induction_circuits(L)
    model = by_hand.from_circuits(*circuits)
    for layer in range(2):
        assert torch.allclose(qk_circuit(model, layer, 0), circuits[2 * layer], atol=1e-3)
        assert torch.allclose(ov_circuit(model, layer, 0), circuits[2 * layer + 1], atol=1e-4)
    tokens = repeated_tokens(64, 16, batch=8, seed=3)
    first, repeat = repeat_loss(model, tokens)
    assert repeat < 0.2 < math.log(64) < first               # it copies; with nothing to copy it bets anyway


@pytest.mark.parametrize("M, error, message", [
    ([[0.0]], TypeError, "must be a torch tensor"),
    (torch.zeros(64, 64), ValueError, r"\(d_model, d_model\) = \(224, 224\)"),
    (torch.full((D, D), float("nan")), ValueError, "inf or NaN"),
    (torch.eye(D), ValueError, "rank 224, more than d_head = 64"),
])
def test_from_circuits_refuses_what_no_head_can_be(M, error, message):
    circuits = list(by_hand.induction_circuits(L))
    circuits[2] = M
    with pytest.raises(error, match=message):
        by_hand.from_circuits(*circuits)


def test_main_block_names_what_a_circuit_reads_and_writes():
    W_QK0, W_OV0, W_QK1, W_OV1 = by_hand.induction_circuits(L)
    assert [by_hand.main_block(M, L)[:2] for M in (W_QK0, W_OV0, W_QK1, W_OV1)] == \
        [("POS", "POS"), ("PREV", "TOK"), ("TOK", "PREV"), ("OUT", "TOK")]
    assert by_hand.main_block(torch.zeros(D, D), L) == ("", "", 0.0)
