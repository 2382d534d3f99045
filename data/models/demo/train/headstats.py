"""Per-head attention statistics over a set of sentences (what the model card reports).

Defined like the engine's `attnscope stats` (engine/analysis/head-stats.c): for each sentence, means
over its query rows, then the mean over sentences (each sentence weighs the same).  For one
attention array A [L,H,n,n] (row = query, column = key) and its token ids:
  prev    = mean over rows i >= 1   of A[i, i-1]
  next    = mean over rows i <= n-2 of A[i, i+1]
  self    = mean over rows          of A[i, i]
  cls     = mean over rows          of the weight on the [CLS] token(s)
  sep     = mean over rows          of the weight on the [SEP] token(s)
  special = cls + sep
  entropy = mean over rows of the row's entropy / log(n) (1 = uniform, 0 = a single key)
The acceptance criterion (docs/ARCHITECTURE.md, "Targets") for a "vertical" head is max(cls, sep) >= 0.5, as the
engine labels "vertical [CLS]" / "vertical [SEP]".
"""

import numpy as np

KEYS = ("prev", "next", "self", "cls", "sep", "special", "vertical", "entropy")


class HeadStats:
    def __init__(self, layers, heads):
        self.sums = {k: np.zeros((layers, heads)) for k in KEYS}
        self.sentences = 0

    def add(self, att, ids, sep_id, cls_id=2):
        """att [L,H,n,n] numpy; ids [n] (n >= 2)."""
        att = np.asarray(att, dtype=np.float64)
        n = att.shape[-1]
        idx = np.arange(n)
        seps = [j for j in range(n) if ids[j] == sep_id]
        clss = [j for j in range(n) if ids[j] == cls_id]
        self.sums["prev"] += att[:, :, idx[1:], idx[1:] - 1].mean(-1)
        self.sums["next"] += att[:, :, idx[:-1], idx[:-1] + 1].mean(-1)
        self.sums["self"] += att[:, :, idx, idx].mean(-1)
        cls = att[:, :, :, clss].sum(-1).mean(-1) if clss else 0.0
        sep = att[:, :, :, seps].sum(-1).mean(-1) if seps else 0.0
        self.sums["cls"] += cls
        self.sums["sep"] += sep
        self.sums["special"] += cls + sep
        ent = -(att * np.log(np.maximum(att, 1e-30))).sum(-1) / np.log(n)
        self.sums["entropy"] += ent.mean(-1)
        self.sentences += 1

    def means(self):
        m = {k: self.sums[k] / max(self.sentences, 1) for k in KEYS}
        m["vertical"] = np.maximum(m["cls"], m["sep"])
        return m


def best(means, key):
    """(value, layer, head) of the head with the largest mean for key."""
    m = np.asarray(means[key])
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
