#!/usr/bin/python3
"""The training lab's peer: the same decoder as `attnscope train` (GPT-2 layout, pre-LN,
learned positions, gelu_new, tied LM head, AdamW lr 1e-3 wd 0.01, clip 1) trained on the
same copy task in PyTorch eager float32, timed the same way (steps per second over the
whole run, batches drawn in the loop).  Prints one JSON line.

Usage: train_torch.py [--threads 2] [--steps 1000] [--d-model 64] [--layers 2] [--heads 4]
                      [--length 16] [--symbols 10] [--batch 32]
"""
import argparse
import json
import math
import time

import torch


class Block(torch.nn.Module):
    def __init__(self, d, h, f):
        super().__init__()
        self.h = h
        self.ln_1, self.ln_2 = torch.nn.LayerNorm(d, eps=1e-5), torch.nn.LayerNorm(d, eps=1e-5)
        self.c_attn, self.c_proj = torch.nn.Linear(d, 3 * d), torch.nn.Linear(d, d)
        self.c_fc, self.c_proj2 = torch.nn.Linear(d, f), torch.nn.Linear(f, d)

    def forward(self, x, mask):
        B, n, d = x.shape
        k_ = d // self.h
        q, k, v = self.c_attn(self.ln_1(x)).split(d, dim=2)
        q, k, v = (t.view(B, n, self.h, k_).transpose(1, 2) for t in (q, k, v))
        p = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(k_) + mask, dim=-1)
        x = x + self.c_proj((p @ v).transpose(1, 2).reshape(B, n, d))
        return x + self.c_proj2(torch.nn.functional.gelu(self.c_fc(self.ln_2(x)), approximate="tanh"))


class Model(torch.nn.Module):
    def __init__(self, V, n, d, h, L):
        super().__init__()
        self.wte, self.wpe = torch.nn.Embedding(V, d), torch.nn.Embedding(n, d)
        self.blocks = torch.nn.ModuleList(Block(d, h, 4 * d) for _ in range(L))
        self.ln_f = torch.nn.LayerNorm(d, eps=1e-5)
        self.register_buffer("mask", torch.triu(torch.full((n, n), float("-inf")), 1))
        for p in self.parameters():
            if p.dim() > 1:
                torch.nn.init.normal_(p, std=0.02)

    def forward(self, ids):
        x = self.wte(ids) + self.wpe.weight[None, : ids.shape[1]]
        for b in self.blocks:
            x = b(x, self.mask)
        return self.ln_f(x) @ self.wte.weight.T


def main():
    ap = argparse.ArgumentParser()
    for name, v in [("threads", 2), ("steps", 1000), ("d-model", 64), ("layers", 2), ("heads", 4),
                    ("length", 16), ("symbols", 10), ("batch", 32)]:
        ap.add_argument("--" + name, type=int, default=v)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(1)
    L, S = a.length, a.symbols
    V, n = 5 + S + 4, 2 * L + 2
    model = Model(V, n, a.d_model, a.heads, a.layers)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
    t0 = time.perf_counter()
    acc = 0.0
    for step in range(a.steps):
        x = torch.randint(5, 5 + S, (a.batch, L))
        ids = torch.cat([torch.full((a.batch, 1), 2), x, torch.full((a.batch, 1), 3), x], dim=1)
        logits = model(ids)[:, L + 1: -1]   # the positions that predict y1..yL
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, V), x.reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        acc = (logits.argmax(-1) == x).float().mean().item()
    el = time.perf_counter() - t0
    print(json.dumps({"tool": "torch", "torch": torch.__version__, "threads": a.threads, "steps": a.steps,
                      "seconds": round(el, 3), "steps_per_s": round(a.steps / el, 2),
                      "loss": round(loss.item(), 5), "accuracy": acc}))


if __name__ == "__main__":
    main()
