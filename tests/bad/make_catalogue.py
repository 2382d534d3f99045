#!/usr/bin/env python3
"""Writes the bad-file catalogue's committed inputs: a tiny good Hugging Face folder
(tests/bad/base/), a good sharded one (tests/bad/base-sharded/), and per case only the
files that differ from the base (tests/bad/cases/<case>/).  run-catalogue.py overlays a
case on its base in a temporary folder and runs the CLI on it; catalogue.txt holds each
case's command and the exact message it must produce.

Plain python3 (struct, json, random); deterministic, so rerunning it rewrites the same
bytes.  Run:  python3 tests/bad/make_catalogue.py
"""
import json
import math
import os
import random
import shutil
import struct

HERE = os.path.dirname(os.path.abspath(__file__))

# The base model: 2 layers so "which layer went non-finite first" means something.
L, H, D, F, V, P, T = 2, 2, 4, 8, 24, 16, 2
VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "cat", "sat", "on", "mat", "a",
         "dog", "##s", "hello", "world", ".", ",", "我", "爱", "你", "is", "big", "run", "##ning"]
assert len(VOCAB) == V

CONFIG = {
    "architectures": ["BertModel"],
    "hidden_act": "gelu",
    "hidden_size": D,
    "intermediate_size": F,
    "layer_norm_eps": 1e-12,
    "max_position_embeddings": P,
    "model_type": "bert",
    "num_attention_heads": H,
    "num_hidden_layers": L,
    "position_embedding_type": "absolute",
    "type_vocab_size": T,
    "vocab_size": V,
}


def tensors():
    """[(name, shape, values)] in Hugging Face's names, deterministic random weights."""
    rng = random.Random(9)

    def rnd(*shape):
        n = 1
        for s in shape:
            n *= s
        return [round(rng.gauss(0, 0.5), 4) for _ in range(n)]

    out = [("embeddings.word_embeddings.weight", [V, D], rnd(V, D)),
           ("embeddings.position_embeddings.weight", [P, D], rnd(P, D)),
           ("embeddings.token_type_embeddings.weight", [T, D], rnd(T, D)),
           ("embeddings.LayerNorm.weight", [D], [1.0] * D),
           ("embeddings.LayerNorm.bias", [D], [0.0] * D)]
    for i in range(L):
        p = "encoder.layer.%d." % i
        for part in ("query", "key", "value"):
            out.append((p + "attention.self.%s.weight" % part, [D, D], rnd(D, D)))
            out.append((p + "attention.self.%s.bias" % part, [D], rnd(D)))
        out += [(p + "attention.output.dense.weight", [D, D], rnd(D, D)),
                (p + "attention.output.dense.bias", [D], rnd(D)),
                (p + "attention.output.LayerNorm.weight", [D], [1.0] * D),
                (p + "attention.output.LayerNorm.bias", [D], [0.0] * D),
                (p + "intermediate.dense.weight", [F, D], rnd(F, D)),
                (p + "intermediate.dense.bias", [F], rnd(F)),
                (p + "output.dense.weight", [D, F], rnd(D, F)),
                (p + "output.dense.bias", [D], rnd(D)),
                (p + "output.LayerNorm.weight", [D], [1.0] * D),
                (p + "output.LayerNorm.bias", [D], [0.0] * D)]
    return out


def safetensors(entries, header_edit=None, raw_header=None):
    """entries: [(name, shape, values)] as F32.  header_edit(dict) may change the header
    dict before it is written; raw_header replaces the JSON text entirely."""
    header, data = {"__metadata__": {"format": "pt"}}, b""
    for name, shape, values in entries:
        blob = struct.pack("<%df" % len(values), *values)
        header[name] = {"dtype": "F32", "shape": shape,
                        "data_offsets": [len(data), len(data) + len(blob)]}
        data += blob
    if header_edit:
        header_edit(header)
    text = raw_header if raw_header is not None else json.dumps(header, separators=(",", ":"))
    text = text.encode() if isinstance(text, str) else text
    text += b" " * ((8 - len(text) % 8) % 8)   # keeps the data area 8-aligned, as the format asks
    return struct.pack("<Q", len(text)) + text + data


def write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


def config_text(edit=None):
    c = dict(CONFIG)
    if edit:
        edit(c)
    return json.dumps(c, indent=2, ensure_ascii=False) + "\n"


def with_values(name, values):
    """The base tensors with one tensor's values replaced."""
    return [(n, s, values if n == name else v) for n, s, v in tensors()]


def main():
    for sub in ("base", "base-sharded", "cases"):
        shutil.rmtree(os.path.join(HERE, sub), ignore_errors=True)
    base = os.path.join(HERE, "base")
    write(os.path.join(base, "config.json"), config_text())
    write(os.path.join(base, "vocab.txt"), "\n".join(VOCAB) + "\n")
    write(os.path.join(base, "model.safetensors"), safetensors(tensors()))

    # Sharded: layer 1 in the second file.
    sh = os.path.join(HERE, "base-sharded")
    write(os.path.join(sh, "config.json"), config_text())
    write(os.path.join(sh, "vocab.txt"), "\n".join(VOCAB) + "\n")
    names = ["model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"]
    parts = [[t for t in tensors() if "layer.1." not in t[0]],
             [t for t in tensors() if "layer.1." in t[0]]]
    weight_map = {}
    for fname, part in zip(names, parts):
        write(os.path.join(sh, fname), safetensors(part))
        for t in part:
            weight_map[t[0]] = fname
    index = {"metadata": {"total_size": 4 * sum(len(t[2]) for t in tensors())},
             "weight_map": weight_map}
    write(os.path.join(sh, "model.safetensors.index.json"), json.dumps(index, indent=2) + "\n")

    cases = {}

    def case(name, fname, data):
        cases.setdefault(name, {})[fname] = data

    ms = "model.safetensors"
    good = safetensors(tensors())
    hlen = struct.unpack("<Q", good[:8])[0]
    one = [("embeddings.LayerNorm.bias", [D], [0.0] * D)]

    # ---- safetensors: sizes and truncation at each structural boundary
    case("st-empty", ms, b"")
    case("st-size-field-cut", ms, good[:5])
    case("st-header-only-size", ms, good[:8])
    case("st-header-cut", ms, good[:8 + hlen // 2])
    case("st-data-cut", ms, good[:8 + hlen + 100])
    case("st-data-missing", ms, good[:8 + hlen])
    case("st-header-size-zero", ms, struct.pack("<Q", 0) + good[8:])
    case("st-header-size-past-eof", ms, struct.pack("<Q", len(good)) + good[8:])
    case("st-header-size-2p63", ms, struct.pack("<Q", 1 << 63) + good[8:])
    case("st-header-size-2p64-1", ms, struct.pack("<Q", (1 << 64) - 1) + good[8:])
    # ---- the JSON header
    case("st-json-invalid", ms, safetensors(one, raw_header='{"a": [1, 2'))
    case("st-json-not-object", ms, safetensors([], raw_header="[1, 2]"))
    case("st-json-trailing-bytes", ms, safetensors([], raw_header='{} {"x": 1}'))
    case("st-json-not-utf8", ms, safetensors([], raw_header=b'{"\xff\xfe": 1}'))
    case("st-entry-not-object", ms, safetensors(one, lambda h: h.update({"x": 5})))

    def entry(field, value):
        def edit(h):
            if value is None:
                del h["embeddings.LayerNorm.bias"][field]
            else:
                h["embeddings.LayerNorm.bias"][field] = value
        return edit

    case("st-dtype-missing", ms, safetensors(one, entry("dtype", None)))
    case("st-dtype-unknown", ms, safetensors(one, entry("dtype", "FP32")))
    case("st-dtype-not-string", ms, safetensors(one, entry("dtype", 32)))
    case("st-shape-missing", ms, safetensors(one, entry("shape", None)))
    case("st-shape-negative", ms, safetensors(one, entry("shape", [-4])))
    case("st-shape-fraction", ms, safetensors(one, entry("shape", [2.5])))
    case("st-shape-past-2p53", ms, safetensors(one, entry("shape", [1, 18014398509481984])))
    case("st-shape-too-many-dims", ms, safetensors(one, entry("shape", [1] * 9)))
    case("st-shape-product-overflow", ms,
         safetensors(one, entry("shape", [4294967296, 4294967296])))
    case("st-shape-bytes-overflow", ms,
         safetensors(one, entry("shape", [2305843009213693952 // 1024, 1024])))
    case("st-offsets-missing", ms, safetensors(one, entry("data_offsets", None)))
    case("st-offsets-negative", ms, safetensors(one, entry("data_offsets", [-16, 0])))
    case("st-offsets-begin-after-end", ms, safetensors(one, entry("data_offsets", [16, 0])))
    case("st-offsets-past-end", ms, safetensors(one, entry("data_offsets", [16, 32])))
    case("st-offsets-past-2p53", ms,
         safetensors(one, entry("data_offsets", [0, 18014398509481984])))
    case("st-length-mismatch", ms, safetensors(one, entry("shape", [3])))

    def overlap(h):
        h["embeddings.LayerNorm.weight"]["data_offsets"] = [8, 24]
    two = [("embeddings.LayerNorm.bias", [D], [0.0] * D),
           ("embeddings.LayerNorm.weight", [D], [1.0] * D)]
    case("st-offsets-overlap", ms, safetensors(two, overlap))
    # a JSON object with one key twice (json.dumps cannot write that): the header of
    # `two` with the second name changed into the first
    text = safetensors(two)[8:8 + struct.unpack("<Q", safetensors(two)[:8])[0]].rstrip(b" ")
    text = text.replace(b'"embeddings.LayerNorm.weight"', b'"embeddings.LayerNorm.bias"')
    case("st-duplicate-name", ms, safetensors(two, raw_header=text))
    # ---- what the encoder needs from a well-formed file
    case("st-tensor-missing", ms,
         safetensors([t for t in tensors() if t[0] != "encoder.layer.1.attention.self.key.weight"]))
    case("st-tensor-wrong-shape", ms, safetensors(
        [(n, [8, 2] if n == "encoder.layer.0.attention.self.query.weight" else s, v)
         for n, s, v in tensors()]))

    def as_i32(h):
        h["encoder.layer.0.output.dense.bias"]["dtype"] = "I32"
    case("st-dtype-unsupported", ms, safetensors(tensors(), as_i32))
    # ---- non-finite weights: not an error; the run names the first bad layer
    nan = float("nan")
    case("st-nan-weights", ms, safetensors(
        with_values("encoder.layer.1.attention.self.query.weight", [nan] + [0.1] * (D * D - 1))))
    case("st-nan-weights-json", ms, cases["st-nan-weights"][ms])
    case("st-inf-weights", ms, safetensors(
        with_values("encoder.layer.0.intermediate.dense.bias", [math.inf] + [0.0] * (F - 1))))
    case("st-inf-embedding", ms, safetensors(
        with_values("embeddings.token_type_embeddings.weight", [-math.inf] + [0.0] * (T * D - 1))))

    # ---- config.json
    cj = "config.json"

    def cfg(name, edit):
        case(name, cj, config_text(edit))

    cfg("cfg-heads-zero", lambda c: c.update(num_attention_heads=0))
    cfg("cfg-heads-not-dividing", lambda c: c.update(num_attention_heads=3))
    cfg("cfg-key-missing", lambda c: c.pop("num_hidden_layers"))
    cfg("cfg-wrong-type", lambda c: c.update(hidden_size="4"))
    cfg("cfg-fraction", lambda c: c.update(intermediate_size=8.5))
    cfg("cfg-negative", lambda c: c.update(vocab_size=-24))
    cfg("cfg-huge-layers", lambda c: c.update(num_hidden_layers=10 ** 12))
    cfg("cfg-past-int64", lambda c: c.update(hidden_size=1e300))   # no undefined int64 cast
    cfg("cfg-eps-zero", lambda c: c.update(layer_norm_eps=0))
    cfg("cfg-act-unknown", lambda c: c.update(hidden_act="swish"))
    cfg("cfg-act-not-string", lambda c: c.update(hidden_act=["gelu"]))
    cfg("cfg-position-type", lambda c: c.update(position_embedding_type="relative_key"))
    cfg("cfg-model-type", lambda c: c.update(model_type="deberta"))
    cfg("cfg-disagrees-with-weights", lambda c: c.update(hidden_size=8))
    case("cfg-invalid-json", cj, '{"hidden_size": 4,\n  "num_hidden_layers": 2\n')
    case("cfg-not-object", cj, "[4, 2]\n")
    case("cfg-empty", cj, "")
    # ---- vocab.txt
    vt = "vocab.txt"
    case("vocab-empty", vt, "")
    case("vocab-no-unk", vt, "\n".join(t for t in VOCAB if t != "[UNK]") + "\n")
    case("vocab-no-cls", vt, "\n".join(t for t in VOCAB if t != "[CLS]") + "\n")
    case("vocab-not-utf8", vt, ("\n".join(VOCAB[:7]) + "\n").encode() + b"caf\xe9\n" +
         ("\n".join(VOCAB[8:]) + "\n").encode())
    case("vocab-too-long", vt, "\n".join(VOCAB + ["extra%d" % i for i in range(6)]) + "\n")
    # ---- tokenizer_config.json
    case("tokcfg-invalid-json", "tokenizer_config.json", '{"do_lower_case": tru}\n')
    case("tokcfg-wrong-type", "tokenizer_config.json", '{"do_lower_case": "yes"}\n')
    # ---- the shard index (base-sharded)
    ix = "model.safetensors.index.json"

    def index_case(name, edit=None, raw=None):
        i = json.loads(json.dumps(index))
        if edit:
            edit(i)
        case(name, ix, raw if raw is not None else json.dumps(i, indent=2) + "\n")

    emb = "embeddings.word_embeddings.weight"
    index_case("index-invalid-json", raw='{"weight_map": {"a": "b"}')
    index_case("index-no-weight-map", lambda i: i.pop("weight_map"))
    index_case("index-weight-map-empty", lambda i: i.update(weight_map={}))
    index_case("index-path-traversal", lambda i: i["weight_map"].update({emb: "../../etc/passwd"}))
    index_case("index-absolute-path", lambda i: i["weight_map"].update({emb: "/etc/passwd"}))
    index_case("index-shard-missing",
               lambda i: i["weight_map"].update({emb: "model-00003-of-00003.safetensors"}))
    index_case("index-not-a-string", lambda i: i["weight_map"].update({emb: 1}))
    index_case("index-wrong-shard", lambda i: i["weight_map"].update({emb: names[1]}))
    case("index-shard-truncated", names[1], safetensors(parts[1])[:20])
    # ---- toy-model JSON (no base; run with --model FILE)
    toy = {"name": "bad-toy", "tokens": ["a", "b"], "inputs": [[1, 0], [0, 1]],
           "d_model": 2, "heads": 1, "layers": [{}]}

    def toy_case(name, edit=None, raw=None):
        t = json.loads(json.dumps(toy))
        if edit:
            edit(t)
        case(name, "toy.json", raw if raw is not None else json.dumps(t) + "\n")

    toy_case("toy-invalid-json", raw='{"tokens": ["a", "b"], "d_model": 2,')
    toy_case("toy-heads-zero", lambda t: t.update(heads=0))
    toy_case("toy-heads-not-dividing", lambda t: t.update(d_model=3, heads=2,
                                                          inputs=[[1, 0, 0], [0, 1, 0]]))
    toy_case("toy-inputs-missing", lambda t: t.pop("inputs"))
    toy_case("toy-inputs-short-row", lambda t: t.update(inputs=[[1, 0], [0]]))
    toy_case("toy-matrix-wrong-shape", lambda t: t.update(layers=[{"W_Q": [[1, 0, 0], [0, 1, 0]]}]))
    toy_case("toy-unknown-key", lambda t: t.update(layers=[{"Wq": [[1, 0], [0, 1]]}]))
    toy_case("toy-tokens-empty", lambda t: t.update(tokens=[], inputs=[]))
    toy_case("toy-token-not-string", lambda t: t.update(tokens=["a", 7]))
    toy_case("toy-overflow-inputs", raw='{"tokens": ["a", "b"], "inputs": [[1e999, 0], [0, 1]], '
             '"d_model": 2, "heads": 1, "layers": [{}]}\n')

    for name, files in cases.items():
        for fname, data in files.items():
            write(os.path.join(HERE, "cases", name, fname), data)
    print("%d cases written under %s" % (len(cases), os.path.join(HERE, "cases")))


if __name__ == "__main__":
    main()
