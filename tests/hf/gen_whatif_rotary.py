#!/usr/bin/python3
"""Reference attention for the what-if lab's rotary knobs (--rope-theta, --rope-factor,
--no-positions, --sliding-off / --sliding-on with --sliding-window), for
tests/cli/test-whatif-rotary.sh.

Each case takes one of gen_decoders.py's committed random folders (tests/hf/models/<name>,
read here from its model.safetensors, F32) and runs gen_decoders.py's float64 LlamaModel
forward (modeling_llama.py / Qwen3 / Mistral, eager attention) on a config changed as the
knob says, which is how transformers itself would compute the change:

  rope-theta B     config["rope_theta"] = B (the model's own rope_scaling kept)
  rope-factor F    config["rope_scaling"] = linear, factor F (the fixture models have none)
  no-positions     cos = 1, sin = 0: q and k are not rotated (Qwen3's q/k norms still run)
  sliding-off L    layer L's window None; sliding-on L with window W: layer L's window W
                   (masking_utils' sliding_window_overlay, kv_idx > q_idx - W)

It never calls attnscope.  Writes tests/hf/fixtures/whatif-rotary.json: a list of
{"name", "model", "args" (attnscope's options), "ids", "attn" [L][H][n][n] float64 lists}.
Run with Debian's python3-torch:  /usr/bin/python3 tests/hf/gen_whatif_rotary.py
"""
import json
import os
import struct
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gen_decoders as G  # noqa: E402


def read_f32(path):
    raw = open(path, "rb").read()
    hl = struct.unpack("<Q", raw[:8])[0]
    head = json.loads(raw[8:8 + hl])
    base = 8 + hl
    out = {}
    for name, e in head.items():
        if name == "__metadata__":
            continue
        assert e["dtype"] == "F32", (path, name, e["dtype"])
        a, b = e["data_offsets"]
        out[name] = torch.from_numpy(np.frombuffer(raw[base + a:base + b], dtype="<f4").copy()
                                     .reshape(e["shape"])).double()
    return out


def attention(name, cfg, ids, nope=False, windows=None):
    R = read_f32(os.path.join(HERE, "models", name, "model.safetensors"))
    saved_cs, saved_w = G.cos_sin, G.windows_of
    try:
        if nope:
            G.cos_sin = lambda c, n: (torch.ones(n, G.dims(c)[3], dtype=torch.float64),
                                      torch.zeros(n, G.dims(c)[3], dtype=torch.float64))
        if windows is not None:
            G.windows_of = lambda c: windows
        attn, _, _ = G.forward(R, cfg, ids, [1] * len(ids))
    finally:
        G.cos_sin, G.windows_of = saved_cs, saved_w
    return attn


def main():
    cases = []
    ids12 = [7, 23, 41, 9, 58, 12, 33, 7, 23, 50, 19, 44]

    def add(label, name, args, ids, **kw):
        cfg = json.load(open(os.path.join(HERE, "models", name, "config.json")))
        over = kw.pop("cfg", {})
        cfg.update(over)
        a = attention(name, cfg, ids, **kw)
        cases.append({"name": label, "model": name, "args": args, "ids": ids, "attn": a.tolist()})

    add("llama-base", "llama-f32", [], ids12)
    add("llama-theta", "llama-f32", ["--rope-theta", "7"], ids12, cfg={"rope_theta": 7.0})
    add("llama-factor", "llama-f32", ["--rope-factor", "4"], ids12,
        cfg={"rope_scaling": {"rope_type": "linear", "factor": 4.0}})
    add("llama-theta-factor", "llama-f32", ["--rope-theta", "50", "--rope-factor", "0.5"], ids12,
        cfg={"rope_theta": 50.0, "rope_scaling": {"rope_type": "linear", "factor": 0.5}})
    add("llama-nope", "llama-f32", ["--no-positions"], ids12, nope=True)
    add("llama-window-on", "llama-f32", ["--sliding-on", "1", "--sliding-window", "3"], ids12, windows=[None, 3])
    add("qwen3-nope", "qwen3-f32", ["--no-positions"], ids12, nope=True)
    add("mistral-base", "mistral-window", [], ids12)
    add("mistral-window-off", "mistral-window", ["--sliding-off", "0"], ids12, windows=[None, 4])
    add("mistral-theta", "mistral-window", ["--rope-theta", "3"], ids12, cfg={"rope_theta": 3.0})
    out = os.path.join(HERE, "fixtures", "whatif-rotary.json")
    with open(out, "w") as f:
        json.dump(cases, f)
    print("wrote", out, len(cases), "cases")


if __name__ == "__main__":
    main()
