#!/usr/bin/python3
"""Reference figures for the what-if lab (engine/whatif/interventions.c, attnscope.h
atn_interventions): a from-scratch float64 torch forward of the committed tiny models
(tests/hf/models: BERT f32, BERT odd3-relu with 3 heads, RoBERTa roberta-f32; the built-in
demo BERT, 4 layers of 16 heads, for masks in chosen layers), read from their safetensors files, with each intervention written out the way its source defines it:

  heads off, zero    Hugging Face's head_mask: probs = softmax(scores) * head_mask[l, h]
  heads off, uniform Kovaleva et al.: probs = 1/k over the k keys the query may see
  causal             explicit lower-triangular mask (torch.tril)
  window W           explicit band: |i - j| <= W (torch.triu/tril of ones)
  Longformer         band + global rows and columns set visible
  strided S          |i-j| < S or (i-j) % S == 0 (Child et al.'s local + stride, both ways)
  hide tokens        whole key columns masked
  ALiBi              scores += -m_h |i - j|, m_h from Press et al.'s get_slopes (verbatim)
  no positions       embeddings = word + type (no position row)
  shuffle seed s     the words' position ids permuted by Fisher-Yates on splitmix64
  temperature T      (scores + masks + ALiBi) / T before the softmax
  mask layers        the masks above (causal, window, Longformer, strided, hidden keys) added
                     only in the layers listed; every other layer gets the padding mask alone
                     (its uniform heads spread over the keys that layer lets through)

Masked cells get torch.finfo(float32).min as Hugging Face's padding does.  It never calls
attnscope.  Writes tests/whatif/fixtures/cases.json and <model>-<case>-{attn,hidden}.npy.

Run with Debian's python3-torch:  /usr/bin/python3 tests/whatif/gen_whatif.py
"""
import json
import math
import os
import struct

import numpy as np
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = os.path.join(HERE, "..", "hf", "models")
DEMO = os.path.join(HERE, "..", "..", "data", "models", "demo")
OUT = os.path.join(HERE, "fixtures")
MIN = torch.finfo(torch.float32).min
SPECIAL_IDS = {0, 2, 3, 4}   # [PAD] [CLS] [SEP] [MASK] of the test vocabulary


def read_safetensors(path):
    with open(path, "rb") as f:
        hl = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(hl))
        data = f.read()
    out = {}
    for name, e in header.items():
        if name == "__metadata__":
            continue
        a, b = e["data_offsets"]
        assert e["dtype"] in ("F32", "F16"), e["dtype"]
        arr = np.frombuffer(data[a:b], dtype="<f4" if e["dtype"] == "F32" else "<f2").reshape(e["shape"])
        for p in ("bert.", "roberta."):
            if name.startswith(p):
                name = name[len(p):]
        out[name] = torch.tensor(arr.astype(np.float64))
    return out


def get_slopes(n):   # Press et al., github.com/ofirpress/attention_with_linear_biases
    def get_slopes_power_of_2(n):
        start = (2 ** (-2 ** -(math.log2(n) - 3)))
        ratio = start
        return [start * ratio ** i for i in range(n)]
    if math.log2(n).is_integer():
        return get_slopes_power_of_2(n)
    closest_power_of_2 = 2 ** math.floor(math.log2(n))
    return (get_slopes_power_of_2(closest_power_of_2) +
            get_slopes(2 * closest_power_of_2)[0::2][:n - closest_power_of_2])


def splitmix64(state):
    state = (state + 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
    return state, z ^ (z >> 31)


def shuffled(pos, words, seed):
    pos = list(pos)
    s = seed
    for i in range(len(words) - 1, 0, -1):
        s, r = splitmix64(s)
        r %= i + 1
        a, b = words[i], words[r]
        pos[a], pos[b] = pos[b], pos[a]
    return pos


def visible_matrix(n, mask, iv):
    """[n, n] bool, row = query: which keys each query may see."""
    vis = torch.tensor([bool(m) for m in mask])[None, :].expand(n, n).clone()
    ones = torch.ones(n, n, dtype=torch.bool)
    if iv.get("causal"):
        vis &= torch.tril(ones)
    if "window" in iv:
        w = iv["window"]
        band = torch.triu(torch.tril(ones, w), -w)
        for g in iv.get("global", []):
            band[g, :] = True
            band[:, g] = True
        vis &= band
    if "strided" in iv:
        s = iv["strided"]
        i = torch.arange(n)[:, None]
        j = torch.arange(n)[None, :]
        d = (i - j).abs()
        vis &= (d < s) | (d % s == 0)
    for t in iv.get("hide", []):
        vis[:, t] = False
    return vis


def forward(R, c, family, ids, type_ids, mask, iv):
    d, H, L = c["hidden_size"], c["num_attention_heads"], c["num_hidden_layers"]
    k = d // H
    eps = c["layer_norm_eps"]
    act = c["hidden_act"]
    n = len(ids)
    if family == "roberta":   # create_position_ids_from_input_ids
        pad = c["pad_token_id"]
        m = [int(i != pad) for i in ids]
        cs = np.cumsum(m)
        pos = [int(cs[i] * m[i] + pad) for i in range(n)]
    else:
        pos = list(range(n))
    if "shuffle" in iv:
        words = [i for i in range(n) if ids[i] not in SPECIAL_IDS and mask[i]]
        pos = shuffled(pos, words, iv["shuffle"])
    x = R["embeddings.word_embeddings.weight"][torch.tensor(ids)]
    if not iv.get("no_positions"):
        x = x + R["embeddings.position_embeddings.weight"][torch.tensor(pos)]
    x = x + R["embeddings.token_type_embeddings.weight"][torch.tensor(type_ids)]
    x = F.layer_norm(x, (d,), R["embeddings.LayerNorm.weight"], R["embeddings.LayerNorm.bias"], eps)
    def additive(v):
        return torch.where(v, torch.tensor(0.0, dtype=torch.float64), torch.tensor(MIN, dtype=torch.float64))

    vis_iv = visible_matrix(n, mask, iv)
    vis_pad = visible_matrix(n, mask, {})   # the layers the masks skip (mask_layers)
    layers = iv.get("mask_layers", list(range(L)))
    dist = (torch.arange(n)[:, None] - torch.arange(n)[None, :]).abs().double()
    bias = torch.zeros(H, n, n, dtype=torch.float64)
    if iv.get("alibi"):
        bias = -torch.tensor(get_slopes(H), dtype=torch.float64)[:, None, None] * dist[None]
    T = iv.get("temperature", 1.0)
    head_mask = torch.ones(L, H, dtype=torch.float64)
    for l, h in iv.get("heads_off", []):
        head_mask[l, h] = 0.0
    uniform = iv.get("head_mode") == "uniform"
    hidden, attns = [x], []
    for i in range(L):
        p = f"encoder.layer.{i}."

        def lin(nm, inp):
            return F.linear(inp, R[p + nm + ".weight"], R[p + nm + ".bias"])

        def heads(t):
            return t.view(n, H, k).transpose(0, 1)

        vis = vis_iv if i in layers else vis_pad
        ext = additive(vis)
        q, kk, v = (heads(lin("attention.self." + s, x)) for s in ("query", "key", "value"))
        scores = (q @ kk.transpose(-1, -2) / math.sqrt(k) + ext[None] + bias) / T
        probs = torch.softmax(scores, dim=-1)
        if uniform:
            u = vis.double() / vis.double().sum(-1, keepdim=True)
            off = (head_mask[i] == 0)[:, None, None]
            probs = torch.where(off, u[None].expand(H, n, n), probs)
        else:
            probs = probs * head_mask[i][:, None, None]   # BertSelfAttention's head_mask
        ctx = (probs @ v).transpose(0, 1).reshape(n, d)
        a = lin("attention.output.dense", ctx)
        x1 = F.layer_norm(a + x, (d,), R[p + "attention.output.LayerNorm.weight"],
                          R[p + "attention.output.LayerNorm.bias"], eps)
        hm = lin("intermediate.dense", x1)
        if act == "gelu":
            hm = F.gelu(hm)
        elif act == "relu":
            hm = F.relu(hm)
        else:
            hm = 0.5 * hm * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (hm + 0.044715 * hm ** 3)))
        x = F.layer_norm(lin("output.dense", hm) + x1, (d,), R[p + "output.LayerNorm.weight"],
                         R[p + "output.LayerNorm.bias"], eps)
        attns.append(probs)
        hidden.append(x)
    return torch.stack(attns), torch.stack(hidden)


CASES = [
    ("heads-zero", dict(heads_off=[[0, 1], [1, 0], [1, 3]])),
    ("heads-uniform", dict(heads_off=[[0, 1], [1, 0]], head_mode="uniform")),
    ("causal", dict(causal=True)),
    ("window", dict(window=1)),
    ("longformer", dict(window=1, **{"global": [0, 4]})),
    ("strided", dict(strided=3)),
    ("hide", dict(hide=[2, 5])),
    ("alibi", dict(alibi=True)),
    ("no-positions", dict(no_positions=True)),
    ("shuffle", dict(shuffle=7)),
    ("temperature-low", dict(temperature=0.5)),
    ("temperature-high", dict(temperature=3.0)),
    ("uniform-window", dict(heads_off=[[1, 2]], head_mode="uniform", window=2)),
    ("combined", dict(window=2, alibi=True, temperature=2.0, heads_off=[[0, 0]], causal=True)),
]

# masks in chosen layers only (atn_interventions.mask_layers, --mask-layers)
LAYER_CASES = [
    ("causal-hide-layer1", dict(causal=True, hide=[2], mask_layers=[1])),
    ("longformer-uniform-layer0", dict(window=1, **{"global": [0]}, heads_off=[[1, 0], [0, 2]],
                                       head_mode="uniform", mask_layers=[0])),
    ("strided-layer1", dict(strided=2, temperature=1.5, mask_layers=[1])),
]
DEMO_CASES = [   # --mask-layers 0,2-3 on the 4-layer demo model
    ("window-layers-023", dict(window=1, mask_layers=[0, 2, 3])),
    ("causal-layers-12", dict(causal=True, heads_off=[[1, 5]], mask_layers=[1, 2])),
]

INPUTS = {
    # [CLS] words [SEP], and a padded pair (the last two tokens padding)
    "plain": (([2, 15, 29, 13, 33, 12, 17, 3], [0] * 8, [1] * 8)),
    "padded": (([2, 15, 29, 13, 3, 33, 12, 3, 0, 0], [0, 0, 0, 0, 0, 1, 1, 1, 1, 1], [1] * 8 + [0, 0])),
}

MODEL_LIST = [("f32", "bert", MODELS), ("roberta-f32", "roberta", MODELS), ("odd3-relu", "bert", MODELS),
              ("demo", "bert", os.path.dirname(DEMO))]


def main():
    os.makedirs(OUT, exist_ok=True)
    torch.set_num_threads(1)
    meta = {"slopes": {str(h): get_slopes(h) for h in (1, 2, 3, 4, 5, 6, 8, 12, 16)}, "models": []}
    for mname, family, folder in MODEL_LIST:
        with open(os.path.join(folder, mname, "config.json")) as f:
            c = json.load(f)
        R = read_safetensors(os.path.join(folder, mname, "model.safetensors"))
        entry = {"model": mname, "family": family, "cases": []}
        cases = DEMO_CASES if mname == "demo" else CASES + LAYER_CASES
        for cname, iv in cases:
            for iname, (ids, types, mask) in INPUTS.items():
                if family == "roberta":
                    types = [0] * len(ids)   # one token type
                    if iname == "padded":
                        ids = [i if m else c["pad_token_id"] for i, m in zip(ids, mask)]
                if mname == "odd3-relu":   # 3 heads: the head lists fit
                    iv = {**iv, "heads_off": [[l, min(h, 2)] for l, h in iv.get("heads_off", [])]}
                    if not iv["heads_off"]:
                        del iv["heads_off"]
                if mname == "odd3-relu" and cname not in ("alibi", "heads-zero", "combined", "strided-layer1"):
                    continue
                attn, hidden = forward(R, c, family, ids, types, mask, iv)
                name = f"{cname}-{iname}"
                np.save(os.path.join(OUT, f"{mname}-{name}-attn.npy"), attn.numpy().astype("<f4"))
                np.save(os.path.join(OUT, f"{mname}-{name}-hidden.npy"), hidden.numpy().astype("<f4"))
                entry["cases"].append({"name": name, "ids": ids, "type_ids": types, "mask": mask,
                                       "special": [int(i in SPECIAL_IDS) for i in ids],
                                       "interventions": iv})
        meta["models"].append(entry)
    with open(os.path.join(OUT, "cases.json"), "w") as f:
        json.dump(meta, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
