#!/usr/bin/env python3
"""Writes the seed corpora of the subword-model fuzz targets, tests/fuzz/corpus/tok-bpe,
tok-unigram and tok-charsmap, from hand-made models and slices of the committed tokenizer
files in tests/tokenizer/models (gen_fixtures.js).  Seeds stay under 8 KB; the real
nmt_nfkc charsmap (too big for a seed) goes to regress/tok-charsmap so that `make test`
normalizes through it under the sanitizers.  Plain python3:  python3 tests/fuzz/make_tok_seeds.py
"""
import base64
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
MODELS = os.path.join(ROOT, "tests", "tokenizer", "models")
MAX_SEED = 8192


def model(name):
    with open(os.path.join(MODELS, name), encoding="utf-8") as f:
        return json.load(f)


def small_bpe(m, keep):
    """The first `keep` merges of a BPE model and only the pieces they and the alphabet need."""
    merges = m["merges"][:keep]
    pairs = [x.split(" ") if isinstance(x, str) else x for x in merges]
    need = set()
    for a, b in pairs:
        need.update([a, b])
    prefix = m.get("continuing_subword_prefix") or ""
    for a, b in pairs:
        need.add(a + b[len(prefix):])
    for special in (m.get("unk_token"), "<0x41>", "<0xC3>", "<0xA9>"):
        if special:
            need.add(special)
    vocab = {k: v for k, v in m["vocab"].items() if k in need}
    out = dict(m)
    out["vocab"] = vocab
    out["merges"] = merges
    return out


def main(prune=None):
    if prune is None:
        prune = "--prune" in sys.argv[1:]
    seeds = {"tok-bpe": {}, "tok-unigram": {}, "tok-charsmap": {}}

    def add(target, name, data):
        if isinstance(data, str):
            data = data.encode()
        if len(data) > MAX_SEED:
            raise SystemExit("%s/%s: %d bytes, more than a seed" % (target, name, len(data)))
        seeds[target][name] = data

    j = lambda o: json.dumps(o, ensure_ascii=False, separators=(",", ":"))
    # BPE: byte 0 = 0 then a model object, byte 0 = 1 then vocab.json NUL merges.txt
    add("tok-bpe", "rust-unit", b"\0" + j({"type": "BPE", "vocab": {"u": 0, "n": 1, "r": 2, "e": 3, "l": 4,
        "a": 5, "t": 6, "d": 7, "re": 8, "at": 9, "ed": 10, "un": 11, "ated": 12, "rel": 13, "related": 14,
        "unrelated": 15}, "merges": ["r e", "a t", "e d", "u n", "at ed", "re l", "rel ated", "un related"]}).encode())
    add("tok-bpe", "pairs-unk-fuse", b"\0" + j({"type": "BPE", "unk_token": "<unk>", "fuse_unk": True,
        "vocab": {"<unk>": 0, "a": 1, "b": 2, "ab": 3}, "merges": [["a", "b"]]}).encode())
    add("tok-bpe", "ignore-merges", b"\0" + j({"type": "BPE", "ignore_merges": True, "vocab": {"a": 0, "b": 1,
        "ab": 2, "abab": 3}, "merges": ["a b"]}).encode())
    add("tok-bpe", "bytelevel", b"\0" + j(small_bpe(model("bpe-bytelevel.json")["model"], 60)).encode())
    add("tok-bpe", "affix", b"\0" + j(small_bpe(model("bpe-affix.json")["model"], 40)).encode())
    add("tok-bpe", "plain", b"\0" + j(small_bpe(model("bpe-plain.json")["model"], 80)).encode())
    add("tok-bpe", "files", b"\1" + j({"a": 0, "b": 1, "ab": 2, "\u0120": 3, "\u0120ab": 4}).encode() +
        b"\0#version: 0.2\na b\n\u0120 ab\n".decode().encode())
    add("tok-bpe", "files-bad-merge", b"\1{\"a\":0}\0a b\n")
    # Unigram: a model object
    add("tok-unigram", "rust-unit", j({"type": "Unigram", "unk_id": 0, "vocab": [["<unk>", 0], ["a", -1],
        ["b", -2], ["ab", -3], ["c", -4]]}))
    add("tok-unigram", "bytefallback", j({"type": "Unigram", "unk_id": 0, "byte_fallback": True, "vocab":
        [["<unk>", 0], ["a", -1], ["<0xC3>", 0], ["<0xA9>", 0]]}))
    add("tok-unigram", "no-unk", j({"type": "Unigram", "unk_id": None, "vocab": [["a", -1], ["b", -1]]}))
    u = model("unigram-metaspace.json")["model"]
    add("tok-unigram", "metaspace", j({"type": "Unigram", "unk_id": 0, "byte_fallback": False,
                                       "vocab": u["vocab"][:180]}))
    spm = model("spm-unigram.json")
    add("tok-unigram", "spm", j({"type": "Unigram", "unk_id": spm["model"]["unk_id"],
                                 "vocab": spm["model"]["vocab"][:150]}))
    # charsmap: byte 0 = 0 then the blob, 1 then base64 text
    units = [0] * 256
    units[0] = 1 << 10
    child, nxt = 1 ^ ord("a"), 0x70
    units[child] = ord("a") | (1 << 8) | ((child ^ nxt) << 10)
    units[nxt] = 0
    blob = (1024).to_bytes(4, "little") + b"".join(u.to_bytes(4, "little") for u in units) + b"bc\0"
    add("tok-charsmap", "one-rule", b"\0" + blob)
    add("tok-charsmap", "one-rule-b64", b"\1" + base64.b64encode(blob))
    add("tok-charsmap", "short", b"\0\4\0\0\0")
    add("tok-charsmap", "bad-b64", b"\1AAAA*AAA")

    for target, items in seeds.items():
        d = os.path.join(HERE, "corpus", target)
        os.makedirs(d, exist_ok=True)
        for name, data in items.items():
            with open(os.path.join(d, name), "wb") as f:
                f.write(data)
        stale = sorted(set(os.listdir(d)) - set(items))   # kept unless pruning, as make_seeds.py
        if stale:
            print("%s: %d seed(s) not written by this run%s: %s" % (
                d, len(stale), " (removed)" if prune else " (kept)", " ".join(stale)))
            if prune:
                for x in stale:
                    os.remove(os.path.join(d, x))
    real = base64.b64decode(spm["normalizer"]["normalizers"][0]["precompiled_charsmap"])
    d = os.path.join(HERE, "regress", "tok-charsmap")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "nmt-nfkc-real-blob"), "wb") as f:
        f.write(b"\0" + real)
    print("seeds:", {t: len(v) for t, v in seeds.items()})


if __name__ == "__main__":
    main()
