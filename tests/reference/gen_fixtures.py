#!/usr/bin/python3
"""Writes reference fixtures for the encoder, computed by PyTorch (Debian's python3-torch).

For a few small random configurations, a stack of torch.nn.TransformerEncoderLayer
(post-LN, dropout 0, batch_first) runs on random input vectors, with and without a key
padding mask.  For each configuration this writes:
  <name>.json        the same model as an attnscope toy model (weights in the textbook
                     orientation Q = X W_Q, i.e. torch's in_proj_weight slices transposed)
  <name>.mask        the padding mask, one 0/1 per token (a line)
  <name>.attn.npy    [L, H, n, n] attention probabilities from nn.MultiheadAttention with
                     need_weights=True, average_attn_weights=False
  <name>.hidden.npy  [L+1, n, d] the input and each layer's output

Run from the repository root:  /usr/bin/python3 tests/reference/gen_fixtures.py
CI never runs this; the fixtures are committed.
"""
import json
import os

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "fixtures")

# name, d_model, heads, ffn, layers, tokens, activation, padded tokens at the end, flags
CONFIGS = [
    ("small-relu", 8, 2, 16, 1, 5, "relu", 0, {}),
    ("odd-heads-gelu", 12, 3, 24, 2, 7, "gelu", 0, {}),
    ("five-heads-masked", 20, 5, 32, 2, 9, "gelu", 3, {}),
    ("wide-one-head-masked", 16, 1, 8, 1, 6, "relu", 2, {}),
    ("seven-heads-3-layers", 14, 7, 28, 3, 11, "gelu", 4, {}),
]


def mat(t):
    return [[float(x) for x in row] for row in t]


def vec(t):
    return [float(x) for x in t]


def main():
    os.makedirs(OUT, exist_ok=True)
    torch.manual_seed(20261129)
    for name, d, h, f, nl, n, act, pad, _ in CONFIGS:
        layers = [torch.nn.TransformerEncoderLayer(d, h, dim_feedforward=f, dropout=0.0, activation=act,
                                                   layer_norm_eps=1e-5, batch_first=True, norm_first=False)
                  for _ in range(nl)]
        for layer in layers:
            layer.train()  # dropout is 0; training mode keeps torch off its fused fast path
            with torch.no_grad():  # non-trivial LayerNorm parameters, so they are really tested
                layer.norm1.weight.uniform_(0.5, 1.5)
                layer.norm1.bias.uniform_(-0.2, 0.2)
                layer.norm2.weight.uniform_(0.5, 1.5)
                layer.norm2.bias.uniform_(-0.2, 0.2)
                layer.self_attn.in_proj_bias.uniform_(-0.3, 0.3)
                layer.self_attn.out_proj.bias.uniform_(-0.3, 0.3)
        x = torch.randn(1, n, d)
        mask = [1] * (n - pad) + [0] * pad
        kpm = torch.tensor([[m == 0 for m in mask]])
        attn, hidden = [], [x[0].clone()]
        with torch.no_grad():
            cur = x
            for layer in layers:
                _, w = layer.self_attn(cur, cur, cur, key_padding_mask=kpm, need_weights=True,
                                       average_attn_weights=False)
                attn.append(w[0].numpy())
                cur = layer(cur, src_key_padding_mask=kpm)
                hidden.append(cur[0].clone())
        toy_layers = []
        for layer in layers:
            W = layer.self_attn.in_proj_weight.detach()
            B = layer.self_attn.in_proj_bias.detach()
            toy_layers.append({
                "W_Q": mat(W[:d].T), "W_K": mat(W[d:2 * d].T), "W_V": mat(W[2 * d:].T),
                "b_Q": vec(B[:d]), "b_K": vec(B[d:2 * d]), "b_V": vec(B[2 * d:]),
                "W_O": mat(layer.self_attn.out_proj.weight.detach().T),
                "b_O": vec(layer.self_attn.out_proj.bias.detach()),
                "ln1_gamma": vec(layer.norm1.weight.detach()), "ln1_beta": vec(layer.norm1.bias.detach()),
                "W_1": mat(layer.linear1.weight.detach().T), "b_1": vec(layer.linear1.bias.detach()),
                "W_2": mat(layer.linear2.weight.detach().T), "b_2": vec(layer.linear2.bias.detach()),
                "ln2_gamma": vec(layer.norm2.weight.detach()), "ln2_beta": vec(layer.norm2.bias.detach()),
            })
        model = {
            "name": name,
            "description": f"torch.nn.TransformerEncoderLayer x{nl}, d_model {d}, {h} heads, ffn {f}, {act}",
            "tokens": [f"t{i}" for i in range(n)],
            "inputs": mat(x[0]),
            "d_model": d, "heads": h, "d_ffn": f, "activation": act, "ln_eps": 1e-5,
            "layernorm": True, "ffn": True, "residual": True,
            "layers": toy_layers,
        }
        with open(os.path.join(OUT, name + ".json"), "w") as fp:
            json.dump(model, fp)
        with open(os.path.join(OUT, name + ".mask"), "w") as fp:
            fp.write(",".join(str(m) for m in mask) + "\n")
        np.save(os.path.join(OUT, name + ".attn.npy"), np.stack(attn).astype(np.float32))
        np.save(os.path.join(OUT, name + ".hidden.npy"), torch.stack(hidden).numpy().astype(np.float32))
        print(name, "attn", np.stack(attn).shape)


if __name__ == "__main__":
    main()
