"""Every PyTorch operation the series uses, with the place that first shows it.

No PyTorch is assumed: each operation below is shown — on a tiny tensor, in a sentence, or in a comment beside its
first use — at or before the first cell, hint or exercise that uses it. To see the list in a notebook:

    from helpers import idioms
    idioms.table()                # every operation, in the order you meet them (a cell's last line: a table)
    idioms.table("05")            # those a notebook shows first

Each entry: (the operation, the notebook that first shows it, the section it is in, what it does). An operation
written ``.name`` is a method or attribute of a tensor (or of a model, or an optimizer); ``torch.name`` and ``F.name``
(``torch.nn.functional``) are functions; ``dim=`` and ``keepdim=`` are the arguments many of them take.
"""

from __future__ import annotations

IDIOMS: list[tuple[str, str, str, str]] = [
    # 01 · Bigrams and n-grams
    (".float", "01", "1. The corpus and its tokens", "turns True/False (or whole numbers) into 1.0/0.0"),
    (".mean", "01", "1. The corpus and its tokens", "the average of all entries (or along `dim=`)"),
    (".tolist", "01", "1. The corpus and its tokens", "a tensor's numbers as a Python list"),
    (".shape", "01", "2. Counting bigrams", "how many entries along each dimension, e.g. (rows, columns)"),
    (".sum", "01", "2. Counting bigrams", "adds all entries (or along `dim=`)"),
    ("torch.Tensor", "01", "PyTorch in one cell", "the type of a tensor, as written in a function's signature"),
    ("torch.tensor", "01", "PyTorch in one cell", "makes a tensor from (nested) lists of numbers"),
    ("dim=", "01", "PyTorch in one cell", "the dimension an operation runs along: 0 down the rows, 1 along them"),
    ("keepdim=", "01", "PyTorch in one cell", "keeps the summed dimension with size 1, ready to broadcast"),
    ("torch.log", "01", "PyTorch in one cell", "the natural logarithm of every entry"),
    (".clamp", "01", "PyTorch in one cell", "raises every entry below `min` to `min` (or lowers above `max`)"),
    ("torch.clamp", "01", "Exercise 1.1", "the same as `.clamp`, written as a function"),
    ("torch.where", "01", "Exercise 1.1", "picks from one tensor where a condition holds, from another elsewhere"),
    ("torch.allclose", "01", "Exercise 1.1", "whether two tensors are equal up to rounding"),
    ("torch.ones", "01", "Exercise 1.1", "a tensor of the given shape full of 1s"),
    ("torch.nonzero", "01", "Exercise 1.1", "the positions of the entries that are not 0 (or True)"),
    (".flatten", "01", "Exercise 1.1", "the same numbers as one long vector"),
    ("torch.equal", "01", "3. What comes next?", "whether two tensors have the same shape and exactly equal entries"),
    # 02 · The zero-layer Transformer
    ("@", "02", "1. Tokens as one-hot columns", "matrix product: (a, b) @ (b, c) gives (a, c)"),
    ("torch.no_grad", "02", "1. Tokens as one-hot columns", "a block in which PyTorch records nothing for gradients"),
    ("torch.exp", "02", "3. Unembedding, logits and softmax", "e to the power of every entry"),
    (".max", "02", "Exercise 2.1", "the largest entry; along `dim=`, the largest values and where they are"),
    (".abs", "02", "Exercise 2.1", "the absolute value of every entry"),
    (".min", "02", "Exercise 2.1", "the smallest entry (or along `dim=`)"),
    (".values", "02", "Exercise 2.1", "the largest (or sorted) values of what `.max`, `.topk` or `.sort` return"),
    (".indices", "02", "Exercise 2.1", "where those values are"),
    ("torch.randn", "02", "Exercise 2.1", "random numbers around 0 (a normal distribution), of the given shape"),
    ("torch.softmax", "02", "Exercise 2.1", "PyTorch's own softmax along `dim`"),
    ("torch.arange", "02", "More PyTorch for the exercises", "the whole numbers 0, 1, ..., n - 1 (or from a start)"),
    ("torch.zeros_like", "02", "More PyTorch for the exercises", "zeros of the same shape as a tensor"),
    ("x[i] = v", "02", "More PyTorch for the exercises", "writes into entries, picked by indices or index tensors"),
    (".T", "02", "More PyTorch for the exercises", "the transpose: rows become columns"),
    ("torch.log_softmax", "02", "More PyTorch for the exercises", "ln of softmax, computed without overflow"),
    (".backward", "02", "Gradients in PyTorch", "adds the loss's gradient into `.grad` of every recorded tensor"),
    (".item", "02", "Gradients in PyTorch", "a one-number tensor as a Python number"),
    (".grad", "02", "Gradients in PyTorch", "where `.backward()` puts a tensor's gradient"),
    (".requires_grad_", "02", "Gradients in PyTorch", "asks PyTorch to record what is computed from a tensor"),
    (".detach", "02", "Gradients in PyTorch", "the same numbers, without the recording"),
    (".clone", "02", "More PyTorch for the exercises", "a copy, so changing it leaves the original alone"),
    ("F.one_hot", "02", "Exercise 2.3", "one-hot rows: a 1 in the column of each id"),
    (".expand", "02", "How close is", "repeats a size-1 dimension, without copying"),
    ("torch.argsort", "02", "How close is", "the positions that would sort a tensor"),
    ("torch.linalg.matrix_rank", "02", "5. Why", "the rank of a matrix"),
    # 03 · Attention for one token
    (".numel", "03", "Exercise 3.1", "how many numbers a tensor holds"),
    ("torch.testing.assert_close", "03", "Exercise 3.1", "fails unless two tensors agree up to rounding"),
    (".all", "03", "Exercise 3.1", "whether every entry is True"),
    ("torch.Generator", "03", "Why divide by", "a random-number source of its own, seeded"),
    (".var", "03", "Why divide by", "the variance of the entries"),
    (".topk", "03", "Why divide by", "the k largest entries and where they are"),
    ("torch.cosine_similarity", "03", "The same word, four contexts", "the cosine of the angle between two vectors"),
    # 04 · The attention matrix
    ("torch.float64", "04", "What value means", "64-bit floats: more digits than the default 32-bit"),
    (".tril", "04", "Exercise 4.2", "keeps the lower triangle, zeros the rest"),
    (".triu", "04", "Exercise 4.2", "keeps the upper triangle, zeros the rest"),
    (".masked_fill", "04", "Exercise 4.2", "a copy with a value wherever a boolean mask is True"),
    (".bool", "04", "Exercise 4.2", "turns ones and zeros into True and False"),
    ("torch.bool", "04", "Exercise 4.2", "the type of True/False tensors"),
    ("torch.stack", "04", "Results and outputs", "puts tensors of one shape side by side along a new dimension"),
    ("F.scaled_dot_product_attention", "04", "Results and outputs", "PyTorch's own attention, to compare with"),
    (".reshape", "04", "Why the mask is needed", "the same numbers in another shape"),
    (".diagonal", "04", "Why the mask is needed", "the entries on a diagonal"),
    (".repeat", "04", "Does a model without", "the tensor repeated, end to end"),
    ("torch.corrcoef", "04", "Does a model without", "the correlation of the rows of a matrix"),
    (".log", "04", "Does a model without", "the natural logarithm, as a method"),
    (".norm", "04", "Does a model without", "a vector's length (along `dim=`)"),
    (".argmax", "04", "Explore the patterns", "where the largest entry is"),
    # 05 · Multiple heads
    ("torch.einsum", "05", "`einsum`, in one cell", "products and sums written with one letter per dimension"),
    (".mT", "05", "Exercise 5.1", "transposes the last two dimensions (every head at once)"),
    ("torch.cat", "05", "The concatenated view", "joins tensors end to end along an existing dimension"),
    (".argmin", "05", "All heads, side by side", "where the smallest entry is"),
    (".sort", "05", "Exercise 5.3", "the entries sorted, with where they came from"),
    # 06 · The MLP
    ("torch.relu", "06", "Exercise 6.1", "max(0, x) for every entry"),
    (".parameters", "06", "Exercise 6.1", "every weight tensor of a model or layer"),
    (".normal_", "06", "Exercise 6.1", "overwrites a tensor with random normal numbers"),
    ("torch.linspace", "06", "ReLU and GELU", "evenly spaced numbers from a start to an end"),
    ("F.gelu", "06", "ReLU and GELU", "PyTorch's GELU"),
    ("torch.erf", "06", "ReLU and GELU", "the error function"),
    (".median", "06", "Explore: which neurons fire?", "the middle value"),
    (".unique", "06", "Explore: which neurons fire?", "the distinct values"),
    (".argsort", "06", "Exercise 6.2", "the positions that would sort a tensor"),
    # 07 · LayerNorm
    ("torch.var", "07", "Exercise 7.1", "the variance (dividing by n - 1 unless told otherwise)"),
    ("torch.sqrt", "07", "Exercise 7.1", "the square root of every entry"),
    ("torch.zeros", "07", "Exercise 7.1", "a tensor of the given shape full of 0s"),
    ("torch.full", "07", "Exercise 7.1", "a tensor of the given shape full of one number"),
    (".std", "07", "Exercise 7.1", "the standard deviation"),
    (".copy_", "07", "Exercise 7.1", "overwrites a tensor with another's numbers, in place"),
    ("torch.manual_seed", "07", "The same as PyTorch", "seeds PyTorch's random numbers"),
    ("torch.nn.LayerNorm", "07", "The same as PyTorch", "PyTorch's LayerNorm, to compare with"),
    ("torch.rand", "07", "Invariance", "random numbers between 0 and 1"),
    ("torch.nn.RMSNorm", "07", "RMSNorm", "PyTorch's RMSNorm, to compare with"),
    (".unsqueeze", "07", "Exercise 7.3", "adds a size-1 dimension, as `[:, None]` does"),
    # 08 · The full Transformer
    (".dim", "08", "The model, end to end", "how many dimensions a tensor has"),
    ("torch.topk", "08", "The model, end to end", "the k largest entries and where they are"),
    (".named_parameters", "08", "Exercise 8.1", "every weight tensor of a model, with its name"),
    ("F.cross_entropy", "08", "Exercise 8.2", "PyTorch's cross-entropy from logits"),
    (".step", "08", "Exercise 8.2", "an optimizer's update of every weight"),
    (".zero_grad", "08", "Exercise 8.2", "clears every weight's `.grad` before the next `.backward()`"),
    (".nonzero", "08", "The logit lens", "the positions of the entries that are not 0 (or True)"),
    ("torch.randint", "08", "The logit lens", "random whole numbers in a range"),
    # 09 · Induction heads
    (".any", "09", "Exercise 9.1", "whether any entry is True (along `dim`)"),
    ("torch.random.fork_rng", "09", "6. The composition, measured",
     "a block whose random numbers leave the ones after it as they were"),
    ("torch.randperm", "09", "7. Does it generalise?", "the numbers 0..n - 1 in a random order"),
    # 10 · Circuits and cost
    (".nanmean", "10", "Reading the circuits", "the mean, leaving out NaN entries"),
    ("torch.linalg.eigvals", "10", "4. Copying", "the eigenvalues of a square matrix"),
    (".real", "10", "4. Copying", "the real part of complex numbers"),
    ("torch.linalg.matrix_norm", "10", "Exercise 10.2", "the size of a matrix as one number"),
    # 11 · GPT-2
    (".gather", "11", "Exercise 11.3", "picks one entry per position with a tensor of indices"),
    (".squeeze", "11", "Exercise 11.3", "drops a size-1 dimension"),
]

WHERE = {idiom: (notebook, section) for idiom, notebook, section, _ in IDIOMS}


# sections whose heading goes on with a formula after the words kept here
CUT = {"How close is", "5. Why", "Why divide by", "Does a model without"}


class Table(str):
    """A markdown table that a notebook shows as a table when it is a cell's last line (``print`` gives the text)."""

    def _repr_markdown_(self) -> str:
        return str(self)


def table(notebook: str | None = None) -> Table:
    """The list as a markdown table (only what `notebook`, e.g. "05", shows first, if given); as a cell's last line
    it is shown as a table. A section named up to a formula in its heading ends in "…"."""
    rows = ["| PyTorch | what it does | first shown in |", "|---|---|---|"]
    for idiom, nb, section, says in IDIOMS:
        if notebook is None or nb == notebook:
            rows.append(f"| `{idiom}` | {says} | {nb} · {section}{' …' if section in CUT else ''} |")
    return Table("\n".join(rows))
