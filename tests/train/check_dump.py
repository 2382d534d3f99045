#!/usr/bin/python3
"""Checks `attnscope train ... --steps 1 --dump-grads FILE.npz -o DIR` with autograd: reads
DIR/step-0 (config.json, model.safetensors) and FILE.npz (input_ids, labels, loss, the
gradients), runs gen_grads.py's float64 torch model on that batch and compares the loss
and every gradient (1e-4 of each gradient's largest value).  Needs torch; not part of the
suite (test-train-grads.c covers the same arithmetic from committed fixtures).

Usage: check_dump.py DIR FILE.npz [--norm pre|post|none] [--positions learned|sinusoidal|none|alibi]
       [--attention full|causal|window] [--window W]
"""
import argparse
import json
import os
import struct
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_grads as g  # noqa: E402


def read_safetensors(path):
    with open(path, "rb") as f:
        data = f.read()
    n = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8:8 + n])
    out = {}
    for name, e in header.items():
        if name == "__metadata__":
            continue
        a, b = e["data_offsets"]
        out[name] = np.frombuffer(data[8 + n + a: 8 + n + b], dtype=np.float32).reshape(e["shape"])
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("npz")
    ap.add_argument("--norm", default=None)
    ap.add_argument("--positions", default="learned")
    ap.add_argument("--attention", default=None)
    ap.add_argument("--window", type=int, default=0)
    a = ap.parse_args()
    cfg = json.load(open(os.path.join(a.dir, "step-0", "config.json")))
    decoder = cfg["model_type"] == "gpt2"
    if decoder:
        g.D, g.LAYERS, g.H, g.F, g.V, g.N = cfg["n_embd"], cfg["n_layer"], cfg["n_head"], cfg["n_inner"], \
            cfg["vocab_size"], cfg["n_positions"]
    else:
        g.D, g.LAYERS, g.H, g.F, g.V, g.N = cfg["hidden_size"], cfg["num_hidden_layers"], \
            cfg["num_attention_heads"], cfg["intermediate_size"], cfg["vocab_size"], cfg["max_position_embeddings"]
    norm = a.norm or ("pre" if decoder else "post")
    g.ALIBI = g.alibi_slopes(g.H) if a.positions == "alibi" else None
    g.ROTARY = a.positions == "rotary"
    attn = a.attention or ("causal" if decoder else "full")
    weights = read_safetensors(os.path.join(a.dir, "step-0", "model.safetensors"))
    z = np.load(a.npz)
    pos_name = "transformer.wpe.weight" if decoder else "bert.embeddings.position_embeddings.weight"
    P = {}
    for name in g.tensor_names(decoder, norm):
        if name == pos_name and a.positions != "learned":
            continue
        P[name] = torch.tensor(weights[name].astype(np.float64), requires_grad=True)
    pos_table = P[pos_name] if a.positions == "learned" else torch.tensor(weights[pos_name].astype(np.float64))
    ids, labels = torch.tensor(z["input_ids"]), torch.tensor(z["labels"])
    loss = g.forward(P, pos_table, ids, labels, decoder, norm, g.make_mask(decoder, attn, a.window))
    loss.backward()
    bad = 0
    print(f"loss: attnscope {float(z['loss']):.7f}, torch {float(loss):.7f}")
    bad += abs(float(z["loss"]) - float(loss)) > 1e-5 * abs(float(loss))
    # a gradient that is zero in exact arithmetic (the key bias: softmax ignores a constant
    # added to a row) is rounding noise on both sides; its scale is the largest gradient's
    floor = 1e-4 * max(np.abs(p.grad.numpy()).max() for p in P.values())
    for name, p in P.items():
        got, want = z[name].astype(np.float64), p.grad.numpy()
        err = np.abs(got - want).max() / max(np.abs(want).max(), floor)
        if err > 1e-4:
            print(f"{name}: relative max difference {err:.3g}")
            bad += 1
    missing = set(P) - set(z.files)
    for name in sorted(missing):
        print(f"{name}: not in the dump")
    print(f"{len(P)} gradients compared, {bad + len(missing)} differ")
    sys.exit(1 if bad or missing else 0)


if __name__ == "__main__":
    main()
