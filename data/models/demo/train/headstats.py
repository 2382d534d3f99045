"""Per-head attention statistics over a set of sentences (what the model card reports).

For one attention array A [L,H,n,n] (row = query, column = key) and its token ids:
  prev  = mean over queries i >= 1     of A[i, i-1]
  next  = mean over queries i <= n-2   of A[i, i+1]
  self  = mean over all queries        of A[i, i]
  cls   = mean over all queries        of A[i, 0]            ([CLS] is position 0)
  sep   = mean over all queries        of sum of A[i, j] over the [SEP] positions j
  special = cls + sep
  entropy = mean over queries of the row's entropy divided by log(n) (1 = uniform, 0 = one key)
Statistics are pooled over all query rows of all sentences (each row weighs the same).
"""

import numpy as np

KEYS = ("prev", "next", "self", "cls", "sep", "special", "entropy")


class HeadStats:
    def __init__(self, layers, heads):
        self.sums = {k: np.zeros((layers, heads)) for k in KEYS}
        self.counts = {k: 0 for k in KEYS}
        self.sentences = 0

    def add(self, att, ids, sep_id):
        """att [L,H,n,n] numpy; ids [n]."""
        att = np.asarray(att, dtype=np.float64)
        n = att.shape[-1]
        idx = np.arange(n)
        seps = [j for j in range(n) if ids[j] == sep_id]
        if n >= 2:
            self.sums["prev"] += att[:, :, idx[1:], idx[1:] - 1].sum(-1)
            self.sums["next"] += att[:, :, idx[:-1], idx[:-1] + 1].sum(-1)
            self.counts["prev"] += n - 1
            self.counts["next"] += n - 1
        self.sums["self"] += att[:, :, idx, idx].sum(-1)
        self.sums["cls"] += att[:, :, :, 0].sum(-1)
        sep = att[:, :, :, seps].sum(-1).sum(-1) if seps else 0.0
        self.sums["sep"] += sep
        self.sums["special"] += att[:, :, :, 0].sum(-1) + sep
        if n >= 2:
            ent = -(att * np.log(np.maximum(att, 1e-30))).sum(-1) / np.log(n)
            self.sums["entropy"] += ent.sum(-1)
            self.counts["entropy"] += n
        for k in ("self", "cls", "sep", "special"):
            self.counts[k] += n
        self.sentences += 1

    def means(self):
        return {k: self.sums[k] / max(self.counts[k], 1) for k in KEYS}


def best(means, key):
    """(value, layer, head) of the head with the largest mean for key."""
    m = means[key]
    li, hi = np.unravel_index(int(np.argmax(m)), m.shape)
    return float(m[li, hi]), int(li), int(hi)


def role(means, layer, head, threshold=0.3):
    """A short label for what one head mostly does, with its value."""
    cands = [("previous token", means["prev"][layer, head]),
             ("next token", means["next"][layer, head]),
             ("self", means["self"][layer, head]),
             ("[CLS]", means["cls"][layer, head]),
             ("[SEP]", means["sep"][layer, head])]
    name, v = max(cands, key=lambda c: c[1])
    if v < threshold:
        return "broad / content (no single position)", float(v)
    return name, float(v)
