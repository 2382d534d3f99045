#!/usr/bin/python3
"""Checks that the trainer's tokenizer (wordpiece.py) gives the same ids as the project's
independent port of Hugging Face's BertTokenizer (tests/tokenizer/hf_bert_port.py, which the
C tokenizer is tested against), with the demo vocabulary, on every corpus sentence, on
consecutive-sentence pairs and on random strings.  Needs only the standard library.

    python3 data/models/demo/train/check_tokenizer.py [VOCAB] [N_RANDOM]
"""

import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", "..", "..", ".."))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(REPO, "tests", "tokenizer"))

import corpus  # noqa: E402
import hf_bert_port  # noqa: E402
import wordpiece  # noqa: E402


def random_text(rng, pool):
    return "".join(rng.choice(pool) for _ in range(rng.randint(0, 40)))


def main():
    vocab_path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", "vocab.txt")
    n_random = int(sys.argv[2]) if len(sys.argv) > 2 else 20000
    mine = wordpiece.BertTokenizer.from_file(vocab_path)
    port = hf_bert_port.BertTokenizerPort(vocab_path, do_lower_case=True)
    c = corpus.load_corpus()
    cases = []
    for lang in ("en", "zh"):
        for d in c[lang]:
            cases.extend((s, None) for s in d)
            cases.extend((a, b) for a, b in zip(d, d[1:]))
    rng = random.Random(7)
    pool = (list("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
            + list("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~") + [" "] * 10 + ["\t", "\n", "\r"]
            + list("éèêëÀÅçñÑöÖßøæœİıſﬁ") + ["e\u0301", "\u0300", "\u200b", "\u00a0", "\x00",
                                                "\x07", "\ufffd", "\u3000"]
            + list("我爱你的一是了人在有中国，。、；：？！“”（）《》…—")
            + ["[MASK]", "[SEP]", "[CLS]", "[UNK]", "[PAD]", "[mask]", "😀", "한국어", "ｆｕｌｌ"])
    words = [w for w in mine.vocab if not w.startswith("##") and w not in wordpiece.SPECIALS]
    for _ in range(n_random):
        if rng.random() < 0.5:
            t = random_text(rng, pool)
        else:
            t = " ".join(rng.choice(words) if rng.random() < 0.8 else random_text(rng, pool)
                         for _ in range(rng.randint(1, 12)))
        cases.append((t, random_text(rng, pool) if rng.random() < 0.3 else None))
    bad = 0
    for a, b in cases:
        got = mine.encode(a, b)
        want = port.encode(a, b)[:2]
        if tuple(got) != tuple(want):
            bad += 1
            if bad <= 10:
                print(f"MISMATCH {a!r} / {b!r}:\n  trainer {mine.tokens(got[0])}\n"
                      f"  port    {mine.tokens(want[0])}")
    print(f"check_tokenizer: {len(cases)} cases, {bad} mismatches")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
