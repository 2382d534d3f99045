#!/usr/bin/python3
"""Reference figures for causal head importance (attnscope importance on a GPT-2 model).

For tests/hf/models/gpt2-f32 (2 layers x 4 heads), the next-token loss over a few sentences
- the mean over every real token t followed by a real token of -ln p(token t+1 | tokens
0..t) - of the plain model, of the model with each head switched off alone (Hugging Face's
head_mask: that head's probabilities multiplied by 0) and with each head kept alone in its
layer (head_mask 0 for the layer's other heads).  The forward is GPT2LMHeadModel's, written
out from scratch in torch float64 from the folder's own safetensors (the tied LM head
logits = ln_f(h) wte^T); with an all-ones head_mask its attention and hidden states are
cross-checked against tests/hf/gen_gpt2.py's gpt2_forward.  It never calls attnscope.

Writes tests/whatif/fixtures/importance-gpt2.json:
  sentences: [{text?, ids, mask}]  (text lines tokenize as [CLS] words [SEP] in the
             folder's WordPiece vocabulary, as gen_gpt2.py's "text" case)
  predicted, base_loss, off_delta [L][H], keep_delta [L][H]

Run with Debian's python3-torch:  /usr/bin/python3 tests/whatif/gen_importance_gpt2.py
"""
import json
import math
import os
import struct
import sys

import numpy as np
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "hf"))
from gen_gpt2 import gpt2_forward, activation, conv1d  # noqa: E402

MODEL = os.path.join(ROOT, "tests", "hf", "models", "gpt2-f32")


def read_safetensors(path):
    with open(path, "rb") as f:
        data = f.read()
    (hlen,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + hlen])
    base = 8 + hlen
    out = {}
    for name, info in header.items():
        if name == "__metadata__" or info["dtype"] != "F32":
            continue   # the uint8 causal buffers and masked_bias scalars are not weights
        a, b = info["data_offsets"]
        t = np.frombuffer(data[base + a:base + b], dtype="<f4").reshape(info["shape"])
        if name.endswith(".attn.masked_bias"):
            continue
        key = name[len("transformer."):] if name.startswith("transformer.") else name
        out[key] = torch.tensor(t.astype(np.float64))
    return out


def forward(R, cfg, ids, mask, head_mask):
    """GPT2Model.forward with head_mask [L][H] (multiplied into the softmax probabilities, as
    GPT2Attention._attn does), then ln_f; returns attention [L,H,n,n], hidden [L+1,n,d]."""
    d, H, L = cfg["n_embd"], cfg["n_head"], cfg["n_layer"]
    k = d // H
    eps = cfg["layer_norm_epsilon"]
    act = activation(cfg["activation_function"])
    n = len(ids)
    h = R["wte.weight"][torch.tensor(ids)] + R["wpe.weight"][torch.arange(n)]
    causal = torch.tril(torch.ones(n, n, dtype=torch.bool))
    fmin = torch.finfo(torch.float64).min
    pad = (1.0 - torch.tensor(mask, dtype=torch.float64)) * fmin
    hiddens, attns = [], []
    for i in range(L):
        hiddens.append(h)
        p = f"h.{i}."
        a = F.layer_norm(h, (d,), R[p + "ln_1.weight"], R[p + "ln_1.bias"], eps)
        q, kk, v = conv1d(a, R[p + "attn.c_attn.weight"], R[p + "attn.c_attn.bias"]).split(d, dim=1)
        q, kk, v = (x.view(n, H, k).transpose(0, 1) for x in (q, kk, v))
        w = torch.matmul(q, kk.transpose(-1, -2)) / math.sqrt(k)
        w = torch.where(causal, w, torch.full([], fmin, dtype=w.dtype)) + pad
        w = torch.softmax(w, dim=-1)
        w = w * head_mask[i].view(H, 1, 1)
        attns.append(w)
        ctx = torch.matmul(w, v).transpose(0, 1).reshape(n, d)
        h = h + conv1d(ctx, R[p + "attn.c_proj.weight"], R[p + "attn.c_proj.bias"])
        m = F.layer_norm(h, (d,), R[p + "ln_2.weight"], R[p + "ln_2.bias"], eps)
        h = h + conv1d(act(conv1d(m, R[p + "mlp.c_fc.weight"], R[p + "mlp.c_fc.bias"])),
                       R[p + "mlp.c_proj.weight"], R[p + "mlp.c_proj.bias"])
    h = F.layer_norm(h, (d,), R["ln_f.weight"], R["ln_f.bias"], eps)
    hiddens.append(h)
    return torch.stack(attns), torch.stack(hiddens)


def loss_sum(R, cfg, sent, head_mask):
    ids, mask = sent["ids"], sent["mask"]
    _, hidden = forward(R, cfg, ids, mask, head_mask)
    logp = torch.log_softmax(hidden[-1] @ R["wte.weight"].T, dim=-1)
    total, count = 0.0, 0
    for t in range(len(ids) - 1):
        if mask[t] and mask[t + 1]:
            total -= float(logp[t, ids[t + 1]])
            count += 1
    return total, count


def main():
    with open(os.path.join(MODEL, "config.json")) as f:
        cfg = json.load(f)
    with open(os.path.join(MODEL, "vocab.txt")) as f:
        vocab = f.read().split("\n")
    R = read_safetensors(os.path.join(MODEL, "model.safetensors"))
    L, H = cfg["n_layer"], cfg["n_head"]
    texts = ["the cat sat on the mat", "a dog ran to the park", "we like tea", "one"]
    sents = [{"text": t, "ids": [2] + [vocab.index(w) for w in t.split()] + [3]} for t in texts]
    for s in sents:
        s["mask"] = [1] * len(s["ids"])
    # ids with right padding (0 = [PAD]): the padded tokens predict nothing and are not predicted
    sents.append({"ids": [7, 12, 40, 9, 33, 0, 0], "mask": [1, 1, 1, 1, 1, 0, 0]})

    ones = torch.ones(L, H, dtype=torch.float64)
    # the head_mask forward with every head on is gen_gpt2.py's forward
    for s in sents:
        a1, h1 = forward(R, cfg, s["ids"], s["mask"], ones)
        a2, h2, _ = gpt2_forward(R, cfg, s["ids"], s["mask"])
        assert torch.allclose(a1, a2, atol=1e-12) and torch.allclose(h1, h2, atol=1e-12)

    def mean_loss(hm, subset):
        tot, cnt = 0.0, 0
        for s in subset:
            a, b = loss_sum(R, cfg, s, hm)
            tot, cnt = tot + a, cnt + b
        return tot / cnt, cnt

    def figures(subset):
        base, predicted = mean_loss(ones, subset)
        off = [[0.0] * H for _ in range(L)]
        keep = [[0.0] * H for _ in range(L)]
        for l in range(L):
            for h in range(H):
                hm = ones.clone()
                hm[l, h] = 0
                off[l][h] = mean_loss(hm, subset)[0] - base
                hm = ones.clone()
                hm[l, :] = 0
                hm[l, h] = 1
                keep[l][h] = mean_loss(hm, subset)[0] - base
        return {"predicted": predicted, "base_loss": base, "off_delta": off, "keep_delta": keep}

    out = {"model": "gpt2-f32", "layers": L, "heads": H, "sentences": sents}
    out.update(figures(sents))
    # the text lines alone, as a corpus file gives them to `attnscope importance`
    out["text_only"] = figures([s for s in sents if "text" in s])
    base, predicted = out["base_loss"], out["predicted"]
    path = os.path.join(HERE, "fixtures", "importance-gpt2.json")
    with open(path, "w") as f:
        json.dump(out, f, indent=1)
    print(f"{path}: base loss {base:.6f} over {predicted} predicted tokens")


if __name__ == "__main__":
    main()
