#!/usr/bin/python3
"""Writes small random BERT models as pytorch_model.bin with torch.save itself, each with a
twin folder holding the same weights as model.safetensors, and reference outputs.

  tests/hf/models/<name>/      config.json, pytorch_model.bin (or shards + index), vocab.txt
  tests/hf/models/<name>-st/   the same weights (as the .bin holds them) in model.safetensors
  tests/hf/fixtures/<name>.json, <name>-<case>-attn.npy, <name>-<case>-hidden.npy
                               (same layout as gen_models.py's; the masked case has the
                               masked-LM head's top 5)

The formats torch.save writes: the zip layout with the file's stem as the record name
(torch 1.x writing to a path: "pytorch_model/data.pkl"), the zip layout written to a buffer
("archive/data.pkl", also what torch 2.x writes to a path), and the legacy pre-1.6 stream
(_use_new_zipfile_serialization=False; bert-base-uncased's own file).  What each model
exercises: F32/F16/BF16 storages, a decoder tied to the word embeddings (one storage, two
names), a transposed (non-contiguous) weight, Q/K/V as views at offsets into one storage,
the int64 position_ids buffer, LayerNorm gamma/beta names, shards with an index.

The reference forward is gen_models.py's (BertModel in float64, cross-checked against
torch.nn.TransformerEncoderLayer), run on the values the file holds.  It never calls
attnscope.  Run with Debian's python3-torch:  /usr/bin/python3 tests/hf/gen_torch_bin.py
A bert-base sized random pytorch_model.bin for the open-time benchmark (not committed):
  /usr/bin/python3 tests/hf/gen_torch_bin.py --bert-base /tmp/attnscope-bert-base-bin [--legacy]
"""
import argparse
import collections
import io
import json
import math
import os
import shutil
import sys

import numpy as np
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gen_models as gm  # noqa: E402

TORCH_DT = {"F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16}

# name, config overrides, options
MODELS = [
    # torch 1.x zip written to a path: "pytorch_model/data.pkl"; a transposed weight, fused
    # Q/K/V views, the position_ids buffer
    ("bin-zip-f32", dict(), dict(dtype="F32", layout="zip-path", transposed=True, fused=True,
                                 position_ids=True)),
    # zip written to a buffer: "archive/data.pkl"; BertForMaskedLM with the decoder tied
    ("bin-archive-f16", dict(architectures=["BertForMaskedLM"], torch_dtype="float16",
                             layer_norm_eps=1e-5, hidden_size=16, intermediate_size=32),
     dict(dtype="F16", layout="zip-buffer", prefix="bert.", mlm="tied", pooler=False,
          position_ids=True)),
    # the legacy stream, BF16, BertForPreTraining with gamma/beta names like bert-base-uncased
    ("bin-legacy-bf16", dict(architectures=["BertForPreTraining"], torch_dtype="bfloat16",
                             hidden_act="gelu_pytorch_tanh", hidden_size=24,
                             num_attention_heads=2, intermediate_size=48),
     dict(dtype="BF16", layout="legacy", prefix="bert.", mlm="tied", pooler=True,
          legacy_names=True, transposed=True)),
    # the legacy stream, F32, with a transposed weight and fused views
    ("bin-legacy-f32", dict(hidden_size=30, num_attention_heads=5, intermediate_size=36,
                            hidden_act="gelu_new", vocab_size=41),
     dict(dtype="F32", layout="legacy", transposed=True, fused=True)),
    # two shards and pytorch_model.bin.index.json
    ("bin-sharded", dict(hidden_size=16, num_attention_heads=2, intermediate_size=32),
     dict(dtype="F32", layout="zip-path", shards=2)),
]


def state_dict(W, cfg, opts):
    """The state_dict torch.save gets: {hf name: tensor} with the storage sharing and views
    the options ask for, and R, {name without prefix: float64 values held}."""
    dt = TORCH_DT[opts["dtype"]]
    prefix = opts.get("prefix", "")
    legacy = opts.get("legacy_names", False)
    sd = collections.OrderedDict()
    R = {}
    for nm, t in W.items():
        r = t.to(dt)
        R[nm] = r.to(torch.float64)
        sd[gm.hf_name(nm, prefix, legacy)] = r
    d = cfg["hidden_size"]
    if opts.get("transposed"):
        # stored transposed in memory: same values, strides (1, rows)
        for nm in ("encoder.layer.0.intermediate.dense.weight", "encoder.layer.1.output.dense.weight"):
            k = gm.hf_name(nm, prefix, legacy)
            sd[k] = sd[k].t().contiguous().t()
            assert not sd[k].is_contiguous()
    if opts.get("fused"):
        for i in range(cfg["num_hidden_layers"]):
            p = f"encoder.layer.{i}.attention.self."
            names = [gm.hf_name(p + s + ".weight", prefix, legacy) for s in ("query", "key", "value")]
            fused = torch.cat([sd[n] for n in names])
            for j, n in enumerate(names):
                sd[n] = fused[j * d:(j + 1) * d]
                assert sd[n].storage_offset() == j * d * d
    if opts.get("mlm") == "tied":
        we = gm.hf_name("embeddings.word_embeddings.weight", prefix, legacy)
        sd["cls.predictions.decoder.weight"] = sd[we]          # one storage, two names
    if opts.get("position_ids"):
        P = cfg["max_position_embeddings"]
        sd[prefix + "embeddings.position_ids"] = torch.arange(P).expand((1, -1))
    return sd, R


def save(obj, path, layout):
    if layout == "zip-path":
        torch.save(obj, path)
    elif layout == "zip-buffer":
        buf = io.BytesIO()
        torch.save(obj, buf)
        with open(path, "wb") as f:
            f.write(buf.getvalue())
    elif layout == "legacy":
        torch.save(obj, path, _use_new_zipfile_serialization=False)
    else:
        raise ValueError(layout)


def st_entries(sd, dtype):
    """The same tensors for the safetensors twin (contiguous; tied names stored once, as
    safetensors cannot share)."""
    out = []
    for k, t in sd.items():
        if k == "cls.predictions.decoder.weight":
            continue                     # the loader ties it to the word embeddings
        if t.dtype == torch.int64:
            out.append((k, "I64", tuple(t.shape), t.contiguous().numpy().astype("<i8").tobytes()))
            continue
        raw, _ = gm.tensor_bytes(t, dtype)   # t is already in dtype: its bytes unchanged
        out.append((k, dtype, tuple(t.shape), raw))
    out.sort(key=lambda e: e[0])
    return out


def write_common(folder, cfg):
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2, sort_keys=True)
    with open(os.path.join(folder, "vocab.txt"), "w") as f:
        f.write("\n".join(gm.vocab_for(cfg["vocab_size"])) + "\n")


def write_model(name, cfg, opts, out_models, out_fix, seed):
    g = torch.Generator().manual_seed(seed)
    W = gm.make_weights(cfg, g, pooler=opts.get("pooler", True), mlm=opts.get("mlm"))
    sd, R = state_dict(W, cfg, opts)
    folder = os.path.join(out_models, name)
    twin = folder + "-st"
    for d in (folder, twin):
        if os.path.isdir(d):
            shutil.rmtree(d)
        os.makedirs(d)

    shards = opts.get("shards", 0)
    if shards:
        keys = sorted(sd)
        per = math.ceil(len(keys) / shards)
        weight_map, total = {}, 0
        for s in range(shards):
            fname = f"pytorch_model-{s + 1:05d}-of-{shards:05d}.bin"
            part = collections.OrderedDict((k, sd[k]) for k in keys[s * per:(s + 1) * per])
            save(part, os.path.join(folder, fname), opts["layout"])
            for k, t in part.items():
                weight_map[k] = fname
                total += t.numel() * t.element_size()
        with open(os.path.join(folder, "pytorch_model.bin.index.json"), "w") as f:
            json.dump({"metadata": {"total_size": total}, "weight_map": weight_map}, f, indent=2)
    else:
        save(sd, os.path.join(folder, "pytorch_model.bin"), opts["layout"])
    # read back: what the file holds is what the reference uses
    files = [os.path.join(folder, f) for f in sorted(os.listdir(folder)) if f.endswith(".bin")]
    back = {}
    for p in files:
        back.update(torch.load(p))
    assert set(back) == set(sd), "torch.load gives other names"
    for k in sd:
        assert torch.equal(back[k], sd[k]), k

    gm.write_safetensors(os.path.join(twin, "model.safetensors"), st_entries(sd, opts["dtype"]))
    write_common(folder, cfg)
    write_common(twin, cfg)

    V = cfg["vocab_size"]
    vocab = gm.vocab_for(V)
    rng = np.random.default_rng(seed)
    words = [int(x) for x in rng.integers(5, V, size=12)]
    cases = [
        {"name": "single", "ids": [2] + words[:5] + [3], "type_ids": [0] * 7, "mask": [1] * 7},
        {"name": "pair-padded", "ids": [2] + words[5:7] + [3] + words[7:10] + [3, 0, 0],
         "type_ids": [0] * 4 + [1] * 4 + [0, 0], "mask": [1] * 8 + [0, 0]},
    ]
    if opts.get("mlm"):
        masked = dict(cases[0], name="masked", ids=list(cases[0]["ids"]))
        masked["ids"][3] = vocab.index("[MASK]")
        cases.append(masked)
    for c in cases:
        attn, hidden = gm.bert_forward(R, cfg, c["ids"], c["type_ids"], c["mask"])
        if c["name"] == "masked":
            h = hidden[-1][3]
            t = F.linear(h, R["cls.predictions.transform.dense.weight"],
                         R["cls.predictions.transform.dense.bias"])
            t = F.layer_norm(gm.activation(cfg["hidden_act"])(t), (cfg["hidden_size"],),
                             R["cls.predictions.transform.LayerNorm.weight"],
                             R["cls.predictions.transform.LayerNorm.bias"], cfg["layer_norm_eps"])
            E = R["embeddings.word_embeddings.weight"]      # tied
            probs = torch.softmax(F.linear(t, E, R["cls.predictions.bias"]), dim=-1)
            top = torch.topk(probs, 5)
            c["mlm_position"] = 3
            c["mlm_top_ids"] = [int(i) for i in top.indices]
            c["mlm_top_probs"] = [float(p) for p in top.values]
        gm.cross_check(R, cfg, c["ids"], c["type_ids"], c["mask"], attn, hidden)
        np.save(os.path.join(out_fix, f"{name}-{c['name']}-attn.npy"), attn.numpy().astype("<f4"))
        np.save(os.path.join(out_fix, f"{name}-{c['name']}-hidden.npy"),
                hidden.numpy().astype("<f4"))
    meta = {"model": name, "n_layers": cfg["num_hidden_layers"],
            "n_heads": cfg["num_attention_heads"], "d_model": cfg["hidden_size"],
            "has_mlm_head": bool(opts.get("mlm")), "layout": opts["layout"],
            "dtype": opts["dtype"], "cases": cases}
    with open(os.path.join(out_fix, f"{name}.json"), "w") as f:
        json.dump(meta, f, indent=1)


def write_bert_base(folder, legacy):
    """gen_models.py's random bert-base folder, its weights saved with torch.save."""
    gm.write_bert_base(folder)
    with open(os.path.join(folder, "config.json")) as f:
        cfg = json.load(f)
    os.unlink(os.path.join(folder, "model.safetensors"))
    g = torch.Generator().manual_seed(0)
    W = gm.make_weights(cfg, g)
    sd = collections.OrderedDict((k, v.contiguous()) for k, v in W.items())
    save(sd, os.path.join(folder, "pytorch_model.bin"), "legacy" if legacy else "zip-path")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bert-base", metavar="DIR", help="write only a random bert-base .bin to DIR")
    ap.add_argument("--legacy", action="store_true", help="the legacy format for --bert-base")
    a = ap.parse_args()
    torch.set_num_threads(1)
    if a.bert_base:
        write_bert_base(a.bert_base, a.legacy)
        return
    out_models, out_fix = os.path.join(HERE, "models"), os.path.join(HERE, "fixtures")
    for seed, (name, over, opts) in enumerate(MODELS):
        write_model(name, gm.base_config(**over), opts, out_models, out_fix, 2000 + seed)
        print("wrote", name)


if __name__ == "__main__":
    main()
