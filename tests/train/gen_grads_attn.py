#!/usr/bin/python3
"""Reference gradients for the training lab's attention variants (tests/train/grads-attn.json,
read by tests/train/test-train-grads.c beside grads.json).

The model is gen_grads.py's from-scratch float64 GPT-2 / BERT (imported, not copied: the same
weights formula, layers and loss); what this script adds is the attention:
  - Longformer (Beltagy et al. 2020, section 3.1): a sliding window |i - j| <= w, and global
    positions that attend to every key and that every query attends to; a decoder keeps its
    causal mask on top.  Written as the mask of that definition (the same Q, K, V for the
    global positions: the what-if lab's --window --global-tokens, not HF Longformer's second
    set of global projections);
  - chunked blocks: key j is seen by query i when i // B == j // B (and j <= i in a decoder);
  - Linformer (Wang et al. 2020, eq. 7, headwise sharing as in github.com/lucidrains/linformer's
    LinformerSelfAttention with share_kv=False): K' = E K, V' = F V along the sequence with
    E, F [k][n] per layer shared by the heads, P = softmax(Q K'^T / sqrt(d_head)) [n][k],
    ctx = P V'.  E and F are parameters named bert.encoder.layer.L.attention.self.linformer_e /
    linformer_f.weight, so their gradients are checked too.

Run: /usr/bin/python3 tests/train/gen_grads_attn.py   (writes tests/train/grads-attn.json)
"""
import json
import math
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_grads as g  # noqa: E402

N, D, H, LAYERS, BATCH = g.N, g.D, g.H, g.LAYERS, g.BATCH

CASES = [
    # name, decoder, norm, positions, attention, knobs
    ("dec-pre-longformer", True, "pre", "learned", "longformer", {"window": 1, "global_first": 1, "globals": [5]}),
    ("enc-post-longformer", False, "post", "sinusoidal", "longformer",
     {"window": 1, "global_first": 0, "globals": [3, 6]}),
    ("enc-pre-longformer-rotary", False, "pre", "rotary", "longformer",
     {"window": 2, "global_first": 2, "globals": []}),
    ("dec-pre-chunked", True, "pre", "learned", "chunked", {"chunk": 3}),
    ("enc-post-chunked-alibi", False, "post", "alibi", "chunked", {"chunk": 4}),
    ("enc-post-linformer", False, "post", "learned", "linformer", {"linformer_k": 3}),
    ("enc-pre-linformer-rotary", False, "pre", "rotary", "linformer", {"linformer_k": 5}),
]

LIN = {"E": None, "F": None, "layer": 0}   # the case's per-layer E, F lists and the layer being run


def is_global(knobs, p):
    return p < knobs.get("global_first", 0) or p in knobs.get("globals", [])


def make_mask(decoder, attn, knobs):
    m = torch.zeros(N, N)
    for i in range(N):
        for j in range(N):
            hide = decoder and j > i
            if attn == "longformer":
                hide = hide or (abs(i - j) > knobs["window"] and not is_global(knobs, i) and not is_global(knobs, j))
            elif attn == "chunked":
                hide = hide or i // knobs["chunk"] != j // knobs["chunk"]
            if hide:
                m[i, j] = float("-inf")
    return m


def linformer_attention(q, k, v, mask):
    """Linformer's attention (mask unused: there is none over projected keys)."""
    E, F = LIN["E"][LIN["layer"]], LIN["F"][LIN["layer"]]
    LIN["layer"] = (LIN["layer"] + 1) % LAYERS   # the walk calls layer 0, 1, ... in order
    B, n, _ = q.shape
    hd = D // H
    q = q.view(B, n, H, hd).transpose(1, 2)
    k = k.view(B, n, H, hd).transpose(1, 2)
    if g.ROTARY:   # positions turn q and k before the projection, as the trainer does
        q, k = g.rope(q), g.rope(k)
    v = v.view(B, n, H, hd).transpose(1, 2)
    kp = torch.einsum("cn,bhnd->bhcd", E, k)   # [B, H, k, hd]: E shared by the heads
    vp = torch.einsum("cn,bhnd->bhcd", F, v)
    p = torch.softmax(q @ kp.transpose(-1, -2) / math.sqrt(hd), dim=-1)
    return (p @ vp).transpose(1, 2).reshape(B, n, D), p


def main():
    rng = np.random.default_rng(3737)
    masked_attention = g.attention
    out = {"sizes": {"length": g.LENGTH, "symbols": g.SYMBOLS, "n": N, "vocab": g.V, "d_model": D, "heads": H,
                     "d_ffn": g.F, "layers": LAYERS, "batch": BATCH}, "cases": []}
    for name, decoder, norm, positions, attn, knobs in CASES:
        names = g.tensor_names(decoder, norm)
        pos_name = "transformer.wpe.weight" if decoder else "bert.embeddings.position_embeddings.weight"
        P = {}
        for tn, shape in names.items():
            if tn == pos_name and positions != "learned":
                continue
            P[tn] = g.weight(tn, shape)
        g.attention = masked_attention
        if attn == "linformer":
            kk = knobs["linformer_k"]
            LIN["E"], LIN["F"] = [], []
            for l in range(LAYERS):
                for key, s in (("E", "e"), ("F", "f")):
                    tn = f"bert.encoder.layer.{l}.attention.self.linformer_{s}.weight"
                    P[tn] = g.weight(tn, (kk, N))
                    LIN[key].append(P[tn])
            LIN["layer"] = 0
            g.attention = linformer_attention
        g.ALIBI = g.alibi_slopes(H) if positions == "alibi" else None
        g.ROTARY = positions == "rotary"
        if positions == "learned":
            pos_table = P[pos_name]
        elif positions == "sinusoidal":
            pos_table = g.sinusoid(N, D)
        else:
            pos_table = torch.zeros(N, D)
        ids = torch.tensor(rng.integers(0, g.V, size=(BATCH, N)))
        labels = torch.tensor(rng.integers(0, g.V, size=(BATCH, N)))
        drop = torch.tensor(rng.random((BATCH, N)) < 0.4)
        labels[drop] = -100
        loss = g.forward(P, pos_table, ids, labels, decoder, norm, make_mask(decoder, attn, knobs))
        loss.backward()
        case = {"name": name, "decoder": decoder, "norm": norm, "positions": positions, "attention": attn,
                "window": knobs.get("window", 0), "ids": ids.reshape(-1).tolist(),
                "labels": labels.reshape(-1).tolist(), "loss": float(loss),
                "grads": {tn: g.flat(p.grad) for tn, p in P.items()}}
        for key in ("global_first", "globals", "chunk", "linformer_k"):
            if key in knobs:
                case[key] = knobs[key]
        out["cases"].append(case)
    g.attention = masked_attention
    with open(os.path.join(g.HERE, "grads-attn.json"), "w") as f:
        json.dump(out, f, separators=(",", ":"))
        f.write("\n")


if __name__ == "__main__":
    main()
