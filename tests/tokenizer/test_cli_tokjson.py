#!/usr/bin/env python3
"""End-to-end test of `attnscope tokenize` on tokenizer.json folders:

  - a folder with only tokenizer files (tokenizer.json, tokenizer_config.json,
    special_tokens_map.json; no config.json or weights) tokenizes exactly as the
    committed Hugging Face fixtures say (ids, byte spans, type ids, word ids), with
    surfaces, roles and continuation flags in --json, and model_max_length truncating;
  - a full BERT model folder that also has tokenizer.json uses it (same ids as its
    vocab.txt gives for plain text), and one with only vocab.txt tokenizes as before;
  - bad tokenizer.json files exit 2 naming the file, the JSON path and what is wrong.

Usage: test_cli_tokjson.py ATTNSCOPE_EXE TESTS_TOKENIZER_DIR
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_cli_tokenize import write_model  # noqa: E402

failures = 0


def check(cond, what):
    global failures
    if not cond:
        failures += 1
        print("FAIL:", what)


def run(exe, *args):
    env = dict(os.environ, LC_ALL="C.UTF-8")
    r = subprocess.run([exe, "tokenize"] + list(args), capture_output=True, env=env)
    return r.returncode, r.stdout.decode("utf-8", "replace"), r.stderr.decode("utf-8", "replace")


def tokens_of(exe, folder, text, pair=None):
    args = ["--model", folder, "--text", text, "--json"]
    if pair is not None:
        args += ["--text-pair", pair]
    rc, out, err = run(exe, *args)
    if rc != 0:
        return None, err
    return json.loads(out)["tokens"], err


def main():
    exe, here = sys.argv[1], sys.argv[2]
    jdir = os.path.join(here, "json")
    tmp = tempfile.mkdtemp(prefix="atn-cli-tokjson-")
    try:
        # 1. tokenizer files only
        for name in ("bert-uncased", "wl-roberta", "wl-metaspace"):
            folder = os.path.join(tmp, name)
            os.makedirs(folder)
            shutil.copy(os.path.join(jdir, name + ".tokenizer.json"), os.path.join(folder, "tokenizer.json"))
            with open(os.path.join(jdir, name + ".cases.json"), encoding="utf-8") as f:
                cases = json.load(f)
            for c in cases[:40:3] + [c for c in cases[:100] if c["pair"] is not None][:3]:
                if "\x00" in c["text"] or c["text"].startswith("-"):
                    continue
                toks, err = tokens_of(exe, folder, c["text"], c["pair"])
                check(toks is not None, "%s: %r runs (%s)" % (name, c["text"], err))
                if toks is None:
                    continue
                check([t["id"] for t in toks] == c["ids"], "%s: ids of %r" % (name, c["text"]))
                spans = [[t["start"], t["end"]] if t["segment"] >= 0 else [0, 0] for t in toks]
                check(spans == c["offsets"], "%s: spans of %r: %s vs %s" % (name, c["text"], spans, c["offsets"]))
                check([t["type_id"] for t in toks] == c["type_ids"], "%s: type ids of %r" % (name, c["text"]))
                check([t["word"] for t in toks] == c["words"], "%s: words of %r" % (name, c["text"]))
        # surfaces, roles, continuation on the BERT one
        folder = os.path.join(tmp, "bert-uncased")
        toks, err = tokens_of(exe, folder, "Unaffable [MASK] ok")
        check(toks is not None, "bert-uncased runs: " + err)
        if toks:
            check([t["token"] for t in toks] == ["[CLS]", "una", "##ffa", "##ble", "[MASK]", "ok", "[SEP]"],
                  "bert-uncased tokens: %s" % [t["token"] for t in toks])
            check([t["surface"] for t in toks][1:4] == ["una", "ffa", "ble"], "## surfaces")
            check([t["continuation"] for t in toks][1:4] == [False, True, True], "continuation flags")
            check([t["role"] for t in toks] == ["cls", "word", "word", "word", "mask", "word", "sep"],
                  "roles: %s" % [t["role"] for t in toks])
            check(toks[4]["special"] and (toks[4]["start"], toks[4]["end"]) == (10, 16), "[MASK] typed in the text")
        toks, _ = tokens_of(exe, os.path.join(tmp, "wl-roberta"), "Hello world")
        if toks:
            check([t["surface"] for t in toks] == ["<s>", "Hello", " world", "</s>"],
                  "byte-level surfaces: %s" % [t["surface"] for t in toks])
            check([t["role"] for t in toks][0] == "cls" and toks[-1]["role"] == "sep", "RoBERTa roles")
        # model_max_length and special_tokens_map.json
        with open(os.path.join(folder, "tokenizer_config.json"), "w") as f:
            json.dump({"model_max_length": 6, "mask_token": "[MASK]"}, f)
        with open(os.path.join(folder, "special_tokens_map.json"), "w") as f:
            json.dump({"cls_token": {"content": "[CLS]"}, "sep_token": "[SEP]", "unk_token": "[UNK]"}, f)
        rc, out, err = run(exe, "--model", folder, "--text", "one two three four five six", "--json")
        check(rc == 0 and json.loads(out)["n"] == 6 and json.loads(out)["truncated"], "model_max_length truncates")
        check("truncated to 6 tokens" in err, "truncation notice: " + err)
        with open(os.path.join(folder, "special_tokens_map.json"), "w") as f:
            json.dump({"cls_token": 5}, f)
        rc, out, err = run(exe, "--model", folder, "--text", "x")
        check(rc == 2 and "special_tokens_map.json" in err and "cls_token" in err, "bad special_tokens_map: " + err)

        # 2. a full model folder: tokenizer.json is used; vocab.txt alone as before
        vocab = os.path.join(here, "bert-base-uncased-vocab.txt")
        full = os.path.join(tmp, "full")
        write_model(full, vocab)
        plain = "Hello, world! Tokenizers are fun."
        before, err = tokens_of(exe, full, plain)
        check(before is not None, "vocab.txt model runs: " + err)
        shutil.copy(os.path.join(jdir, "bert-uncased.tokenizer.json"), os.path.join(full, "tokenizer.json"))
        after, err = tokens_of(exe, full, plain)
        check(after is not None, "tokenizer.json model runs: " + err)
        if before and after:
            check([t["id"] for t in before] == [t["id"] for t in after], "same ids both ways")
            check([(t["start"], t["end"]) for t in before] == [(t["start"], t["end"]) for t in after], "same spans")
            # the WordPiece of vocab.txt does not say words; the tokenizer.json pipeline does
            check(all(t["word"] == -1 for t in before), "vocab.txt: no word ids")
            check([t["word"] for t in after][:4] == [-1, 0, 1, 2], "tokenizer.json used: word ids %s"
                  % [t["word"] for t in after])
        # its tokenizer.json broken: the model folder fails with the tokenizer's message
        with open(os.path.join(full, "tokenizer.json"), "w") as f:
            f.write('{"model": {"type": "WordPiece", "vocab": {"a": "zero"}}}')
        rc, out, err = run(exe, "--model", full, "--text", "x")
        check(rc == 2 and "tokenizer.json" in err and 'model.vocab["a"]' in err, "broken tokenizer.json in a model: " + err)

        # 3. bad tokenizer.json files exit 2 with file, path, what
        bad = os.path.join(tmp, "bad")
        os.makedirs(bad)
        base = json.load(open(os.path.join(jdir, "wl-split.tokenizer.json"), encoding="utf-8"))

        def variant(mutate, want):
            j = json.loads(json.dumps(base))
            text = mutate(j)
            with open(os.path.join(bad, "tokenizer.json"), "w", encoding="utf-8") as f:
                f.write(text if isinstance(text, str) else json.dumps(j))
            rc, out, err = run(exe, "--model", bad, "--text", "hello")
            check(rc == 2 and os.path.join(bad, "tokenizer.json") in err and all(w in err for w in want),
                  "bad file %s: rc %d: %s" % (want, rc, err))

        variant(lambda j: "not json", ["invalid JSON"])
        variant(lambda j: j["pre_tokenizer"]["pretokenizers"][1].__setitem__("pattern", {"Regex": "[unclosed"}),
                ["pre_tokenizer.pretokenizers[1].pattern.Regex", "does not compile"])
        variant(lambda j: j["pre_tokenizer"]["pretokenizers"][0].__setitem__("type", "Splitter"),
                ["pre_tokenizer.pretokenizers[0].type", 'unknown pre-tokenizer "Splitter"'])
        variant(lambda j: j["pre_tokenizer"]["pretokenizers"][2].__setitem__("invert", "yes"),
                ["pre_tokenizer.pretokenizers[2].invert", "true or false"])
        variant(lambda j: j["normalizer"].__setitem__("type", "NFX"), ["normalizer.type", 'unknown normalizer "NFX"'])
        variant(lambda j: j.__setitem__("post_processor", {"type": "BertProcessing", "cls": ["[CLS]", 1], "sep": "x"}),
                ["post_processor.sep", '["token", id]'])
        variant(lambda j: j["added_tokens"][0].__setitem__("lstrip", 1), ["added_tokens[0].lstrip"])
        variant(lambda j: j["model"].__setitem__("type", "Fancy"), ['model.type: unknown model "Fancy"'])
        empty = os.path.join(tmp, "empty")
        os.makedirs(empty)
        rc, out, err = run(exe, "--model", empty, "--text", "x")
        check(rc == 2 and "no tokenizer files" in err, "empty folder: " + err)
    finally:
        shutil.rmtree(tmp)
    print("tokenizer.json CLI: %d failures" % failures)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
