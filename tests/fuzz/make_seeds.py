#!/usr/bin/env python3
"""Writes the fuzz targets' seed corpora, tests/fuzz/corpus/<target>/, from the bad-file
catalogue (tests/bad/), the repository's good models and a few hand-made inputs.  Seeds
are small on purpose (libFuzzer grows the corpus itself; -max_len follows the seeds).
Plain python3.  Run after tests/bad/make_catalogue.py:  python3 tests/fuzz/make_seeds.py

Seeds are written over the ones there; nothing is deleted (a seed whose source went away,
or one added by hand or kept from a fuzz run, stays).  The seeds found in corpus/<target>/
that this run did not write are listed; --prune removes them.
"""
import json
import os
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
BAD = os.path.join(ROOT, "tests", "bad")
MAX_SEED = 8192


def read(*parts):
    with open(os.path.join(*parts), "rb") as f:
        return f.read()


def main():
    corpus = os.path.join(HERE, "corpus")
    prune = "--prune" in sys.argv[1:]
    seeds = {t: {} for t in ("safetensors", "config", "index", "toy", "vocab", "tokenize", "npy",
                             "torch-bin", "tokcfg", "cli-options")}

    def add(target, name, data):
        if isinstance(data, str):
            data = data.encode()
        # a .bin of even the tiny model is a 12 KB archive
        if len(data) <= (MAX_SEED * 2 if target == "torch-bin" else MAX_SEED):
            seeds[target][name] = data

    cases = os.path.join(BAD, "cases")
    for case in sorted(os.listdir(cases)):
        for fname in os.listdir(os.path.join(cases, case)):
            data = read(cases, case, fname)
            target = {"model.safetensors": "safetensors", "config.json": "config",
                      "model.safetensors.index.json": "index", "toy.json": "toy",
                      "vocab.txt": "vocab", "pytorch_model.bin": "torch-bin"}.get(fname)
            if fname.endswith(".safetensors"):
                target = "safetensors"
            if target:
                add(target, case, data)
    add("safetensors", "base", read(BAD, "base", "model.safetensors"))
    for f in ("model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"):
        add("safetensors", "sharded-" + f[:11], read(BAD, "base-sharded", f))
    # good variants of the tiny model for the loader behind the safetensors target
    sys.dont_write_bytecode = True
    sys.path.insert(0, BAD)
    import make_catalogue as mc

    def variant(dtype=None, rename=None, misalign=False):
        header, data = {}, b""
        for name, shape, values in mc.tensors():
            if dtype == "F16":
                blob = struct.pack("<%de" % len(values), *values)
            elif dtype == "BF16":
                blob = b"".join(struct.pack("<f", v)[2:] for v in values)
            else:
                blob = struct.pack("<%df" % len(values), *values)
            header[rename(name) if rename else name] = {
                "dtype": dtype or "F32", "shape": shape,
                "data_offsets": [len(data), len(data) + len(blob)]}
            data += blob
        text = json.dumps(header, separators=(",", ":")).encode()
        text += b" " * ((8 - len(text) % 8) % 8 + (1 if misalign else 0))
        return struct.pack("<Q", len(text)) + text + data

    add("safetensors", "good-f16", variant("F16"))
    add("safetensors", "good-bf16", variant("BF16"))
    add("safetensors", "good-unaligned-f32", variant(misalign=True))
    add("safetensors", "good-bert-prefix-legacy", variant(rename=lambda n: "bert." + n.replace(
        "LayerNorm.weight", "LayerNorm.gamma").replace("LayerNorm.bias", "LayerNorm.beta")))
    # torch.save's own pickles (tests/hf/gen_torch_bin.py): the unpickler on real input
    import zipfile
    for m in ("bin-zip-f32", "bin-archive-f16"):
        p = os.path.join(ROOT, "tests", "hf", "models", m, "pytorch_model.bin")
        if os.path.exists(p):
            with zipfile.ZipFile(p) as z:
                pkl = [n for n in z.namelist() if n.endswith("/data.pkl")][0]
                add("torch-bin", "torch-" + m + "-data.pkl", z.read(pkl))
    add("config", "base", read(BAD, "base", "config.json"))
    for m in ("f32", "legacy", "odd3-relu", "mlm"):
        p = os.path.join(ROOT, "tests", "hf", "models", m, "config.json")
        if os.path.exists(p):
            add("config", "hf-" + m, read(p))
    add("index", "base", read(BAD, "base-sharded", "model.safetensors.index.json"))
    add("toy", "worked-example", read(ROOT, "data", "models", "worked-example.json"))
    add("toy", "full", json.dumps({
        "name": "full", "tokens": ["a", "b", "c"], "inputs": [[1, 0, 2, 0], [0, 1, 0, 2], [1, 1, 1, 1]],
        "d_model": 4, "heads": 2, "layernorm": True, "ffn": True, "residual": True, "d_ffn": 2,
        "activation": "gelu_tanh", "ln_eps": 1e-5,
        "layers": [{"W_Q": [[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]], "b_Q": [0, 1, 0, 1],
                    "W_1": [[1, 0], [0, 1], [1, 1], [0, 0]], "W_2": [[1, 0, 0, 0], [0, 1, 0, 0]],
                    "b_1": [0.5, -0.5], "ln1_gamma": [1, 2, 1, 2], "ln2_beta": [0, 0, 1, 1]},
                   {"W_O": [[0, 1, 0, 0], [1, 0, 0, 0], [0, 0, 0, 1], [0, 0, 1, 0]]}]}))
    add("vocab", "base", read(BAD, "base", "vocab.txt"))
    add("vocab", "small-cased", read(ROOT, "tests", "tokenizer", "small-cased-vocab.txt"))
    add("vocab", "crlf", "[PAD]\r\n[UNK]\r\n[CLS]\r\n[SEP]\r[MASK]\nrun\n##ning\n##s\ncafé\n我\n")
    # tokenize: byte 0 options/vocabulary, byte 1 length limit, then text NUL pair
    texts = ["Hello, World! The cat sat.", "naïve café CAFÉ Ångström", "我爱你 深入解析BERT多头自注意力机制",
             "the [MASK] sat on [UNK] [SEP]x", "unaffable running ##s '' \"quoted\"",
             "tab\there\u200bzero\u00adwidth\x01ctl", "emoji 😀👍🏽 and ＡＢＣ full-width！",
             "한국어 텍스트 デンマーク", "x" * 150, "\xe9\xff broken", ""]
    for i, t in enumerate(texts):
        b = t.encode("utf-8", "surrogateescape") if "\xff" not in t else b"caf\xe9 \xff\xfe broken"
        add("tokenize", "text-%02d" % i, bytes([i * 7 & 0x3F, i & 7]) + b + b"\0" + b"a pair, too")
    add("tokenize", "overlong", bytes([0x20, 4]) + b"\xc0\xaf \xed\xa0\x80 \xf4\x90\x80\x80\0ok")
    # npy: the repository's small fixtures and a few hand-made headers

    def npy(dict_text, payload=b""):
        h = dict_text.encode()
        h += b" " * ((64 - (10 + len(h) + 1) % 64) % 64) + b"\n"
        return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(h)) + h + payload
    add("npy", "scalar", npy("{'descr': '<f4', 'fortran_order': False, 'shape': (), }",
                             struct.pack("<f", 1.5)))
    add("npy", "vector", npy("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }",
                             struct.pack("<3f", 1, 2, 3)))
    add("npy", "matrix", npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }",
                             struct.pack("<4f", 1, 2, 3, 4)))
    add("npy", "huge-shape", npy("{'descr': '<f4', 'fortran_order': False, "
                                 "'shape': (4611686018427387904, 4), }"))
    add("npy", "f8", npy("{'descr': '<f8', 'fortran_order': False, 'shape': (1,), }", b"\0" * 8))
    fx = os.path.join(ROOT, "tests", "hf", "fixtures")
    if os.path.isdir(fx):
        for f in sorted(f for f in os.listdir(fx) if not f.startswith("bin-"))[:6]:
            if f.endswith(".npy"):
                add("npy", "hf-" + f[:-4], read(fx, f))

    # tokcfg: byte 0 = the folder (0 model, 1 vocab.txt, 2 tokenizer.json, 3 vocab.json +
    # merges.txt) + 4 when the rest is special_tokens_map.json
    tok_cfgs = {
        "lower": '{"do_lower_case": true, "model_max_length": 512}',
        "cased": '{"do_lower_case": false, "strip_accents": null, "tokenize_chinese_chars": true}',
        "specials": '{"cls_token": "[CLS]", "sep_token": {"content": "[SEP]", "lstrip": false}, '
                    '"mask_token": "[MASK]", "pad_token": "[PAD]", "unk_token": "[UNK]"}',
        "roberta": '{"tokenizer_class": "RobertaTokenizer", "add_prefix_space": true, '
                   '"bos_token": "<s>", "eos_token": "</s>", "mask_token": "<mask>", "model_max_length": 8}',
        "gpt2": '{"tokenizer_class": "GPT2Tokenizer", "bos_token": "<|endoftext|>", '
                '"eos_token": {"content": "<|endoftext|>", "__type": "AddedToken"}, "model_max_length": 1e30}',
        "empty": "{}",
    }
    for i, (name, text) in enumerate(sorted(tok_cfgs.items())):
        for kind in range(4):
            add("tokcfg", "%s-%d" % (name, kind), bytes([kind + (4 if i % 3 == 2 else 0)]) + text.encode())
    for case in sorted(os.listdir(cases)):
        f = os.path.join(cases, case, "tokenizer_config.json")
        if os.path.isfile(f):
            add("tokcfg", case, b"\0" + read(f))
    mlm = os.path.join(ROOT, "tests", "hf", "models", "mlm", "tokenizer_config.json")
    if os.path.isfile(mlm):
        add("tokcfg", "hf-mlm", b"\1" + read(mlm))
    # cli-options: byte 0 = flag list (0-3) + 4 x model shape (0-3), then NUL-separated argv
    argvs = [
        ["--layer", "3", "--head", "-1", "--query=7", "-o", "x.npy", "--json"],
        ["--layer", "-9223372036854775808", "--top", "0", "--threads", "4294967297"],
        ["--width", "nan", "--scale", "inf", "--threshold", "0.5", "--seed", "0x10"],
        ["--ids", "1,2,3", "--type-ids", "0,0,1", "--mask", "1,1,0", "--device", "auto"],
        ["--ids", "1,,2", "--mask", "", "--precision", "bf16", "--device", "tpu"],
        ["--heads-off", "3:5,7:1", "--head-mode", "uniform", "--causal", "--alibi"],
        ["--keep-heads", "0:0", "--window", "2", "--global-tokens", "0,4", "--hide-tokens", "1"],
        ["--heads-off", "99:0", "--keep-heads", "0:0", "--strided", "0", "--temperature", "0"],
        ["--shuffle-seed", "7", "--no-positions", "--temperature", "1e-40", "stray", "-"],
        ["--model", "demo", "--text", "the cat", "--text-pair", "a dog", "--all-heads", "--"],
        ["--=x", "-", "--layer"],
    ]
    for i, a in enumerate(argvs):
        add("cli-options", "argv-%02d" % i, bytes([i % 16]) + b"\0".join(x.encode() for x in a))

    n = 0
    for target, items in seeds.items():
        d = os.path.join(corpus, target)
        os.makedirs(d, exist_ok=True)
        for name, data in items.items():
            with open(os.path.join(d, name), "wb") as f:
                f.write(data)
            n += 1
        stale = sorted(set(os.listdir(d)) - set(items))
        if stale:
            print("%s: %d seed(s) not written by this run%s: %s" % (
                d, len(stale), " (removed)" if prune else " (kept; --prune removes them)",
                " ".join(stale)))
            if prune:
                for x in stale:
                    os.remove(os.path.join(d, x))
    print("%d seeds in %s" % (n, corpus))
    # the subword models' seeds
    sys.path.insert(0, HERE)
    import make_tok_seeds
    make_tok_seeds.main(prune)


if __name__ == "__main__":
    main()
