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
import zipfile
import io

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


# ---- pytorch_model.bin by hand: the opcodes torch.save (protocol 2) writes -----------

def pk_str(s):
    b = s.encode()
    return b"X" + struct.pack("<I", len(b)) + b


def pk_int(i):
    if 0 <= i < 256:
        return b"K" + bytes([i])
    if 0 <= i < 65536:
        return b"M" + struct.pack("<H", i)
    if -2 ** 31 <= i < 2 ** 31:
        return b"J" + struct.pack("<i", i)
    n = (i.bit_length() + 8) // 8
    return b"\x8a" + bytes([n]) + i.to_bytes(n, "little", signed=True)


def pk_tuple(items):
    return b"(" + b"".join(items) + b"t"


ODICT = b"ccollections\nOrderedDict\n"
REBUILD = b"ctorch._utils\n_rebuild_tensor_v2\n"


def pk_tensor(key, numel, shape, stride=None, offset=0, legacy=False, stype=b"FloatStorage"):
    """_rebuild_tensor_v2((persid storage), offset, size, stride, False, OrderedDict())."""
    if stride is None:
        stride, acc = [], 1
        for d in reversed(shape):
            stride.insert(0, acc)
            acc *= d
    pid = [pk_str("storage"), b"ctorch\n" + stype + b"\n", pk_str(key), pk_str("cpu"),
           pk_int(numel)]
    if legacy:
        pid.append(b"N")
    return (REBUILD + b"(" + pk_tuple(pid) + b"Q" + pk_int(offset) +
            pk_tuple([pk_int(x) for x in shape]) + pk_tuple([pk_int(x) for x in stride]) +
            b"\x89" + ODICT + b")R" + b"tR")


def pk_state_dict(entries, legacy=False, edit=None):
    """entries: [(name, key, numel, shape)]; edit(i, name) may return replacement tensor
    bytes for entry i."""
    out = b"\x80\x02" + ODICT + b")R("
    for i, (name, key, numel, shape) in enumerate(entries):
        t = edit(i, name) if edit else None
        out += pk_str(name) + (t if t is not None else pk_tensor(key, numel, shape, legacy=legacy))
    return out + b"u."


def bin_entries():
    """The base tensors as (name, storage key, numel, shape, values), one storage each."""
    out = []
    for i, (name, shape, values) in enumerate(tensors()):
        out.append((name, str(i), len(values), shape, values))
    return out


def torch_zip(pickle_bytes, storages, prefix="archive", method=zipfile.ZIP_STORED, extra=()):
    """storages: [(key, raw bytes)]; extra: more (name, bytes) entries."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", method) as z:
        for name, data in [("data.pkl", pickle_bytes)] + [("data/" + k, b) for k, b in storages] + \
                [("version", b"3\n")] + list(extra):
            info = zipfile.ZipInfo(prefix + "/" + name, date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = method
            z.writestr(info, data)
    return buf.getvalue()


def torch_bin_zip(edit=None, pickle_bytes=None, method=zipfile.ZIP_STORED, extra=()):
    ents = bin_entries()
    pkl = pickle_bytes if pickle_bytes is not None else \
        pk_state_dict([(n, k, c, s) for n, k, c, s, _ in ents], edit=edit)
    return torch_zip(pkl, [(k, struct.pack("<%df" % len(v), *v)) for _, k, _, _, v in ents],
                     method=method, extra=extra)


def torch_bin_views(views=None, added=(), entries=None):
    """A zip .bin of the base tensors (or entries, [(name, shape, values)]) with some kept as
    views: views {name: (values, stride)} stores only values and declares the tensor's shape
    over them with those strides (a stride 0 broadcasts: torch.expand); added [(name, shape,
    stride, values)] are more tensors of the same kind.  Each tensor has its own storage."""
    views = views or {}
    ents = [(n, s, v, None) for n, s, v in (entries if entries is not None else tensors())]
    ents = [(n, s, views[n][0], views[n][1]) if n in views else (n, s, v, st) for n, s, v, st in ents]
    ents += [(n, s, v, st) for n, s, st, v in added]
    pkl = b"\x80\x02" + ODICT + b")R("
    storages = []
    for i, (name, shape, values, stride) in enumerate(ents):
        pkl += pk_str(name) + pk_tensor(str(i), len(values), shape, stride=stride)
        storages.append((str(i), struct.pack("<%df" % len(values), *values)))
    return torch_zip(pkl + b"u.", storages)


LEGACY_MAGIC = b"\x80\x02\x8a\x0a" + (0x1950a86a20f9469cfc6c).to_bytes(10, "little") + b"."


def torch_bin_legacy(sys_info=None, edit=None):
    ents = bin_entries()
    out = LEGACY_MAGIC + b"\x80\x02" + pk_int(1001) + b"."
    out += sys_info if sys_info is not None else (
        b"\x80\x02}(" + pk_str("protocol_version") + pk_int(1001) + pk_str("little_endian") +
        b"\x88" + pk_str("type_sizes") + b"}(" + pk_str("short") + pk_int(2) + pk_str("int") +
        pk_int(4) + pk_str("long") + pk_int(4) + b"uu.")
    out += pk_state_dict([(n, k, c, s) for n, k, c, s, _ in ents], legacy=True, edit=edit)
    keys = sorted(k for _, k, _, _, _ in ents)
    out += b"\x80\x02](" + b"".join(pk_str(k) for k in keys) + b"e."
    by_key = {k: v for _, k, _, _, v in ents}
    for k in keys:
        out += struct.pack("<q", len(by_key[k])) + struct.pack("<%df" % len(by_key[k]), *by_key[k])
    return out


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
    # the config and the weights agree on a 1-row table (the first row of the base's)
    def first_row(name):
        return safetensors([(n, [1, D], v[:D]) if n == name else (n, sh, v) for n, sh, v in tensors()])
    cfg("cfg-positions-one", lambda c: c.update(max_position_embeddings=1))
    case("cfg-positions-one", ms, first_row("embeddings.position_embeddings.weight"))
    for name in ("cfg-one-type-pair", "cfg-one-type-ids"):
        cfg(name, lambda c: c.update(type_vocab_size=1))
        case(name, ms, first_row("embeddings.token_type_embeddings.weight"))
    cfg("cfg-is-decoder", lambda c: c.update(is_decoder=True))
    cfg("cfg-is-decoder-not-bool", lambda c: c.update(is_decoder="yes"))
    cfg("cfg-position-type", lambda c: c.update(position_embedding_type="relative_key"))
    cfg("cfg-model-type", lambda c: c.update(model_type="deberta"))
    cfg("cfg-disagrees-with-weights", lambda c: c.update(hidden_size=8))
    case("cfg-invalid-json", cj, '{"hidden_size": 4,\n  "num_hidden_layers": 2\n')
    case("cfg-not-object", cj, "[4, 2]\n")
    case("cfg-empty", cj, "")
    # JSON strictness (engine/core/json.c): one value per file; a key given twice: the last wins
    case("cfg-trailing-data", cj, config_text() + config_text(lambda c: c.update(hidden_act="relu")))
    act = '"hidden_act": "gelu",'
    case("cfg-duplicate-last-wins", cj, config_text().replace(act, act + ' "hidden_act": "swish",'))
    case("cfg-duplicate-first-ignored", cj, config_text().replace(act, '"hidden_act": "swish", ' + act))
    # a NUL inside a key or value would end the C string there: refused, naming the key
    case("cfg-nul-in-key", cj, config_text().replace(act, act + ' "hidden_act\\u0000x": "swish",'))
    case("cfg-nul-in-value", cj, config_text().replace(act, '"hidden_act": "gelu\\u0000evil",'))
    case("cfg-nul-in-model-type", cj, config_text().replace('"model_type": "bert"', '"model_type": "bert\\u0000evil"'))
    case("st-metadata-not-flat", ms, safetensors(tensors(), lambda h: h.update(
        {"__metadata__": {"format": "pt", "numbers": [0] * 1000}})))
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
    case("tokcfg-trailing-data", "tokenizer_config.json", '{"do_lower_case": true}\n{"do_lower_case": false}\n')
    case("tokcfg-duplicate-last-wins", "tokenizer_config.json", '{"do_lower_case": true, "do_lower_case": "yes"}\n')
    # ---- corpora (stats --corpus): a NUL byte is a bad line; a long line is cut at a character
    # boundary (65536 is not a multiple of 3: a cut inside a character would be invalid UTF-8)
    case("corpus-nul-byte", "corpus.txt", b"the cat sat\nthe\x00 dog\nthe mat\n")
    case("corpus-long-line", "corpus.txt", "the cat\n" + "\u732b" * 30000 + "\n")
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
    index_case("index-trailing-data", raw=json.dumps(index, indent=2) + "\n}\n")
    index_case("index-duplicate-last-wins",
               raw='{"weight_map": {}, ' + json.dumps(index, indent=2)[1:] + "\n")
    index_case("index-weight-map-empty", lambda i: i.update(weight_map={}))
    index_case("index-path-traversal", lambda i: i["weight_map"].update({emb: "../../etc/passwd"}))
    index_case("index-absolute-path", lambda i: i["weight_map"].update({emb: "/etc/passwd"}))
    index_case("index-shard-missing",
               lambda i: i["weight_map"].update({emb: "model-00003-of-00003.safetensors"}))
    index_case("index-not-a-string", lambda i: i["weight_map"].update({emb: 1}))
    index_case("index-wrong-shard", lambda i: i["weight_map"].update({emb: names[1]}))
    case("index-shard-truncated", names[1], safetensors(parts[1])[:20])
    # the same index for pytorch_model.bin shards: the catalogue makes the first a FIFO
    bin_name = {n: n.replace("model-", "pytorch_model-").replace(".safetensors", ".bin")
                for n in names}
    bin_index = {"metadata": index["metadata"],
                 "weight_map": {k: bin_name[v] for k, v in weight_map.items()}}
    case("pt-index-shard-fifo", "pytorch_model.bin.index.json",
         json.dumps(bin_index, indent=2) + "\n")
    # ---- pytorch_model.bin (the base folder without model.safetensors): hand-made
    # pickles and archives, each refused by name
    pb = "pytorch_model.bin"
    case("pt-good-zip", pb, torch_bin_zip())
    case("pt-good-legacy", pb, torch_bin_legacy())

    # what torch 2.x adds: byteorder and .data/ entries, _rebuild_tensor_v2's 7th argument
    def with_metadata(i, name):
        if i != 0:
            return None
        t = pk_tensor(str(i), len(tensors()[i][2]), tensors()[i][1])
        return t[:-2] + b"}" + t[-2:]          # ... hooks, {} metadata) R
    torch2 = [("byteorder", b"little"), (".data/serialization_id", b"1234567890"),
              (".format_version", b"1")]
    case("pt-good-torch2", pb, torch_bin_zip(edit=with_metadata, extra=torch2))
    case("pt-byteorder-big", pb, torch_bin_zip(extra=[("byteorder", b"big")]))

    def evil(call):   # a pickle whose state_dict is what calling call returns
        return b"\x80\x02" + call + b"."
    case("pt-global-os-system", pb, torch_bin_zip(pickle_bytes=evil(
        b"cos\nsystem\n(" + pk_str("touch /tmp/attnscope-pwned") + b"tR")))
    case("pt-global-builtins-eval", pb, torch_bin_zip(pickle_bytes=evil(
        b"cbuiltins\neval\n(" + pk_str("__import__('os').system('true')") + b"tR")))
    case("pt-global-subprocess", pb, torch_bin_zip(pickle_bytes=evil(
        b"csubprocess\nPopen\n(" + pk_str("true") + b"tR")))
    case("pt-stack-global-posix", pb, torch_bin_zip(pickle_bytes=b"\x80\x04" + b"\x8c\x05posix" +
         b"\x8c\x06system\x93(" + pk_str("true") + b"tR."))
    # a global hidden inside a tensor, after good ones (refused before anything runs)
    case("pt-global-in-tensor", pb, torch_bin_zip(edit=lambda i, n: (
        b"ctorch\nload\n(" + pk_str("x") + b"tR") if i == 3 else None))
    case("pt-reduce-storage-type", pb, torch_bin_zip(pickle_bytes=evil(
        b"ctorch\nFloatStorage\n)R")))
    case("pt-reduce-not-callable", pb, torch_bin_zip(pickle_bytes=evil(pk_str("os.system") + b")R")))
    case("pt-opcode-newobj", pb, torch_bin_zip(pickle_bytes=evil(ODICT + b")\x81")))
    case("pt-opcode-inst", pb, torch_bin_zip(pickle_bytes=b"(ios\nsystem\n" + pk_str("true") + b"."))
    case("pt-nesting-bomb", pb, torch_bin_zip(pickle_bytes=evil(b")" + b"\x85" * 100000)))
    case("pt-list-nesting-bomb", pb, torch_bin_zip(pickle_bytes=evil(b"]" * 200 + b"a" * 199)))
    case("pt-mark-bomb", pb, torch_bin_zip(pickle_bytes=b"\x80\x02" + b"(" * 100000 + b"N."))
    case("pt-memo-huge", pb, torch_bin_zip(pickle_bytes=evil(b"}r\xff\xff\xff\x7f")))
    case("pt-memo-unset", pb, torch_bin_zip(pickle_bytes=evil(b"}q\x00j\x10\x27\x00\x00")))
    case("pt-string-huge", pb, torch_bin_zip(pickle_bytes=evil(b"X\xff\xff\xff\x7f")))
    case("pt-persid-not-storage", pb, torch_bin_zip(pickle_bytes=evil(pk_str("/etc/passwd") + b"Q")))
    emb = ("embeddings.word_embeddings.weight", str(0), V * D, [V, D])

    def tensor_edit(index, **kw):
        def edit(i, name):
            if i != index:
                return None
            a = dict(key=str(i), numel=len(tensors()[i][2]), shape=tensors()[i][1])
            a.update(kw)
            return pk_tensor(**a)
        return edit
    case("pt-storage-past-entry", pb, torch_bin_zip(edit=tensor_edit(0, numel=V * D + 1)))
    case("pt-tensor-past-storage", pb, torch_bin_zip(edit=tensor_edit(0, offset=1)))
    case("pt-stride-past-storage", pb, torch_bin_zip(edit=tensor_edit(0, stride=[D + 1, 1])))
    case("pt-size-negative", pb, torch_bin_zip(edit=tensor_edit(0, shape=[-V, D], stride=[D, 1])))
    case("pt-stride-negative", pb, torch_bin_zip(edit=tensor_edit(0, stride=[-D, 1])))
    case("pt-size-overflow", pb, torch_bin_zip(edit=tensor_edit(
        0, shape=[2 ** 62, 2 ** 62], stride=[1, 1])))
    case("pt-storage-missing", pb, torch_bin_zip(edit=tensor_edit(0, key="99")))
    case("pt-storage-type-mismatch", pb, torch_bin_zip(edit=tensor_edit(1, key="0")))
    assert emb[0] == tensors()[0][0]
    good_zip = torch_bin_zip()
    case("pt-zip-truncated", pb, good_zip[:len(good_zip) // 2])
    case("pt-zip-compressed", pb, torch_bin_zip(method=zipfile.ZIP_DEFLATED))
    # data/0's sizes in the central directory made larger than the file
    cd = good_zip.find(b"PK\x01\x02")
    while good_zip[cd + 46:cd + 46 + 14] != b"archive/data/0" or \
            good_zip[cd + 28:cd + 30] != struct.pack("<H", 14):
        cd = good_zip.find(b"PK\x01\x02", cd + 4)
    big = bytearray(good_zip)
    struct.pack_into("<II", big, cd + 20, 1 << 30, 1 << 30)
    case("pt-zip-entry-past-eof", pb, bytes(big))
    good_legacy = torch_bin_legacy()
    case("pt-legacy-truncated", pb, good_legacy[:len(good_legacy) - 100])
    case("pt-legacy-sysinfo-global", pb, torch_bin_legacy(
        sys_info=b"\x80\x02cposix\nsystem\n(" + pk_str("true") + b"tR."))
    case("pt-legacy-magic", pb, b"\x80\x02" + pk_int(7) + b"." + good_legacy[len(LEGACY_MAGIC):])
    case("pt-not-a-checkpoint", pb, b"hello, this is text\n")
    # broadcast (stride-0) tensors: a 4-byte storage declared as 2^62 bytes nobody reads costs
    # nothing; the word embeddings as one row expanded over the vocabulary are copied when
    # bound; a model whose every tensor is one float expanded to its shape (16 TiB of word
    # embeddings) is refused by the memory budget, naming the tensor
    case("pt-broadcast-unused", pb, torch_bin_views(
        added=[("junk.expanded", [2 ** 30, 2 ** 30], [0, 0], [1.5])]))
    case("pt-broadcast-used", pb, torch_bin_views(
        views={emb[0]: (tensors()[0][2][:D], [0, 1])}))
    huge = dict(CONFIG, vocab_size=2 ** 26, hidden_size=65536, num_attention_heads=2,
                num_hidden_layers=1, intermediate_size=8)
    case("pt-broadcast-over-budget", "config.json", json.dumps(huge, indent=2) + "\n")

    big_d = 65536
    shapes = {"embeddings.word_embeddings.weight": [2 ** 26, big_d],
              "embeddings.position_embeddings.weight": [P, big_d],
              "embeddings.token_type_embeddings.weight": [T, big_d]}
    big_entries = []
    for name, shape, _ in tensors():
        if "layer.1." in name:
            continue
        shape = shapes.get(name, [big_d if x == D else x for x in shape])
        big_entries.append((name, shape, [0.5]))
    case("pt-broadcast-over-budget", pb, torch_bin_views(
        views={n: ([0.5], [0] * len(sh)) for n, sh, _ in big_entries}, entries=big_entries))

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
    toy_case("toy-trailing-data", raw=json.dumps(toy) + "\n" + json.dumps(toy) + "\n")
    toy_case("toy-duplicate-last-wins", raw='{"heads": 0, ' + json.dumps(toy)[1:] + "\n")
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
