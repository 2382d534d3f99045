#!/usr/bin/env python3
"""Randomised comparison of the C tokenizer (through tok-driver) with hf_bert_port.py,
the Python port of Hugging Face's BertTokenizer: tokens, ids, type ids, byte spans and
truncation for thousands of random strings built from the characters that matter
(accents, combining marks, CJK, Hangul, punctuation, controls, zero-width, emoji,
special tokens).  Exit 77 (skipped) when Python's Unicode data is newer than the C
tables', since new characters would then differ legitimately.

Usage: diff_random.py DRIVER DIR [N] [SEED]
"""
import json
import os
import random
import subprocess
import sys
import unicodedata

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import hf_bert_port as hb  # noqa: E402


def version_tuple(v):
    return tuple(int(x) for x in v.split("."))


def char_pool(rng):
    fixed = (
        list("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
        + list("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~") + [" "] * 12 + ["\t", "\n", "\r"]
        + ["[MASK]", "[CLS]", "[SEP]", "[PAD]", "[UNK]", "[mask]", "##", "[MA", "SK]"]
        + ["ing", "the", "un", "aff", "able", "hello", "caf"]
    )
    ranges = [
        (0x00A0, 0x024F), (0x0300, 0x036F), (0x0370, 0x03FF), (0x0400, 0x04FF), (0x0590, 0x06FF),
        (0x0900, 0x097F), (0x0E00, 0x0E7F), (0x1100, 0x11FF), (0x1D00, 0x1FFF), (0x2000, 0x206F),
        (0x20A0, 0x214F), (0x2190, 0x23FF), (0x2E80, 0x2FFF), (0x3000, 0x30FF), (0x3400, 0x3410),
        (0x4DB0, 0x4E10), (0x9FE0, 0xA010), (0xAC00, 0xD7A3), (0xE000, 0xE010), (0xF8F0, 0xFB4F),
        (0xFE00, 0xFE6F), (0xFF00, 0xFFEF), (0xFFF0, 0xFFFD), (0x1D160, 0x1D1AF), (0x1F300, 0x1FAFF),
        (0x20000, 0x20010), (0x2A6D0, 0x2A710), (0x2B730, 0x2B830), (0x2CEA0, 0x2CEB5),
        (0x2F800, 0x2FA1F), (0xE0000, 0xE007F),
    ]
    return fixed, ranges


def random_text(rng, fixed, ranges, max_parts=30):
    out = []
    for _ in range(rng.randrange(max_parts)):
        r = rng.random()
        if r < 0.45:
            out.append(rng.choice(fixed))
        elif r < 0.9:
            lo, hi = rng.choice(ranges)
            ch = chr(rng.randint(lo, hi))
            if unicodedata.category(ch) == "Cn" and ch not in "\u0378\uffff":
                continue  # unassigned in Python's data: may be assigned in the C tables
            out.append(ch)
        else:
            c = rng.randrange(1, 0x30000)
            if 0xD800 <= c <= 0xDFFF or unicodedata.category(chr(c)) == "Cn":
                continue
            out.append(chr(c))
    return "".join(out)


def main():
    driver, vocab_dir = sys.argv[1], sys.argv[2]
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 2000
    seed = int(sys.argv[4]) if len(sys.argv) > 4 else 12345
    rng = random.Random(seed)
    fixed, ranges = char_pool(rng)
    configs = [
        ("bert-base-uncased-vocab.txt", True, None, True),
        ("small-cased-vocab.txt", False, None, True),
        ("bert-base-uncased-vocab.txt", True, False, False),
        ("small-cased-vocab.txt", False, True, True),
    ]
    failures = 0
    total = 0
    for vocab, lower, strip, chinese in configs:
        path = os.path.join(vocab_dir, vocab)
        port = hb.BertTokenizerPort(path, do_lower_case=lower, tokenize_chinese_chars=chinese,
                                    strip_accents=strip)
        strip_arg = {None: -1, False: 0, True: 1}[strip]
        proc = subprocess.Popen([driver, path, str(int(lower)), str(strip_arg), str(int(chinese))],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, encoding="utf-8")
        hello = json.loads(proc.stdout.readline())
        if version_tuple(unicodedata.unidata_version) > version_tuple(hello["unicode"]):
            print("skip: Python's Unicode %s is newer than the C tables' %s"
                  % (unicodedata.unidata_version, hello["unicode"]))
            proc.kill()
            sys.exit(77)
        for i in range(n // len(configs)):
            text = random_text(rng, fixed, ranges)
            pair = random_text(rng, fixed, ranges, 10) if rng.random() < 0.3 else None
            max_len = rng.choice([0, 0, 0, 3, 4, 5, 8, 16])
            req = {"text": text, "max_len": max_len}
            if pair is not None:
                req["pair"] = pair
            proc.stdin.write(json.dumps(req) + "\n")
            proc.stdin.flush()
            got = json.loads(proc.stdout.readline())
            want = hb.encode(port, text, pair, max_len)
            total += 1
            if got != want:
                failures += 1
                if failures <= 5:
                    print("MISMATCH (%s lower=%s strip=%s chinese=%s)" % (vocab, lower, strip, chinese))
                    print("  text:", ascii(text), "pair:", ascii(pair), "max_len:", max_len)
                    for k in want:
                        if got.get(k) != want[k]:
                            print("  %s: got  %s" % (k, got.get(k)))
                            print("  %s: want %s" % (k, want[k]))
        proc.stdin.close()
        proc.wait()
    print("%d of %d random texts agree with the Python port (Unicode %s)"
          % (total - failures, total, unicodedata.unidata_version))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
