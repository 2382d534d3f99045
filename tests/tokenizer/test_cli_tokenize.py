#!/usr/bin/env python3
"""End-to-end test of `attnscope tokenize`: builds (in a temporary folder) a one-layer,
4-wide BERT in Hugging Face layout whose vocab.txt is the real bert-base-uncased one,
then checks the table and --json output (ids 101/7592/102 and byte spans), the cased
path through tokenizer_config.json, the truncation notice, and the errors for invalid
UTF-8 and a missing vocab.txt.

Usage: test_cli_tokenize.py ATTNSCOPE_EXE TESTS_TOKENIZER_DIR
"""
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

D, F, P = 4, 8, 16   # width, feed-forward width, max positions

failures = 0


def check(cond, what):
    global failures
    if not cond:
        failures += 1
        print("FAIL:", what)


def write_model(folder, vocab_path, tokenizer_config=None):
    os.makedirs(folder)
    shutil.copy(vocab_path, os.path.join(folder, "vocab.txt"))
    with open(vocab_path, encoding="utf-8") as f:
        V = len(f.read().split("\n")) - 1
    cfg = {"architectures": ["BertModel"], "hidden_act": "gelu", "hidden_size": D,
           "intermediate_size": F, "layer_norm_eps": 1e-12, "max_position_embeddings": P,
           "model_type": "bert", "num_attention_heads": 1, "num_hidden_layers": 1,
           "pad_token_id": 0, "position_embedding_type": "absolute", "type_vocab_size": 2,
           "vocab_size": V}
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(cfg, f)
    if tokenizer_config is not None:
        with open(os.path.join(folder, "tokenizer_config.json"), "w") as f:
            json.dump(tokenizer_config, f)
    shapes = {
        "embeddings.word_embeddings.weight": [V, D],
        "embeddings.position_embeddings.weight": [P, D],
        "embeddings.token_type_embeddings.weight": [2, D],
        "embeddings.LayerNorm.weight": [D], "embeddings.LayerNorm.bias": [D],
    }
    p = "encoder.layer.0."
    for m in ("attention.self.query", "attention.self.key", "attention.self.value",
              "attention.output.dense"):
        shapes[p + m + ".weight"] = [D, D]
        shapes[p + m + ".bias"] = [D]
    shapes[p + "attention.output.LayerNorm.weight"] = [D]
    shapes[p + "attention.output.LayerNorm.bias"] = [D]
    shapes[p + "intermediate.dense.weight"] = [F, D]
    shapes[p + "intermediate.dense.bias"] = [F]
    shapes[p + "output.dense.weight"] = [D, F]
    shapes[p + "output.dense.bias"] = [D]
    shapes[p + "output.LayerNorm.weight"] = [D]
    shapes[p + "output.LayerNorm.bias"] = [D]
    header, blobs, off = {}, [], 0
    for i, (name, shape) in enumerate(shapes.items()):
        n = 1
        for s in shape:
            n *= s
        one = name.endswith("LayerNorm.weight")
        raw = struct.pack("<%df" % n, *[(1.0 if one else 0.01 * ((k + i) % 7 - 3)) for k in range(n)])
        header[name] = {"dtype": "F32", "shape": shape, "data_offsets": [off, off + len(raw)]}
        blobs.append(raw)
        off += len(raw)
    hb = json.dumps(header).encode()
    hb += b" " * ((8 - len(hb) % 8) % 8)
    with open(os.path.join(folder, "model.safetensors"), "wb") as f:
        f.write(struct.pack("<Q", len(hb)) + hb)
        for b in blobs:
            f.write(b)


def run(exe, *args):
    env = dict(os.environ, LC_ALL="C.UTF-8")
    r = subprocess.run([exe, "tokenize"] + list(args), capture_output=True, env=env)
    return r.returncode, r.stdout.decode("utf-8", "replace"), r.stderr.decode("utf-8", "replace")


def main():
    exe, here = sys.argv[1], sys.argv[2]
    vocab = os.path.join(here, "bert-base-uncased-vocab.txt")
    tmp = tempfile.mkdtemp(prefix="atn-cli-tok-")
    try:
        uncased = os.path.join(tmp, "uncased")
        cased = os.path.join(tmp, "cased")
        write_model(uncased, vocab)
        write_model(cased, vocab, {"do_lower_case": False, "model_max_length": P})

        rc, out, err = run(exe, "--model", uncased, "--text", "Hello world", "--json")
        check(rc == 0, "json run exits 0 (%d: %s)" % (rc, err))
        if rc == 0:
            doc = json.loads(out)
            toks = doc["tokens"]
            check([t["token"] for t in toks] == ["[CLS]", "hello", "world", "[SEP]"], "tokens %s" % toks)
            check([t["id"] for t in toks] == [101, 7592, 2088, 102], "ids")
            check([(t["start"], t["end"]) for t in toks] == [(-1, -1), (0, 5), (6, 11), (-1, -1)], "spans")
            check([t["special"] for t in toks] == [True, False, False, True], "special flags")
            check(doc["truncated"] is False and doc["n"] == 4, "n / truncated")

        rc, out, err = run(exe, "--model", uncased, "--text", "the cat sat on the [MASK] .",
                           "--text-pair", "Café 我", "--json")
        check(rc == 0, "pair run exits 0 (%s)" % err)
        if rc == 0:
            toks = json.loads(out)["tokens"]
            check([t["token"] for t in toks] == ["[CLS]", "the", "cat", "sat", "on", "the", "[MASK]", ".",
                                                 "[SEP]", "cafe", "我", "[SEP]"], "pair tokens %s" % toks)
            check([t["type_id"] for t in toks] == [0] * 9 + [1] * 3, "type ids")
            check(toks[6]["id"] == 103 and toks[6]["special"] and (toks[6]["start"], toks[6]["end"]) == (19, 25),
                  "[MASK] kept with its span")
            check((toks[9]["start"], toks[9]["end"], toks[9]["segment"]) == (0, 5, 1), "café span in the pair")
            check((toks[10]["start"], toks[10]["end"]) == (6, 9), "我 span")

        rc, out, err = run(exe, "--model", uncased, "--text", "Hello world")
        check(rc == 0 and "hello" in out and "7592" in out and "0..5" in out and '"Hello"' in out,
              "table output:\n" + out)

        rc, out, err = run(exe, "--model", cased, "--text", "Hello world", "--json")
        check(rc == 0, "cased run (%s)" % err)
        if rc == 0:
            toks = json.loads(out)["tokens"]
            # do_lower_case false: "Hello" is not in the uncased vocabulary
            check([t["token"] for t in toks] == ["[CLS]", "[UNK]", "world", "[SEP]"], "cased tokens %s" % toks)

        long_text = " ".join(["word"] * 40)
        rc, out, err = run(exe, "--model", uncased, "--text", long_text, "--json")
        check(rc == 0, "long text runs")
        if rc == 0:
            doc = json.loads(out)
            check(doc["n"] == P and doc["truncated"] and doc["n_dropped"] == 40 + 2 - P, "truncated to %d" % P)
            check("truncated" in err, "truncation notice on stderr: %r" % err)

        env = dict(os.environ, LC_ALL="C.UTF-8")
        r = subprocess.run([exe.encode(), b"tokenize", b"--model", uncased.encode(), b"--text", b"abc\xff"],
                           capture_output=True, env=env)
        msg = r.stderr.decode("utf-8", "replace")
        check(r.returncode == 2 and "UTF-8" in msg and "byte offset 3" in msg, "invalid UTF-8: %d %r" % (r.returncode, msg))

        os.remove(os.path.join(cased, "vocab.txt"))
        rc, out, err = run(exe, "--model", cased, "--text", "x")
        check(rc != 0 and "vocab.txt" in err, "missing vocab.txt: %d %r" % (rc, err))

        rc, out, err = run(exe, "--model", uncased, "--text-pair", "x")
        check(rc == 2 and "--text" in err, "--text-pair without --text: %r" % err)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("cli tokenize: %d failures" % failures)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
