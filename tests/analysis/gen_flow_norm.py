#!/usr/bin/python3
"""Reference figures for attention flow and norm-based attention (engine/analysis/flow.c,
norm-attn.c) on the demo BERT (data/models/demo) and the demo GPT-2 (data/models/demo-gpt2).

Written from the papers, numpy only, float64, never calling attnscope:
- the forward is BertModel's / GPT2Model's written out from the folders' safetensors
  (BERT: post-LayerNorm, erf GELU; GPT-2: pre-LayerNorm ln_1, tanh GELU, causal mask);
- attention flow (Abnar & Zuidema 2020, §3; their code samiraabnar/attention_flow):
  A'_l = (mean_h A_l + I) with rows renormalised; nodes (l, j), l = 0..L, edges
  (l+1, i) -> (l, j) with capacity A'_l[i][j]; flow[i][j] = max-flow from (L, i) to (0, j)
  by Edmonds-Karp (written here, BFS on a dense residual matrix), each row then divided by
  its sum (compute_flows).  Through every layer and through layer 0 only;
- norm-based attention (Kobayashi et al. 2020, §3): f_h(x_j) = (x_j W_V^h + b_V^h) W_O^h,
  the bias of W_O excluded; norm[l][h][i][j] = ||alpha^h_ij f_h(x_j)||, and the layer's
  norm_sum[l][i][j] = ||sum_h alpha^h_ij f_h(x_j)||.  x_j is the layer's input (BERT) or
  ln_1 of it (GPT-2): what W_V reads.

The ids are the models' own tokens of the sentence (attnscope tokenize printed them; the
tokenizer is not under test here).  Writes tests/analysis/fixtures/flow-norm.json.
Run: /usr/bin/python3 tests/analysis/gen_flow_norm.py
"""
import json
import math
import os
import struct
from collections import deque

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SENTENCE = "the cat sat on the mat because it was tired"
CASES = [
    ("demo", [2, 3992, 4767, 5262, 4029, 3992, 7448, 4422, 4024, 4122, 6863, 3]),
    ("demo-gpt2", [116, 437, 268, 281, 279, 281, 373, 262, 282, 281, 293, 314, 966, 341, 273, 551, 256, 536, 100]),
]


def read_safetensors(path):
    with open(path, "rb") as f:
        data = f.read()
    (hlen,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + hlen])
    base = 8 + hlen
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        dt = {"F16": "<f2", "F32": "<f4"}.get(info["dtype"])
        if dt is None:
            continue
        a, b = info["data_offsets"]
        out[name] = np.frombuffer(data[base + a:base + b], dtype=dt).reshape(info["shape"]).astype(np.float64)
    return out


def layer_norm(x, g, b, eps):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * g + b


def softmax(s):
    s = s - s.max(-1, keepdims=True)
    e = np.exp(s)
    return e / e.sum(-1, keepdims=True)


def gelu_erf(x):
    return 0.5 * x * (1.0 + np.vectorize(math.erf)(x / math.sqrt(2.0)))


def gelu_tanh(x):
    return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))


def bert_forward(W, cfg, ids):
    """Per layer: attention [H,n,n], V with bias [n,d] (what W_V made), W_O [d,d] (out x in)."""
    d, H, L = cfg["hidden_size"], cfg["num_attention_heads"], cfg["num_hidden_layers"]
    k, eps, n = d // H, cfg["layer_norm_eps"], len(ids)
    p = "bert."
    x = W[p + "embeddings.word_embeddings.weight"][ids] + W[p + "embeddings.position_embeddings.weight"][:n] \
        + W[p + "embeddings.token_type_embeddings.weight"][0]
    x = layer_norm(x, W[p + "embeddings.LayerNorm.weight"], W[p + "embeddings.LayerNorm.bias"], eps)
    layers = []
    for l in range(L):
        q = "%sencoder.layer.%d." % (p, l)
        lin = lambda t, name: t @ W[q + name + ".weight"].T + W[q + name + ".bias"]  # noqa: E731
        Q, K, V = lin(x, "attention.self.query"), lin(x, "attention.self.key"), lin(x, "attention.self.value")
        heads = lambda t: t.reshape(n, H, k).transpose(1, 0, 2)  # noqa: E731
        A = softmax(heads(Q) @ heads(K).transpose(0, 2, 1) / math.sqrt(k))
        ctx = (A @ heads(V)).transpose(1, 0, 2).reshape(n, d)
        layers.append((A, V, W[q + "attention.output.dense.weight"], H, k))
        x = layer_norm(lin(ctx, "attention.output.dense") + x, W[q + "attention.output.LayerNorm.weight"],
                       W[q + "attention.output.LayerNorm.bias"], eps)
        x = layer_norm(lin(gelu_erf(lin(x, "intermediate.dense")), "output.dense") + x,
                       W[q + "output.LayerNorm.weight"], W[q + "output.LayerNorm.bias"], eps)
    return layers


def gpt2_forward(W, cfg, ids):
    d, H, L = cfg["n_embd"], cfg["n_head"], cfg["n_layer"]
    k, eps, n = d // H, cfg["layer_norm_epsilon"], len(ids)
    p = "transformer."
    x = W[p + "wte.weight"][ids] + W[p + "wpe.weight"][:n]
    causal = np.tril(np.ones((n, n), dtype=bool))
    layers = []
    for l in range(L):
        q = "%sh.%d." % (p, l)
        conv = lambda t, name: t @ W[q + name + ".weight"] + W[q + name + ".bias"]  # noqa: E731 (Conv1D: in x out)
        h = layer_norm(x, W[q + "ln_1.weight"], W[q + "ln_1.bias"], eps)
        qkv = conv(h, "attn.c_attn")
        Q, K, V = qkv[:, :d], qkv[:, d:2 * d], qkv[:, 2 * d:]
        heads = lambda t: t.reshape(n, H, k).transpose(1, 0, 2)  # noqa: E731
        s = heads(Q) @ heads(K).transpose(0, 2, 1) / math.sqrt(k)
        s = np.where(causal, s, np.finfo(np.float64).min)
        A = softmax(s)
        ctx = (A @ heads(V)).transpose(1, 0, 2).reshape(n, d)
        layers.append((A, V, W[q + "attn.c_proj.weight"].T, H, k))   # as out x in, like BERT's dense
        x = x + conv(ctx, "attn.c_proj")
        h = layer_norm(x, W[q + "ln_2.weight"], W[q + "ln_2.bias"], eps)
        x = x + conv(gelu_tanh(conv(h, "mlp.c_fc")), "mlp.c_proj")
    return layers


def max_flow(cap, s, t):
    """Edmonds-Karp: shortest augmenting paths by BFS on the dense residual matrix."""
    N = cap.shape[0]
    res = cap.copy()
    total = 0.0
    while True:
        parent = [-1] * N
        parent[s] = s
        dq = deque([s])
        while dq and parent[t] < 0:
            u = dq.popleft()
            for v in np.nonzero(res[u] > 1e-13)[0]:
                if parent[v] < 0:
                    parent[v] = u
                    dq.append(v)
        if parent[t] < 0:
            return total
        b, v = math.inf, t
        while v != s:
            b = min(b, res[parent[v], v])
            v = parent[v]
        v = t
        while v != s:
            res[parent[v], v] -= b
            res[v, parent[v]] += b
            v = parent[v]
        total += b


def attention_flow(layers, last):
    n = layers[0][0].shape[1]
    L = last + 1
    N = (L + 1) * n
    cap = np.zeros((N, N))
    for l in range(L):
        a = layers[l][0].mean(0) + np.eye(n)
        a = a / a.sum(-1, keepdims=True)
        cap[(l + 1) * n:(l + 2) * n, l * n:(l + 1) * n] = a   # (l+1, i) -> (l, j)
    out = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            out[i, j] = max_flow(cap, L * n + i, j)
        out[i] /= out[i].sum()
    return out


def norms(layers):
    per_head, summed = [], []
    for A, V, WO, H, k in layers:
        n, d = V.shape
        F = np.stack([V[:, h * k:(h + 1) * k] @ WO[:, h * k:(h + 1) * k].T for h in range(H)])   # [H, n(j), d]
        vec = A[:, :, :, None] * F[:, None, :, :]                                                 # [H, i, j, d]
        per_head.append(np.linalg.norm(vec, axis=-1))
        summed.append(np.linalg.norm(vec.sum(0), axis=-1))
    return per_head, summed


def main():
    fixture = {"sentence": SENTENCE, "cases": []}
    for name, ids in CASES:
        folder = os.path.join(ROOT, "data", "models", name)
        cfg = json.load(open(os.path.join(folder, "config.json")))
        W = read_safetensors(os.path.join(folder, "model.safetensors"))
        layers = (gpt2_forward if cfg["model_type"] == "gpt2" else bert_forward)(W, cfg, ids)
        head, summed = norms(layers)
        fixture["cases"].append({
            "model": name, "ids": ids, "n_layers": len(layers), "n_heads": layers[0][3],
            "flow": attention_flow(layers, len(layers) - 1).tolist(),
            "flow_layer0": attention_flow(layers, 0).tolist(),
            "norm": [h.tolist() for h in head],
            "norm_sum": [s.tolist() for s in summed],
        })
    path = os.path.join(HERE, "fixtures", "flow-norm.json")
    with open(path, "w") as f:
        json.dump(fixture, f, separators=(",", ":"))
        f.write("\n")
    print("wrote", path)


if __name__ == "__main__":
    main()
