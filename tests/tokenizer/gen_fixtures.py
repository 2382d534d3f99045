#!/usr/bin/env python3
"""Writes tests/tokenizer/fixtures.json: expected tokens, ids, type ids and byte spans for
the C tokenizer test, produced by hf_bert_port.py (a plain-Python port of Hugging Face's
BertTokenizer).  Run once; the output is committed.  Needs only python3.

    python3 tests/tokenizer/gen_fixtures.py
"""
import json
import os
import sys
import unicodedata

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import hf_bert_port as hb  # noqa: E402

VOCABS = {"uncased": "bert-base-uncased-vocab.txt", "small": "small-cased-vocab.txt"}

LONG_PARAGRAPH = (
    "Attention lets every token look at every other token. In BERT, each of the twelve layers "
    "has twelve heads, and each head computes a softmax over scaled dot products between "
    "queries and keys. Some heads attend to the previous word, some to the next, some to the "
    "[SEP] token, and a few seem to follow syntax: determiners look at their nouns, objects at "
    "their verbs. Students can see all of this by opening the model and hovering over a cell."
)

U = dict(vocab="uncased")                      # bert-base-uncased, do_lower_case=True
C = dict(vocab="small", lower_case=False)      # a small cased vocabulary

CASES = [
    # English
    ("english-simple", U, "hello world"),
    ("english-sentence", U, "The quick brown fox jumps over the lazy dog."),
    ("english-capitals", U, "Hello, World! HELLO WoRlD"),
    ("english-wordpiece", U, "unaffable tokenization playing"),
    ("english-apostrophes", U, "don't I'm they'll rock'n'roll"),
    ("english-numbers", U, "3.14159 and 1,000,000 cost $100 (about 50%)."),
    ("english-url", U, "see https://example.com/path?q=1&r=2#frag"),
    ("english-hyphens", U, "state-of-the-art well-known e-mail"),
    ("english-symbols", U, "a+b=c x^2 ~tilde `tick` |pipe| <tag> {brace} @user #tag"),
    ("english-long-paragraph", U, LONG_PARAGRAPH),
    ("english-unicode-punct", U, "wait\u2026 a\u2014b \u201ccurly\u201d \u2018single\u2019 \u00bfqu\u00e9?"),
    # accents
    ("accents-cafe", U, "caf\u00e9"),
    ("accents-naive", U, "na\u00efve Na\u00efve NA\u00cfVE"),
    ("accents-creme-brulee", U, "Cr\u00e8me br\u00fbl\u00e9e"),
    ("accents-vietnamese", U, "Ti\u1ebfng Vi\u1ec7t"),
    ("accents-combining-decomposed", U, "cafe\u0301 nai\u0308ve"),
    ("accents-reordering", U, "a\u0301\u0327 q\u0323\u0307"),
    ("accents-german", U, "Stra\u00dfe \u00c4pfel \u00d6l \u00fcber"),
    ("accents-turkish-dotted-i", U, "\u0130stanbul \u0131s\u0131k"),
    ("accents-greek-sigma", U, "\u039f\u0394\u039f\u03a3 \u0395\u03bb\u03bb\u03b7\u03bd\u03b9\u03ba\u03ac \u03a3"),
    ("accents-digraph-titlecase", U, "\u01c4 \u01c5 \u01c6"),
    # Chinese and other scripts
    ("chinese-woaini", U, "\u6211\u7231\u4f60"),
    ("chinese-mixed-bert", U, "\u6df1\u5165\u89e3\u6790BERT\u591a\u5934\u81ea\u6ce8\u610f\u529b\u673a\u5236"),
    ("chinese-sentence", U, "\u4eca\u5929\u5929\u6c14\u5f88\u597d\u3002\u6211\u4eec\u53bb\u516c\u56ed\u5427\uff01"),
    ("chinese-mixed-spaces", U, "mixed \u4e2d\u6587 and English\u6df7\u5408"),
    ("chinese-fullwidth-punct", U, "\u4f60\u597d\uff0c\u4e16\u754c\uff01\uff08\u62ec\u53f7\uff09\u300c\u5f15\u53f7\u300d\u3001\uff1f"),
    ("chinese-compat-ideograph", U, "\uf900\uf901 x"),
    ("chinese-extension-b", U, "\U00020000\U0002a6d6 ok"),
    ("chinese-no-split-option", dict(U, tokenize_chinese_chars=False), "\u6211\u7231\u4f60 \u529b\u91cf"),
    ("japanese-kana", U, "\u3053\u3093\u306b\u3061\u306f \u30ab\u30bf\u30ab\u30ca \u65e5\u672c"),
    ("korean-hangul-uncased", U, "\uc548\ub155\ud558\uc138\uc694"),
    ("thai", U, "\u0e2a\u0e27\u0e31\u0e2a\u0e14\u0e35"),
    ("devanagari", U, "\u0928\u092e\u0938\u094d\u0924\u0947"),
    ("arabic-hebrew", U, "\u0645\u0631\u062d\u0628\u0627 \u05e9\u05dc\u05d5\u05dd"),
    ("cyrillic", U, "\u041f\u0440\u0438\u0432\u0435\u0442 \u041c\u0418\u0420"),
    # emoji and symbols
    ("emoji", U, "I love \U0001f355 and \U0001f600!"),
    ("emoji-zwj-sequence", U, "family \U0001f468\u200d\U0001f469\u200d\U0001f467 here"),
    ("emoji-variation-selector", U, "\u2764\ufe0f love"),
    ("math-currency", U, "\u2211 \u221a2 \u20ac100 \u00a35 \u00a5"),
    ("ligature-fi", U, "\ufb01nance"),
    ("letterlike-kelvin-ohm", U, "\u212a \u2126 \u212b"),
    # control, whitespace and zero-width characters
    ("control-chars", U, "a\u0001b\u007fc\u0085d"),
    ("whitespace-kinds", U, "tab\tnew\nline\r\nnbsp\u00a0ideo\u3000em\u2003end"),
    ("line-separators", U, "one\u2028two\u2029three"),
    ("zero-width", U, "zero\u200bwidth soft\u00adhyphen \ufeffbom join\u200dme"),
    ("replacement-char", U, "bad\ufffdchar \ufffd"),
    ("private-use-unassigned", U, "\ue000x y\u0378z"),
    ("only-whitespace", U, "   \t\n  "),
    ("empty", U, ""),
    ("leading-trailing-spaces", U, "   leading and trailing   "),
    # long words
    ("long-word-101", U, "a" * 101),
    ("long-word-100", U, "ab" * 50),
    ("long-word-accents-101", U, "\u00e9" * 101 + " ok"),
    ("long-word-unknown-piece", U, "supercalifragilisticexpialidocious"),
    # special tokens written in the text
    ("mask-in-text", U, "the cat sat on the [MASK] ."),
    ("mask-lowercase-not-special", U, "the [mask] token"),
    ("mask-inside-word", U, "foo[MASK]bar caf\u00e9[MASK]"),
    ("specials-all", U, "[CLS] hello [SEP] [PAD] [UNK] [MASK][MASK]"),
    ("mask-broken-by-zero-width", U, "[MA\u200bSK]"),
    ("mask-broken-cased", dict(C), "[MA\u200bSK] [UNK"),
    # pairs
    ("pair-simple", U, "How old are you?", "I am 6 years old."),
    ("pair-empty-second", U, "hello", ""),
    ("pair-chinese", U, "\u6211\u7231\u4f60", "i love you"),
    ("pair-with-mask", U, "paris is the capital of [MASK].", "[MASK] is a city"),
    # truncation
    ("trunc-single", U, LONG_PARAGRAPH, None, 16),
    ("trunc-single-min", U, "one two three four", None, 3),
    ("trunc-exact-fit", U, "one two three", None, 5),
    ("trunc-pair-first-longer", U, LONG_PARAGRAPH, "short one", 20),
    ("trunc-pair-second-longer", U, "short", LONG_PARAGRAPH, 20),
    ("trunc-pair-equal", U, "a b c d e f", "g h i j k l", 9),
    ("trunc-pair-odd-removal", U, "a b c d e f g", "h i j k l m", 10),
    ("trunc-pair-min", U, "a b c", "d e", 3),
    # cased mode (do_lower_case false)
    ("cased-hello", C, "Hello World hello world!"),
    ("cased-caps-pieces", C, "HELLO HELLOLO"),
    ("cased-cafe-keeps-accent", C, "caf\u00e9 Caf\u00e9 cafe\u0301 na\u00efve"),
    ("cased-chinese", C, "\u6211\u7231\u4f60\uff0c\u6df1\u5165\u89e3\u6790BERT\u591a\u5934\u81ea\u6ce8\u610f\u529b\u673a\u5236\u3002"),
    ("cased-hangul-syllables", C, "\uc548\ub155\ud558\uc138\uc694 \uac00"),
    ("cased-jamo-compose", C, "\u1100\u1161"),
    ("cased-compat-ideograph", C, "\uf900"),
    ("cased-ohm-kelvin", C, "\u2126 \u212a"),
    ("cased-ligature", C, "\ufb01nance"),
    ("cased-greek", C, "\u0395\u03bb\u03bb\u03b7\u03bd\u03b9\u03ba\u03ac \u039f\u0394\u039f\u03a3"),
    ("cased-vietnamese", C, "Ti\u1ebfng Vi\u1ec7t"),
    ("cased-strip-accents-true", dict(C, strip_accents=True), "caf\u00e9 Cr\u00e8me na\u00efve"),
    ("cased-mask-lowercase", C, "the [mask] sat on the [MASK] mat"),
    ("cased-pair", C, "Hello World", "\u6211\u7231\u4f60"),
    ("cased-combining-alone", C, "e \u0301 e\u0301"),
    ("cased-canonical-reordering", C, "e\u0301\u0327 C\u0301\u0327 C\u0327\u0301 \u1e08"),
    ("cased-turkish", C, "\u0130 i\u0307"),
    ("uncased-vocab-cased-mode", dict(U, lower_case=False), "Hello hello"),
    # lower case without stripping accents
    ("lower-no-strip", dict(C, lower_case=True, strip_accents=False), "CAF\u00c9 Caf\u00e9 \u00c4"),
    ("lower-no-strip-uncased", dict(U, strip_accents=False), "caf\u00e9 na\u00efve"),
]


def main():
    vocab_ports = {}
    out_cases = []
    for case in CASES:
        name, cfg, text = case[0], case[1], case[2]
        pair = case[3] if len(case) > 3 else None
        max_len = case[4] if len(case) > 4 else 0
        opts = {"lower_case": cfg.get("lower_case", True),
                "strip_accents": cfg.get("strip_accents", None),
                "tokenize_chinese_chars": cfg.get("tokenize_chinese_chars", True)}
        key = (cfg["vocab"], opts["lower_case"], opts["strip_accents"], opts["tokenize_chinese_chars"])
        if key not in vocab_ports:
            vocab_ports[key] = hb.BertTokenizerPort(
                os.path.join(HERE, VOCABS[cfg["vocab"]]), do_lower_case=opts["lower_case"],
                tokenize_chinese_chars=opts["tokenize_chinese_chars"],
                strip_accents=opts["strip_accents"])
        port = vocab_ports[key]
        for ch in text + (pair or ""):
            # stay within characters whose data is the same in Python's UCD and Debian's
            assert unicodedata.category(ch) != "Cn" or ch in "\u0378", (name, hex(ord(ch)))
        expect = hb.encode(port, text, pair, max_len)
        c = {"name": name, "vocab": cfg["vocab"], "options": opts, "text": text}
        if pair is not None:
            c["text_pair"] = pair
        c["max_len"] = max_len
        c["expect"] = expect
        out_cases.append(c)
    names = [c["name"] for c in out_cases]
    assert len(names) == len(set(names))
    doc = {
        "generator": "tests/tokenizer/gen_fixtures.py (hf_bert_port.py: HF BertTokenizer ported to Python)",
        "python_unicode_version": unicodedata.unidata_version,
        "vocabs": VOCABS,
        "cases": out_cases,
    }
    path = os.path.join(HERE, "fixtures.json")
    with open(path, "w", encoding="utf-8") as f:
        f.write("{\n")
        f.write('"generator": %s,\n' % json.dumps(doc["generator"]))
        f.write('"python_unicode_version": %s,\n' % json.dumps(doc["python_unicode_version"]))
        f.write('"vocabs": %s,\n' % json.dumps(VOCABS))
        f.write('"cases": [\n')
        f.write(",\n".join(json.dumps(c, ensure_ascii=False) for c in out_cases))
        f.write("\n]}\n")
    print("%s: %d cases" % (path, len(out_cases)))


if __name__ == "__main__":
    main()
