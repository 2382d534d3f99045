#!/usr/bin/python3
"""Writes the causal demo model's text: the licence texts Debian ships in
/usr/share/common-licenses (package base-files), one paragraph per line.

Each licence says that everyone may copy and distribute verbatim copies of it, so the
text itself is committed (corpus.txt, heldout.txt) and training needs nothing installed.
Every 10th paragraph (index % 10 == 9, counted over all files in the order below) is
held out for evaluation; the rest is training text.  Duplicate files (GPL = GPL-3,
LGPL = LGPL-3, GFDL = GFDL-1.3) are read once.

Usage: corpus.py [--src /usr/share/common-licenses] [--out DIR]
"""
import argparse
import os
import re

FILES = ["GPL-3", "GPL-2", "GPL-1", "LGPL-3", "LGPL-2.1", "LGPL-2", "Apache-2.0", "MPL-2.0",
         "MPL-1.1", "GFDL-1.3", "GFDL-1.2", "Artistic", "BSD", "CC0-1.0"]


def paragraphs(text):
    for block in re.split(r"\n\s*\n", text):
        p = re.sub(r"\s+", " ", block).strip()
        letters = sum(c.isalpha() for c in p)
        if len(p) >= 20 and letters >= 0.5 * len(p):   # no rules of dashes, no bare headings
            yield p


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--src", default="/usr/share/common-licenses")
    ap.add_argument("--out", default=os.path.dirname(os.path.abspath(__file__)))
    a = ap.parse_args()
    train, held = [], []
    i = 0
    for name in FILES:
        with open(os.path.join(a.src, name), encoding="utf-8") as f:
            for p in paragraphs(f.read()):
                (held if i % 10 == 9 else train).append(p)
                i += 1
    for fn, lines in (("corpus.txt", train), ("heldout.txt", held)):
        with open(os.path.join(a.out, fn), "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")
    print(f"{len(train)} training paragraphs ({sum(map(len, train))} chars), {len(held)} held out")


if __name__ == "__main__":
    main()
