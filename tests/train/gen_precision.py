#!/usr/bin/python3
"""Reference loss and gradients of mixed-precision training (tests/train/test-train-precision.c).

The training lab's --precision bf16|fp16 rounds the operands of every matrix product of
the forward and the backward (engine/train/train-precision.c): a linear's input and
weight, attention's Q and K (after rotary), V and probabilities, and in the backward the
gradient each product receives; sums, softmax, LayerNorm, GELU, the loss and the bias
gradients stay float32.  This script writes that arithmetic from scratch in torch float32
with one torch.autograd.Function, RoundedMatmul: forward r(a) @ r(b), backward
r(g) @ r(b)^T and r(a)^T @ r(g), r = .to(bfloat16 or float16).to(float32) (round to
nearest even).  The model is gen_grads.py's (Hugging Face's GPT-2 and BERT, the same
weight formula and sizes); fp16 runs with GradScaler's first scale, 2^16: the loss times
the scale, the gradients times its reciprocal.  Each case also holds the float32 gradients
without rounding, so the test can show that the rounding is what it measures.

The last case is a BERT with Linformer attention (gen_grads_attn.py's, Wang et al. 2020 with
headwise sharing): K' = E K and V' = F V go through RoundedMatmul too, so E, F, K and V are
rounded in the projections, K' and V' where Q K'^T and P V' read them, and the gradients
dK', dV' the projections receive; E and F are parameters named
bert.encoder.layer.L.attention.self.linformer_{e,f}.weight (gen_grads.py's weight formula).

Run: /usr/bin/python3 tests/train/gen_precision.py   (writes tests/train/precision.json)
"""
import json
import math
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_grads as G  # noqa: E402

torch.set_default_dtype(torch.float32)
HERE = os.path.dirname(os.path.abspath(__file__))
D, H, N, V, LAYERS, BATCH = G.D, G.H, G.N, G.V, G.LAYERS, G.BATCH

CASES = [
    # name, decoder, norm, positions, precision, loss scale, Linformer's k (0: none)
    ("gpt2-pre-learned-bf16", True, "pre", "learned", "bf16", 1.0, 0),
    ("bert-post-learned-bf16", False, "post", "learned", "bf16", 1.0, 0),
    ("gpt2-pre-rotary-bf16", True, "pre", "rotary", "bf16", 1.0, 0),
    ("gpt2-pre-learned-fp16", True, "pre", "learned", "fp16", 65536.0, 0),
    ("bert-post-linformer-bf16", False, "post", "learned", "bf16", 1.0, 3),
]
DTYPE = None   # torch.bfloat16 / torch.float16, or None: no rounding


def r(x):
    return x if DTYPE is None else x.to(DTYPE).to(torch.float32)


class RoundedMatmul(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, b):
        a, b = r(a), r(b)
        ctx.save_for_backward(a, b)
        return a @ b

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        g = r(g)
        return g @ b.transpose(-1, -2), a.transpose(-1, -2) @ g


mm = RoundedMatmul.apply


def attention(q, k, v, mask, rotary, EF=None):
    B, n, _ = q.shape
    hd = D // H
    q = q.view(B, n, H, hd).transpose(1, 2)
    k = k.view(B, n, H, hd).transpose(1, 2)
    if rotary:
        q, k = rope(q), rope(k)
    v = v.view(B, n, H, hd).transpose(1, 2)
    if EF is not None:   # Linformer: K' = E K, V' = F V [B, H, k, hd], E and F shared by the heads; no mask
        E, F = EF
        k, v, mask = mm(E, k), mm(F, v), 0.0
    s = mm(q, k.transpose(-1, -2)) * (1.0 / math.sqrt(hd)) + mask
    p = torch.softmax(s, dim=-1)
    return mm(p, v).transpose(1, 2).reshape(B, n, D)


def rope(x):
    n, hd = x.shape[2], x.shape[3]
    inv_freq = 1.0 / (10000 ** (torch.arange(0, hd, 2, dtype=torch.float32) / hd))
    freqs = torch.arange(n, dtype=torch.float32)[:, None] * inv_freq[None, :]
    emb = torch.cat((freqs, freqs), dim=-1)
    return x * emb.cos() + G.rotate_half(x) * emb.sin()


def layernorm(x, w, b):
    return torch.nn.functional.layer_norm(x, (x.shape[-1],), w, b, G.EPS)


def forward(P, ids, labels, decoder, norm, mask, rotary):
    pre, post = norm == "pre", norm == "post"
    if decoder:
        g = lambda s: P["transformer." + s]
        h = g("wte.weight")[ids] + (0 if rotary else g("wpe.weight")[None])
        for l in range(LAYERS):
            p = f"h.{l}."
            x = h
            a = layernorm(x, g(p + "ln_1.weight"), g(p + "ln_1.bias")) if pre else x
            qkv = mm(a, g(p + "attn.c_attn.weight")) + g(p + "attn.c_attn.bias")
            q, k, v = qkv.split(D, dim=2)
            ctx = attention(q, k, v, mask, rotary)
            rr = x + mm(ctx, g(p + "attn.c_proj.weight")) + g(p + "attn.c_proj.bias")
            if post:
                rr = layernorm(rr, g(p + "ln_1.weight"), g(p + "ln_1.bias"))
            m = layernorm(rr, g(p + "ln_2.weight"), g(p + "ln_2.bias")) if pre else rr
            f = G.gelu_new(mm(m, g(p + "mlp.c_fc.weight")) + g(p + "mlp.c_fc.bias"))
            s = rr + mm(f, g(p + "mlp.c_proj.weight")) + g(p + "mlp.c_proj.bias")
            h = layernorm(s, g(p + "ln_2.weight"), g(p + "ln_2.bias")) if post else s
        if pre:
            h = layernorm(h, g("ln_f.weight"), g("ln_f.bias"))
        logits = mm(h, g("wte.weight").T)
        logits, labels = logits[:, :-1], labels[:, 1:]
    else:
        g = lambda s: P["bert." + s]
        h = g("embeddings.word_embeddings.weight")[ids] + g("embeddings.position_embeddings.weight")[None] + \
            g("embeddings.token_type_embeddings.weight")[0]
        if post:
            h = layernorm(h, g("embeddings.LayerNorm.weight"), g("embeddings.LayerNorm.bias"))
        lin = lambda x, s: mm(x, g(s + ".weight").T) + g(s + ".bias")
        for l in range(LAYERS):
            p = f"encoder.layer.{l}."
            x = h
            a = layernorm(x, g(p + "attention.output.LayerNorm.weight"),
                          g(p + "attention.output.LayerNorm.bias")) if pre else x
            ef = p + "attention.self.linformer_"
            EF = (g(ef + "e.weight"), g(ef + "f.weight")) if "bert." + ef + "e.weight" in P else None
            ctx = attention(lin(a, p + "attention.self.query"), lin(a, p + "attention.self.key"),
                            lin(a, p + "attention.self.value"), mask, rotary, EF)
            rr = x + lin(ctx, p + "attention.output.dense")
            if post:
                rr = layernorm(rr, g(p + "attention.output.LayerNorm.weight"),
                               g(p + "attention.output.LayerNorm.bias"))
            m = layernorm(rr, g(p + "output.LayerNorm.weight"), g(p + "output.LayerNorm.bias")) if pre else rr
            s = rr + lin(G.gelu(lin(m, p + "intermediate.dense")), p + "output.dense")
            h = layernorm(s, g(p + "output.LayerNorm.weight"), g(p + "output.LayerNorm.bias")) if post else s
        c = lambda s: P["cls.predictions." + s]
        t = G.gelu(mm(h, c("transform.dense.weight").T) + c("transform.dense.bias"))
        t = layernorm(t, c("transform.LayerNorm.weight"), c("transform.LayerNorm.bias"))
        logits = mm(t, g("embeddings.word_embeddings.weight").T) + c("bias")
    return torch.nn.functional.cross_entropy(logits.reshape(-1, V), labels.reshape(-1), ignore_index=-100)


def grads(names, pos_name, positions, ids, labels, decoder, norm, mask, scale):
    P = {}
    for tn, shape in names.items():
        if tn == pos_name and positions != "learned":
            continue
        P[tn] = G.weight(tn, shape).detach().to(torch.float32).requires_grad_(True)
    loss = forward(P, ids, labels, decoder, norm, mask, positions == "rotary")
    (loss * scale).backward()
    inv = torch.tensor(1.0 / scale, dtype=torch.float64).float()   # GradScaler's inv_scale
    return float(loss), {tn: G.flat(p.grad * inv) for tn, p in P.items()}


def main():
    global DTYPE
    rng = np.random.default_rng(16)
    out = {"sizes": {"length": G.LENGTH, "symbols": G.SYMBOLS, "n": N, "vocab": V, "d_model": D, "heads": H,
                     "d_ffn": G.F, "layers": LAYERS, "batch": BATCH}, "cases": []}
    for name, decoder, norm, positions, prec, scale, lin_k in CASES:
        names = dict(G.tensor_names(decoder, norm))
        for l in range(LAYERS if lin_k else 0):
            for s in ("e", "f"):
                names[f"bert.encoder.layer.{l}.attention.self.linformer_{s}.weight"] = (lin_k, N)
        pos_name = "transformer.wpe.weight" if decoder else "bert.embeddings.position_embeddings.weight"
        mask = G.make_mask(decoder, "full", 0).to(torch.float32)
        ids = torch.tensor(rng.integers(0, V, size=(BATCH, N)))
        labels = torch.tensor(rng.integers(0, V, size=(BATCH, N)))
        labels[torch.tensor(rng.random((BATCH, N)) < 0.4)] = -100
        DTYPE = None
        loss32, g32 = grads(names, pos_name, positions, ids, labels, decoder, norm, mask, 1.0)
        DTYPE = torch.bfloat16 if prec == "bf16" else torch.float16
        loss, g = grads(names, pos_name, positions, ids, labels, decoder, norm, mask, scale)
        out["cases"].append({
            "name": name, "decoder": decoder, "norm": norm, "positions": positions, "precision": prec,
            "loss_scale": scale, "linformer_k": lin_k, "ids": ids.reshape(-1).tolist(), "labels": labels.reshape(-1).tolist(),
            "loss": loss, "loss_fp32": loss32, "grads": g, "grads_fp32": g32,
        })
    with open(os.path.join(HERE, "precision.json"), "w") as f:
        json.dump(out, f, separators=(",", ":"))
        f.write("\n")


if __name__ == "__main__":
    main()
