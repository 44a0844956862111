"""Auto-checked exercises: ``check_<exercise>(fn)`` runs a learner's function on test inputs and
explains the most likely mistake in the post's terms. Nothing else in ``helpers`` imports this.

Each ``check_*`` returns True (in Jupyter: None, after a ✔ line) when the answer is right and raises
``ExerciseError`` (with a message, never a deep torch traceback) when it is not.

ngrams.py     notebook 01: normalising bigram counts, held-out cross-entropy, add-k smoothing
softmax.py    notebook 02: a numerically stable softmax
zero_layer.py notebook 02: the loss's gradient with respect to the logits, a zero-layer training loop
attention.py  notebooks 03-04: single-query attention, a token hidden from it, every score, causal attention
heads.py      notebook 05: a multi-head layer without a loop over heads, a head switched off by hand, one
              head's output patched from a clean run
mlp.py        notebook 06: the MLP's two equations, the few neurons one fact needs (an ablation)
layernorm.py  notebook 07: LayerNorm for column vectors, what ε does to a quiet column, the gradient by hand
params.py     notebook 08: the parameter count of a model from its Config
training.py   notebook 08: one training step (forward, next-token loss, backward, step, zero_grad)
induction.py  notebook 09: an induction-score detector, an ablation measured, a confident mistake
circuits.py   notebook 10: a head's two circuits, a K-composition score, the cost of a causal head, the
              induction circuit by hand
answers.py    checks.answer("1.1"): the series' own answer, shown after the learner has tried (solutions.py, written
              from notebooks/ by tools/notebooks.py)
superposition.py  notebook 12: the toy model's importance-weighted loss, a sparse autoencoder's loss, one
              latent taken out of the activations
gpt2.py       notebook 11: the log-probability of a continuation of several tokens, king - man + woman in W_E,
              the logit lens scored state by state
"""

from helpers.checks.base import ExerciseError  # noqa: F401
from helpers.checks.answers import answer  # noqa: F401  (the series' answer, on request after an attempt)
from helpers.checks.ngrams import check_add_k_loss, check_bigram_table, check_heldout_cross_entropy  # noqa: F401
from helpers.checks.softmax import check_softmax  # noqa: F401
from helpers.checks.zero_layer import check_logit_grad, check_train_zero_layer  # noqa: F401
from helpers.checks.attention import check_all_scores, check_causal_attention, check_hide_token, check_single_query  # noqa: F401
from helpers.checks.heads import check_attention_layer, check_prob_without_head, check_restored_by_head  # noqa: F401
from helpers.checks.mlp import check_fact_neurons, check_mlp  # noqa: F401
from helpers.checks.layernorm import check_layer_norm, check_layer_norm_grad, check_std_after  # noqa: F401
from helpers.checks.params import check_n_params  # noqa: F401
from helpers.checks.training import check_train_step  # noqa: F401
from helpers.checks.induction import check_confident_mistake, check_induction_score, check_loss_without  # noqa: F401
from helpers.checks.circuits import (check_causal_mults, check_head_circuits, check_induction_circuits,  # noqa: F401
                                     check_k_composition)
from helpers.checks.gpt2 import check_analogy, check_continuation_logprob, check_lens_loss  # noqa: F401
from helpers.checks.superposition import check_sae_loss, check_toy_loss, check_without_latent  # noqa: F401
