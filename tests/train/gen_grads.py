#!/usr/bin/python3
"""Reference gradients for the training lab (tests/train/test-train-grads.c).

A from-scratch PyTorch model in float64, written from Hugging Face's modeling code
(modeling_gpt2.py: GPT2LMHeadModel, Conv1D weights [in, out], Q/K/V fused in c_attn,
gelu_new, the shifted loss; modeling_bert.py: BertForMaskedLM, [out, in] weights, exact
gelu, the cls.predictions head tied to the word embeddings), with the training lab's
variants: post-LN, pre-LN (ln_f at the end) or no LayerNorm; learned, sinusoidal or no
positions; full, causal or window attention.  Weights come from a formula both sides
compute (weight()), the batch and labels are written here; the script writes the loss and
autograd's gradient of every parameter, and two torch.optim.AdamW steps from given
gradients.

Run: /usr/bin/python3 tests/train/gen_grads.py   (writes tests/train/grads.json)
"""
import json
import math
import os

import numpy as np
import torch

torch.set_default_dtype(torch.float64)
HERE = os.path.dirname(os.path.abspath(__file__))

# the C side's layout for the copy task: length 3 -> 2*3+2 = 8 tokens; symbols 4 -> 5
# specials + 4 symbols + 4 extras = 13 tokens
LENGTH, SYMBOLS, N, V = 3, 4, 8, 13
D, H, F, LAYERS, BATCH = 8, 2, 12, 2, 2
EPS = 1e-5

CASES = [
    # name, decoder, norm, positions, attention, window
    ("gpt2-pre-learned", True, "pre", "learned", "full", 0),
    ("bert-post-learned", False, "post", "learned", "full", 0),
    ("dec-post-sinusoidal-window", True, "post", "sinusoidal", "window", 2),
    ("enc-pre-none-window", False, "pre", "none", "window", 1),
    ("dec-noln-none", True, "none", "none", "full", 0),
    ("enc-post-sinusoidal-causal", False, "post", "sinusoidal", "causal", 0),
    ("gpt2-pre-alibi", True, "pre", "alibi", "full", 0),
    ("bert-post-alibi-window", False, "post", "alibi", "window", 2),
    ("gpt2-pre-rotary", True, "pre", "rotary", "full", 0),
    ("enc-post-rotary-window", False, "post", "rotary", "window", 2),
]
ROTARY = False   # the case rotates q and k
ALIBI = None   # the case's [H] slopes, or None


def weight(name, shape):
    """The weights both sides compute: a smooth function of the element index and of the
    name's byte sum (LayerNorm gains around 1)."""
    j = sum(name.encode()) % 97
    k = np.arange(int(np.prod(shape)), dtype=np.float64)
    v = 0.3 * np.sin(0.37 * k + 1.1 * j)
    if name.endswith("LayerNorm.weight") or ".ln_" in name and name.endswith(".weight"):
        v = 1.0 + 0.1 * v
    return torch.tensor(v.astype(np.float32).astype(np.float64).reshape(shape), requires_grad=True)


def sinusoid(n, d):
    pos = np.array([[p / np.power(10000, 2 * (j // 2) / d) for j in range(d)] for p in range(n)])
    out = np.zeros((n, d))
    out[:, 0::2] = np.sin(pos[:, 0::2])
    out[:, 1::2] = np.cos(pos[:, 1::2])
    return torch.tensor(out.astype(np.float32).astype(np.float64))


def gelu_new(x):
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


def gelu(x):
    return 0.5 * x * (1.0 + torch.erf(x / math.sqrt(2.0)))


def layernorm(x, w, b):
    return torch.nn.functional.layer_norm(x, (x.shape[-1],), w, b, EPS)


def tensor_names(decoder, norm):
    """Name -> shape, in the model's own terms."""
    t = {}
    ln = norm != "none"
    if decoder:
        t["transformer.wte.weight"] = (V, D)
        t["transformer.wpe.weight"] = (N, D)
        for l in range(LAYERS):
            p = f"transformer.h.{l}."
            if ln:
                t[p + "ln_1.weight"], t[p + "ln_1.bias"] = (D,), (D,)
            t[p + "attn.c_attn.weight"], t[p + "attn.c_attn.bias"] = (D, 3 * D), (3 * D,)
            t[p + "attn.c_proj.weight"], t[p + "attn.c_proj.bias"] = (D, D), (D,)
            if ln:
                t[p + "ln_2.weight"], t[p + "ln_2.bias"] = (D,), (D,)
            t[p + "mlp.c_fc.weight"], t[p + "mlp.c_fc.bias"] = (D, F), (F,)
            t[p + "mlp.c_proj.weight"], t[p + "mlp.c_proj.bias"] = (F, D), (D,)
        if norm == "pre":
            t["transformer.ln_f.weight"], t["transformer.ln_f.bias"] = (D,), (D,)
        return t
    t["bert.embeddings.word_embeddings.weight"] = (V, D)
    t["bert.embeddings.position_embeddings.weight"] = (N, D)
    t["bert.embeddings.token_type_embeddings.weight"] = (1, D)
    if norm == "post":
        t["bert.embeddings.LayerNorm.weight"], t["bert.embeddings.LayerNorm.bias"] = (D,), (D,)
    for l in range(LAYERS):
        p = f"bert.encoder.layer.{l}."
        for s in ("query", "key", "value"):
            t[p + f"attention.self.{s}.weight"], t[p + f"attention.self.{s}.bias"] = (D, D), (D,)
        t[p + "attention.output.dense.weight"], t[p + "attention.output.dense.bias"] = (D, D), (D,)
        if ln:
            t[p + "attention.output.LayerNorm.weight"] = (D,)
            t[p + "attention.output.LayerNorm.bias"] = (D,)
        t[p + "intermediate.dense.weight"], t[p + "intermediate.dense.bias"] = (F, D), (F,)
        t[p + "output.dense.weight"], t[p + "output.dense.bias"] = (D, F), (D,)
        if ln:
            t[p + "output.LayerNorm.weight"], t[p + "output.LayerNorm.bias"] = (D,), (D,)
    if norm == "pre":
        t["bert.encoder.ln_f.weight"], t["bert.encoder.ln_f.bias"] = (D,), (D,)
    t["cls.predictions.transform.dense.weight"] = (D, D)
    t["cls.predictions.transform.dense.bias"] = (D,)
    t["cls.predictions.transform.LayerNorm.weight"] = (D,)
    t["cls.predictions.transform.LayerNorm.bias"] = (D,)
    t["cls.predictions.bias"] = (V,)
    return t


def alibi_slopes(n):
    """Press et al.'s get_slopes (github.com/ofirpress/attention_with_linear_biases)."""
    def pow2(m):
        start = 2 ** (-2 ** -(math.log2(m) - 3))
        return [start * start ** i for i in range(m)]
    if math.log2(n).is_integer():
        return pow2(n)
    c = 2 ** math.floor(math.log2(n))
    return pow2(c) + alibi_slopes(2 * c)[0::2][: n - c]


def rotate_half(x):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def rope(x):
    """modeling_llama.py's apply_rotary_pos_emb on [B, H, n, hd], theta 10000."""
    n, hd = x.shape[2], x.shape[3]
    inv_freq = 1.0 / (10000 ** (torch.arange(0, hd, 2, dtype=torch.float64) / hd))
    freqs = torch.arange(n, dtype=torch.float64)[:, None] * inv_freq[None, :]
    emb = torch.cat((freqs, freqs), dim=-1)
    return x * emb.cos() + rotate_half(x) * emb.sin()


def attention(q, k, v, mask):
    B, n, _ = q.shape
    hd = D // H
    q = q.view(B, n, H, hd).transpose(1, 2)
    k = k.view(B, n, H, hd).transpose(1, 2)
    if ROTARY:
        q, k = rope(q), rope(k)
    v = v.view(B, n, H, hd).transpose(1, 2)
    s = q @ k.transpose(-1, -2) / math.sqrt(hd) + mask
    if ALIBI is not None:   # -m_h |i - j|
        dist = (torch.arange(n)[:, None] - torch.arange(n)[None, :]).abs()
        s = s - torch.tensor(ALIBI)[None, :, None, None] * dist
    p = torch.softmax(s, dim=-1)
    return (p @ v).transpose(1, 2).reshape(B, n, D), p


def make_mask(decoder, attn, window):
    m = torch.zeros(N, N)
    for i in range(N):
        for j in range(N):
            hide = ((decoder or attn == "causal") and j > i) or (attn == "window" and abs(i - j) > window)
            if hide:
                m[i, j] = float("-inf")
    return m


def forward(P, pos_table, ids, labels, decoder, norm, mask):
    """The loss (mean cross-entropy over labelled positions)."""
    pre, post = norm == "pre", norm == "post"
    if decoder:
        g = lambda s: P["transformer." + s]
        h = g("wte.weight")[ids] + pos_table[None]
        for l in range(LAYERS):
            p = f"h.{l}."
            x = h
            a = layernorm(x, g(p + "ln_1.weight"), g(p + "ln_1.bias")) if pre else x
            qkv = a @ g(p + "attn.c_attn.weight") + g(p + "attn.c_attn.bias")   # Conv1D
            q, k, v = qkv.split(D, dim=2)
            ctx, _ = attention(q, k, v, mask)
            r = x + ctx @ g(p + "attn.c_proj.weight") + g(p + "attn.c_proj.bias")
            if post:
                r = layernorm(r, g(p + "ln_1.weight"), g(p + "ln_1.bias"))
            m = layernorm(r, g(p + "ln_2.weight"), g(p + "ln_2.bias")) if pre else r
            f = gelu_new(m @ g(p + "mlp.c_fc.weight") + g(p + "mlp.c_fc.bias"))
            s = r + f @ g(p + "mlp.c_proj.weight") + g(p + "mlp.c_proj.bias")
            h = layernorm(s, g(p + "ln_2.weight"), g(p + "ln_2.bias")) if post else s
        if pre:
            h = layernorm(h, g("ln_f.weight"), g("ln_f.bias"))
        logits = h @ g("wte.weight").T
        # GPT2LMHeadModel: predict token i+1 from position i
        logits, labels = logits[:, :-1], labels[:, 1:]
    else:
        g = lambda s: P["bert." + s]
        h = g("embeddings.word_embeddings.weight")[ids] + pos_table[None] + \
            g("embeddings.token_type_embeddings.weight")[0]
        if post:
            h = layernorm(h, g("embeddings.LayerNorm.weight"), g("embeddings.LayerNorm.bias"))
        lin = lambda x, s: x @ g(s + ".weight").T + g(s + ".bias")
        for l in range(LAYERS):
            p = f"encoder.layer.{l}."
            x = h
            a = layernorm(x, g(p + "attention.output.LayerNorm.weight"),
                          g(p + "attention.output.LayerNorm.bias")) if pre else x
            ctx, _ = attention(lin(a, p + "attention.self.query"), lin(a, p + "attention.self.key"),
                               lin(a, p + "attention.self.value"), mask)
            r = x + lin(ctx, p + "attention.output.dense")
            if post:
                r = layernorm(r, g(p + "attention.output.LayerNorm.weight"), g(p + "attention.output.LayerNorm.bias"))
            m = layernorm(r, g(p + "output.LayerNorm.weight"), g(p + "output.LayerNorm.bias")) if pre else r
            s = r + lin(gelu(lin(m, p + "intermediate.dense")), p + "output.dense")
            h = layernorm(s, g(p + "output.LayerNorm.weight"), g(p + "output.LayerNorm.bias")) if post else s
        if pre:
            h = layernorm(h, g("encoder.ln_f.weight"), g("encoder.ln_f.bias"))
        c = lambda s: P["cls.predictions." + s]
        t = gelu(h @ c("transform.dense.weight").T + c("transform.dense.bias"))
        t = layernorm(t, c("transform.LayerNorm.weight"), c("transform.LayerNorm.bias"))
        logits = t @ g("embeddings.word_embeddings.weight").T + c("bias")
    return torch.nn.functional.cross_entropy(logits.reshape(-1, V), labels.reshape(-1), ignore_index=-100)


def flat(t):
    return [float("%.9g" % x) for x in t.detach().reshape(-1).tolist()]


def main():
    global ALIBI, ROTARY
    rng = np.random.default_rng(37)
    out = {"sizes": {"length": LENGTH, "symbols": SYMBOLS, "n": N, "vocab": V, "d_model": D, "heads": H,
                     "d_ffn": F, "layers": LAYERS, "batch": BATCH}, "cases": []}
    for name, decoder, norm, positions, attn, window in CASES:
        names = tensor_names(decoder, norm)
        pos_name = "transformer.wpe.weight" if decoder else "bert.embeddings.position_embeddings.weight"
        P = {}
        for tn, shape in names.items():
            if tn == pos_name and positions != "learned":
                continue
            P[tn] = weight(tn, shape)
        ALIBI = alibi_slopes(H) if positions == "alibi" else None
        ROTARY = positions == "rotary"
        if positions == "learned":
            pos_table = P[pos_name]
        elif positions == "sinusoidal":
            pos_table = sinusoid(N, D)
        else:
            pos_table = torch.zeros(N, D)
        ids = torch.tensor(rng.integers(0, V, size=(BATCH, N)))
        labels = torch.tensor(rng.integers(0, V, size=(BATCH, N)))
        drop = torch.tensor(rng.random((BATCH, N)) < 0.4)
        labels[drop] = -100
        loss = forward(P, pos_table, ids, labels, decoder, norm, make_mask(decoder, attn, window))
        loss.backward()
        out["cases"].append({
            "name": name, "decoder": decoder, "norm": norm, "positions": positions, "attention": attn,
            "window": window, "ids": ids.reshape(-1).tolist(), "labels": labels.reshape(-1).tolist(),
            "loss": float(loss), "grads": {tn: flat(p.grad) for tn, p in P.items()},
        })

    # two AdamW steps (torch.optim.AdamW, float32) on one tensor with given gradients
    p0 = np.float32(rng.normal(size=24) * 0.5)
    grads = [np.float32(rng.normal(size=24) * 0.1), np.float32(rng.normal(size=24) * 0.1)]
    w = torch.nn.Parameter(torch.tensor(p0, dtype=torch.float32))
    opt = torch.optim.AdamW([w], lr=0.01, betas=(0.9, 0.98), eps=1e-6, weight_decay=0.1)
    after = []
    for g in grads:
        w.grad = torch.tensor(g, dtype=torch.float32)
        opt.step()
        after.append(flat(w))
    out["adamw"] = {"lr": 0.01, "beta1": 0.9, "beta2": 0.98, "eps": 1e-6, "weight_decay": 0.1,
                    "p0": [float(x) for x in p0], "grads": [[float(x) for x in g] for g in grads], "after": after}
    with open(os.path.join(HERE, "grads.json"), "w") as f:
        json.dump(out, f, separators=(",", ":"))
        f.write("\n")


if __name__ == "__main__":
    main()
