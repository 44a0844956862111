"""The series' solution of every exercise, for helpers/checks/answers.py. Written by
`python -m tools.notebooks clean` from the solution cells of notebooks/
(tests/notebooks/test_notebooks_clean.py checks it is current): do not edit."""
# ruff: noqa: E501

SOLUTIONS = {
    '1.1': {
        'notebook': '01_bigrams.ipynb',
        'title': 'From counts to probabilities',
        'checks': ['check_bigram_table'],
        'code': 'def normalize(C: torch.Tensor) -> torch.Tensor:\n    totals = C.sum(dim=0, keepdim=True)  # (1, n_vocab): how often each token a was followed by anything\n    return C / totals.clamp(min=1e-12)  # a never-followed token keeps a zero column instead of 0/0',
    },
    '1.2': {
        'notebook': '01_bigrams.ipynb',
        'title': 'Held-out cross-entropy, by hand',
        'checks': ['check_heldout_cross_entropy'],
        'code': 'def heldout_cross_entropy(P: torch.Tensor, ids: torch.Tensor) -> float:\n    p_actual = P[ids[1:], ids[:-1]]  # P[next, previous]: one probability per prediction, N - 1 of them\n    return float(-torch.log(p_actual).mean())  # nats per token',
    },
    '1.3': {
        'notebook': '01_bigrams.ipynb',
        'title': 'Add-k smoothing, scored on the held-out set',
        'checks': ['check_add_k_loss'],
        'code': 'def add_k_loss(train_ids: torch.Tensor, heldout_ids: torch.Tensor, n_vocab: int, k: float) -> float:\n    C = ngrams.bigram_counts(train_ids, n_vocab)  # C[b, a]: b after a, on the training text only\n    P = (C + k) / (C.sum(dim=0, keepdim=True) + k * n_vocab)  # every column sums to 1, no entry is 0\n    return ngrams.cross_entropy(P, heldout_ids)',
    },
    '2.1': {
        'notebook': '02_zero_layer.ipynb',
        'title': 'A softmax that never overflows',
        'checks': ['check_softmax'],
        'code': "def stable_softmax(x: torch.Tensor) -> torch.Tensor:\n    shifted = x - x.max(dim=0, keepdim=True).values  # every column's largest logit becomes 0\n    e = torch.exp(shifted)\n    return e / e.sum(dim=0, keepdim=True)",
    },
    '2.2': {
        'notebook': '02_zero_layer.ipynb',
        'title': "The loss's gradient with respect to the logits, by hand",
        'checks': ['check_logit_grad'],
        'code': "def logit_grad(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:\n    n = logits.shape[1]\n    p = softmax(logits, dim=0)  # (n_vocab, n): column j is position j's distribution\n    one_hot = torch.zeros_like(p)\n    one_hot[targets, torch.arange(n)] = 1.0  # column j: a 1 in the row of the token that came next\n    return (p - one_hot) / n  # the loss is a mean over the n positions",
    },
    '2.3': {
        'notebook': '02_zero_layer.ipynb',
        'title': 'Train a zero-layer model yourself',
        'checks': ['check_train_zero_layer'],
        'code': 'def train_zero_layer(W_E: torch.Tensor, W_U: torch.Tensor, ids: torch.Tensor, steps: int, lr: float):\n    W_E, W_U = W_E.clone().requires_grad_(), W_U.clone().requires_grad_()\n    n_vocab = W_U.shape[0]\n    t = torch.nn.functional.one_hot(ids[:-1], n_vocab).T.float()  # (n_vocab, N - 1): one-hot input columns\n    targets = ids[1:]  # the token that came next at each position\n    for _ in range(steps):\n        logits = W_U @ W_E @ t  # (n_vocab, N - 1): one column of logits per position\n        log_p = torch.log_softmax(logits, dim=0)\n        loss = -log_p[targets, torch.arange(len(targets))].mean()\n        W_E.grad = W_U.grad = None\n        loss.backward()\n        with torch.no_grad():\n            W_E -= lr * W_E.grad\n            W_U -= lr * W_U.grad\n    return W_E.detach(), W_U.detach()',
    },
    '3.1': {
        'notebook': '03_single_query_attention.ipynb',
        'title': 'One attention step, before the table',
        'checks': ['check_single_query'],
        'code': 'def single_query_attention(x0, W_Q, W_K, W_V, W_O):\n    d_head = W_Q.shape[0]\n    q_n = W_Q @ x0[:, -1:]\n    k, v = W_K @ x0, W_V @ x0\n    a = softmax((q_n.T @ k)[0] / math.sqrt(d_head))\n    return W_O @ (v @ a[:, None])',
    },
    '3.2': {
        'notebook': '03_single_query_attention.ipynb',
        'title': 'Hide one word from the last token',
        'checks': ['check_hide_token'],
        'code': 'def probs_hiding(x0, j, W_Q, W_K, W_V, W_O, W_U):\n    last = x0[:, -1:]                                           # x0_n as a column (d_model, 1)\n    s = (W_Q @ last).T @ (W_K @ x0) / math.sqrt(W_Q.shape[0])   # scores of the last query (1, n)\n    s[0, j] = float("-inf")                                     # token j hidden: its weight becomes 0\n    a = softmax(s, dim=1)                                       # (1, n), still sums to 1\n    o_n = W_O @ (W_V @ x0) @ a.T                                # (d_model, 1)\n    return softmax(W_U @ (last + o_n), dim=0)                   # p_n+1 (n_vocab, 1)',
    },
    '4.1': {
        'notebook': '04_attention_matrix.ipynb',
        'title': 'Every query against every key',
        'checks': ['check_all_scores'],
        'code': 'def all_scores(x0, W_Q, W_K):\n    q, k = W_Q @ x0, W_K @ x0                         # (d_head, n) each: one column per token\n    return q.T @ k / math.sqrt(W_Q.shape[0])         # row i = query i, column j = key j',
    },
    '4.2': {
        'notebook': '04_attention_matrix.ipynb',
        'title': 'Causal attention for every position at once',
        'checks': ['check_causal_attention'],
        'code': 'def causal_attention(scores, v, W_O):\n    n = scores.shape[-1]\n    future = torch.ones(n, n, dtype=torch.bool).triu(diagonal=1)          # key j after query i\n    A = torch.softmax(scores.masked_fill(future, float("-inf")), dim=-1)  # softmax*: each row sums to 1\n    return W_O @ v @ A.T                                                  # o = W_O r, r = v Aᵀ',
    },
    '5.1': {
        'notebook': '05_multiple_heads.ipynb',
        'title': 'A whole layer, no loop over the heads',
        'checks': ['check_attention_layer'],
        'code': 'def attention_layer(x0, W_Q, W_K, W_V, W_O):\n    d_head, n = W_Q.shape[1], x0.shape[1]\n    q = torch.einsum("hdm,mn->hdn", W_Q, x0)                                   # (H, d_head, n): every head\n    k = torch.einsum("hdm,mn->hdn", W_K, x0)\n    v = torch.einsum("hdm,mn->hdn", W_V, x0)\n    S = torch.einsum("hdi,hdj->hij", q, k) / math.sqrt(d_head)                # (H, n, n) scores\n    S = S.masked_fill(torch.ones(n, n, dtype=torch.bool).triu(1), float("-inf"))   # the future: -inf\n    A = torch.softmax(S, dim=-1)                                               # softmax*, row by row\n    r = torch.einsum("hdj,hij->hdi", v, A)                                     # r^h = v^h (A^h)^T\n    return torch.einsum("hmd,hdn->mn", W_O, r)                                 # sum_h W_O^h r^h',
    },
    '5.2': {
        'notebook': '05_multiple_heads.ipynb',
        'title': 'Switch a head off by hand',
        'checks': ['check_prob_without_head'],
        'code': 'def prob_without_head(model, ids, h, target):\n    _, cache = model.run_with_cache(ids)\n    x1_n = cache["x1"][:, -1] - cache["L0.o_heads"][h, :, -1]   # o^h := 0 in x1 = x0 + sum_h o^h\n    p = softmax(model.unembed.W_U.detach() @ x1_n, dim=0)        # p_n+1 without head h\n    return float(p[target])',
    },
    '5.3': {
        'notebook': '05_multiple_heads.ipynb',
        'title': 'Patch one head by hand',
        'checks': ['check_restored_by_head'],
        'code': 'def restored_by_head(model, clean, corrupted, h, right, wrong):\n    _, clean_cache = model.run_with_cache(clean)\n    _, cache = model.run_with_cache(corrupted)\n    W_U = model.unembed.W_U.detach()\n\n    def diff(x_n):                                   # logit(right) - logit(wrong) read from the stream x_n\n        logits = W_U @ x_n\n        return float(logits[right] - logits[wrong])\n\n    x1_n = cache["x1"][:, -1]                        # the corrupted run, last position\n    patched_n = x1_n - cache["L0.o_heads"][h, :, -1] + clean_cache["L0.o_heads"][h, :, -1]   # o^h from the clean run\n    return (diff(patched_n) - diff(x1_n)) / (diff(clean_cache["x1"][:, -1]) - diff(x1_n))',
    },
    '6.1': {
        'notebook': '06_mlp.ipynb',
        'title': 'The MLP in two lines',
        'checks': ['check_mlp'],
        'code': 'def my_mlp(x, W_1, b_1, W_2, b_2):\n    z = torch.relu(W_1 @ x + b_1[:, None])         # (d_mlp, n): the hidden layer\n    return W_2 @ z + b_2[:, None]                  # (d_model, n): m',
    },
    '6.2': {
        'notebook': '06_mlp.ipynb',
        'title': 'The neurons one fact needs',
        'checks': ['check_fact_neurons'],
        'code': 'def fact_neurons(model, prompt, answer):\n    _, cache = model.run_with_cache(prompt)\n    z = cache["L0.z"][:, -1]                                        # (d_mlp,): the hidden layer at the thing\n    W_U, W_2 = model.unembed.W_U, model.blocks[0].mlp.W_2\n    effect = z * (W_U[answer] @ W_2)                                # direct effect of each neuron on the logit\n    order = effect.argsort(descending=True).tolist()\n    for size in range(1, len(order) + 1):\n        with ablated(model, neurons=[(0, j) for j in order[:size]]):\n            probs = model.next_token_probs(prompt)                  # with those neurons off\n        if probs.argmax() != answer:                                # the first guess is wrong: flipped\n            return order[:size]\n    return order                                                    # never flips: the MLP does not hold it',
    },
    '7.1': {
        'notebook': '07_layernorm.ipynb',
        'title': 'Write LayerNorm',
        'checks': ['check_layer_norm'],
        'code': 'def my_layer_norm(x, gamma, beta, eps=1e-5):\n    mu = x.mean(dim=0, keepdim=True)\n    var = ((x - mu) ** 2).mean(dim=0, keepdim=True)\n    return (x - mu) / torch.sqrt(var + eps) * gamma[:, None] + beta[:, None]',
    },
    '7.2': {
        'notebook': '07_layernorm.ipynb',
        'title': 'What ε does to a quiet column',
        'checks': ['check_std_after'],
        'code': 'def std_after(var, eps):\n    return torch.sqrt(var / (var + eps))',
    },
    '7.3': {
        'notebook': '07_layernorm.ipynb',
        'title': 'The gradient through LayerNorm',
        'checks': ['check_layer_norm_grad'],
        'code': 'def layer_norm_grad(x, gamma, eps, g):\n    mu = x.mean(dim=0, keepdim=True)                                     # (1, n): one mean per column\n    sigma = torch.sqrt(((x - mu) ** 2).mean(dim=0, keepdim=True) + eps)  # (1, n): one sigma per column\n    x_hat = (x - mu) / sigma\n    h = g * gamma[:, None]                                               # the gradient reaching x_hat\n    h_mean = h.mean(dim=0, keepdim=True)                                 # (1, n): the mean of h per column\n    return (h - h_mean - x_hat * (h * x_hat).mean(dim=0, keepdim=True)) / sigma',
    },
    '8.1': {
        'notebook': '08_full_transformer.ipynb',
        'title': 'Count the parameters from the config',
        'checks': ['check_n_params'],
        'code': 'def n_params(cfg):\n    D = cfg.d_model\n    per_layer = (4 * cfg.n_heads * cfg.d_head * D          # W_Q, W_K, W_V, W_O for every head\n                 + 2 * D * cfg.d_mlp + cfg.d_mlp + D        # W_1, b_1, W_2, b_2\n                 + 2 * 2 * D)                               # two LayerNorms: gamma, beta\n    return (D * cfg.n_vocab + D * cfg.n_ctx                 # W_E, W_pos\n            + cfg.n_layers * per_layer\n            + 2 * D                                         # final LayerNorm\n            + cfg.n_vocab * D)                              # W_U',
    },
    '8.2': {
        'notebook': '08_full_transformer.ipynb',
        'title': 'One training step',
        'checks': ['check_train_step'],
        'code': 'def train_step(model, optimizer, batch):\n    logits = model(batch[:, :-1])                                          # (B, n_vocab, n): a guess after each token\n    loss = torch.nn.functional.cross_entropy(logits, batch[:, 1:])         # scored against the token that came next\n    loss.backward()\n    optimizer.step()\n    optimizer.zero_grad()\n    return loss.item()',
    },
    '9.1': {
        'notebook': '09_induction_heads.ipynb',
        'title': 'An induction-score detector',
        'checks': ['check_induction_score'],
        'code': 'def my_induction_score(A, tokens):\n    n = tokens.shape[-1]\n    keys = torch.zeros(n, n, dtype=torch.bool)\n    keys[:, 1:] = tokens[:, None] == tokens[None, :-1]       # keys[i, j]: t_(j-1) = t_i\n    keys &= torch.ones(n, n, dtype=torch.bool).tril()        # only keys the query can see\n    rows = keys.any(-1)                                      # queries whose token occurred before\n    return (A * keys).sum(-1)[:, rows].mean(-1)',
    },
    '9.2': {
        'notebook': '09_induction_heads.ipynb',
        'title': 'Remove a head, measure the repeat',
        'checks': ['check_loss_without'],
        'code': "def loss_on_repeat_without(model, tokens, heads):\n    half = tokens.shape[-1] // 2\n    with ablated(model, heads=heads):                    # o^h := 0 for these heads, restored afterwards\n        loss = per_position_loss(model, tokens)          # (batch, n - 1): column i predicts token i + 1\n    return float(loss[:, half:].mean())                  # column half - 1 predicts the repeat's first token",
    },
    '9.3': {
        'notebook': '09_induction_heads.ipynb',
        'title': 'Fool the induction head',
        'checks': ['check_confident_mistake'],
        'code': 'def fooling_sequence():\n    return "my car is red. my ca", "t"      # "my ca" -> the model copies "r"; we meant "my cat"',
    },
    '10.1': {
        'notebook': '10_circuits_and_cost.ipynb',
        'title': "A head's two circuits",
        'checks': ['check_head_circuits'],
        'code': 'def head_circuits(W_Q, W_K, W_V, W_O):\n    W_QK = W_Q.T @ W_K      # (d_model, d_model): x_i^T W_QK x_j = q_i^T k_j\n    W_OV = W_O @ W_V        # (d_model, d_model): attending to x_j writes W_OV x_j\n    return W_QK, W_OV',
    },
    '10.2': {
        'notebook': '10_circuits_and_cost.ipynb',
        'title': 'A K-composition score',
        'checks': ['check_k_composition'],
        'code': 'def k_composition(W_QK, W_OV):\n    reads = W_QK @ W_OV     # the key side: x_i^T W_QK (W_OV x_j)\n    return torch.linalg.matrix_norm(reads) / (torch.linalg.matrix_norm(W_QK) * torch.linalg.matrix_norm(W_OV))',
    },
    '10.3': {
        'notebook': '10_circuits_and_cost.ipynb',
        'title': 'The cost of a causal head',
        'checks': ['check_causal_mults'],
        'code': "def causal_mults(d_model, d_head, n_ctx):\n    projections = 4 * d_model * d_head * n_ctx      # W_Q, W_K, W_V x_i and W_O r_i: once per position, mask or not\n    pairs = n_ctx * (n_ctx + 1) // 2                # (i, j) with j <= i: 1 + 2 + ... + n_ctx\n    return projections + pairs * 2 * d_head         # q_i . k_j and A_ij v_j: d_head each\n    # GPT-2 Small's head: 268,500,992 instead of 335,544,320, d_head n_ctx (n_ctx - 1) fewer: about 20 % saved",
    },
    '10.4': {
        'notebook': '10_circuits_and_cost.ipynb',
        'title': 'The induction circuit, by hand',
        'checks': ['check_induction_circuits'],
        'code': 'def induction_circuits(L):\n    d = L.d_model\n    W_QK0, W_OV0, W_QK1, W_OV1 = (torch.zeros(d, d) for _ in range(4))\n    for i in range(1, L.n_ctx):\n        W_QK0[L.pos(i), L.pos(i - 1)] = 80.0   # query at position i -> key at position i - 1 (80 / 8 = 10)\n    for t in range(L.n_vocab):\n        W_OV0[L.prev(t), L.tok(t)] = 1.0       # the key\'s token t, written as "the token before me was t"\n        W_QK1[L.tok(t), L.prev(t)] = 80.0      # query token t -> a key whose predecessor was t\n        W_OV1[L.out(t), L.tok(t)] = 10.0       # the token found there, copied into its logit\n    return W_QK0, W_OV0, W_QK1, W_OV1',
    },
    '11.1': {
        'notebook': '11_gpt2.ipynb',
        'title': 'The probability of a continuation',
        'checks': ['check_continuation_logprob'],
        'code': 'def log_p_continuation(model, prompt, continuation):\n    ids = torch.cat([prompt, continuation])\n    with torch.no_grad():\n        logp = torch.log_softmax(model(ids[:-1]), dim=0)     # (n_vocab, n + m - 1): column i guesses token i + 1\n    n, m = len(prompt), len(continuation)\n    return float(logp[continuation, torch.arange(n - 1, n - 1 + m)].sum())',
    },
    '11.2': {
        'notebook': '11_gpt2.ipynb',
        'title': 'An analogy in the embedding',
        'checks': ['check_analogy'],
        'code': 'def analogy_by_hand(W_E, a, b, c, k):\n    v = W_E[:, a] - W_E[:, b] + W_E[:, c]                  # (d_model,)\n    cos = (v @ W_E) / (W_E.norm(dim=0) * v.norm())         # (n_vocab,): the cosine with every column\n    cos[[a, b, c]] = -math.inf                              # the inputs are left out\n    return cos.topk(k).indices',
    },
    '11.3': {
        'notebook': '11_gpt2.ipynb',
        'title': 'The lens, scored state by state',
        'checks': ['check_lens_loss'],
        'code': 'def lens_loss_by_hand(model, tokens):\n    with torch.no_grad():\n        _, cache = model.run_with_cache(tokens)\n        X = torch.stack([cache[k] for k in cache.resid_names], dim=1)               # (batch, states, d_model, n)\n        logp = torch.log_softmax(model.unembed.W_U @ model.ln_final(X), dim=-2)      # (batch, states, n_vocab, n)\n        nxt = tokens[:, None, None, 1:].expand(-1, X.shape[1], 1, -1)              # t_(j+1) for column j\n        return -logp[..., :-1].gather(-2, nxt).squeeze(-2).mean(dim=(0, 2))        # (states,)',
    },
}
