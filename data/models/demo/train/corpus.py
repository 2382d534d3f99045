"""Extracts the demo model's training text from installed Debian packages.

English: the `fortunes` package (every cookie file except the ASCII-art one).
Chinese: `fortunes-zh`'s modern-prose file `chinese` (not the classical `tang300` / `song100`
poetry) and the `manpages-zh` manual pages with the roff markup stripped.

The result is a list of documents per language; a document is a list of sentences (strings),
in file order, so that consecutive sentences can be paired ([CLS] A [SEP] B [SEP]).
Everything is sorted / ordered deterministically so the same packages give the same corpus.
"""

import gzip
import os
import re
import unicodedata

FORTUNE_DIR = "/usr/share/games/fortunes"
MAN_ZH_DIR = "/usr/share/man/zh_CN"
# Files of the fortunes-zh package; only "chinese" is modern prose.
ZH_FORTUNE_FILES = {"chinese", "tang300", "song100"}
EN_SKIP = {"ascii-art"}

ANSI_RE = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
OVERSTRIKE_RE = re.compile(r".\x08")
BOX_RE = re.compile(r"[\u2500-\u257f]")
SPACES_RE = re.compile(r"\s+")
# English sentence end: . ! ? (optionally followed by closing quotes/brackets) then space.
EN_SPLIT_RE = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[\"'(\[]?[A-Z0-9])")
ZH_SPLIT_RE = re.compile(r"(?<=[。！？；!?])\s*")


def is_cjk(ch):
    cp = ord(ch)
    return (0x4E00 <= cp <= 0x9FFF or 0x3400 <= cp <= 0x4DBF or 0x20000 <= cp <= 0x2A6DF
            or 0x2A700 <= cp <= 0x2B73F or 0x2B740 <= cp <= 0x2B81F or 0x2B820 <= cp <= 0x2CEAF
            or 0xF900 <= cp <= 0xFAFF or 0x2F800 <= cp <= 0x2FA1F)


def clean_line(s):
    s = ANSI_RE.sub("", s)
    s = OVERSTRIKE_RE.sub("", s)
    s = "".join(ch for ch in s if ch in "\t\n" or not unicodedata.category(ch).startswith("C"))
    return s


def norm_space(s):
    return SPACES_RE.sub(" ", s).strip()


def cjk_fraction(s):
    chars = [c for c in s if not c.isspace()]
    if not chars:
        return 0.0
    return sum(1 for c in chars if is_cjk(c)) / len(chars)


def read_fortune_file(path):
    with open(path, "rb") as f:
        text = f.read().decode("utf-8", errors="replace")
    return [clean_line(c) for c in re.split(r"\n%\n", text)]


def english_sentences(cookie):
    """Sentences of one English fortune: joined lines, attributions kept as their own piece."""
    lines = []
    for ln in cookie.split("\n"):
        if BOX_RE.search(ln) or "\ufffd" in ln:
            continue
        s = ln.strip()
        if not s:
            lines.append("")
            continue
        lines.append(s)
    paras = norm_space(" ".join(l if l else "\n" for l in lines))
    out = []
    for para in re.split(r"\s*--\s+", paras):
        for sent in EN_SPLIT_RE.split(para):
            sent = norm_space(sent)
            letters = sum(1 for c in sent if c.isalpha())
            if len(sent) >= 8 and letters >= 0.6 * len(sent.replace(" ", "")):
                out.append(sent)
    return out


def chinese_sentences(text):
    out = []
    for sent in ZH_SPLIT_RE.split(norm_space(text)):
        sent = sent.strip()
        n_cjk = sum(1 for c in sent if is_cjk(c))
        if n_cjk >= 5 and cjk_fraction(sent) >= 0.5 and "\ufffd" not in sent:
            out.append(sent)
    return out


def english_documents():
    docs = []
    for name in sorted(os.listdir(FORTUNE_DIR)):
        path = os.path.join(FORTUNE_DIR, name)
        if (name.endswith(".dat") or name.endswith(".u8") or name in ZH_FORTUNE_FILES
                or name in EN_SKIP or not os.path.isfile(path)):
            continue
        for cookie in read_fortune_file(path):
            sents = english_sentences(cookie)
            if sents:
                docs.append(sents)
    return docs


def zh_fortune_documents():
    docs = []
    for cookie in read_fortune_file(os.path.join(FORTUNE_DIR, "chinese")):
        kept = []
        for ln in cookie.split("\n"):
            s = ln.strip()
            # Tables, command lines and attributions are not prose.
            if (BOX_RE.search(s) or s.startswith("$") or s.startswith("--")
                    or s.startswith("#")):
                kept.append("")
                continue
            kept.append(s)
        paras = "\n".join(kept).split("\n\n")
        sents = []
        for p in paras:
            sents.extend(chinese_sentences(p.replace("\n", "")))
        if sents:
            docs.append(sents)
    return docs


ROFF_TEXT_MACROS = {"SH", "SS", "B", "I", "BR", "RB", "IR", "RI", "BI", "IB", "SM", "SB"}
ROFF_ESC_RE = re.compile(
    r"\\f(\(..|\[[^\]]*\]|.)"      # font changes
    r"|\\s[+-]?\d"                  # size changes
    r"|\\\*(\(..|\[[^\]]*\]|.)"     # strings
    r"|\\\((..)"                    # special characters \(xx
    r"|\\\[[^\]]*\]"                # special characters \[name]
    r"|\\[&/,|^%:]"                 # zero-width escapes
    r"|\\[nkwhvlLoxDNHSzZbXY]('[^']*'|\(..|.)?"
)


def roff_to_text(src):
    """Paragraphs of plain text from a man page; tables, examples and comments dropped."""
    paras, cur = [], []
    skip = False
    for raw in src.split("\n"):
        ln = raw.rstrip()
        if ln.startswith(".\\\"") or ln.startswith("'\\\"") or ln.startswith("\\\""):
            continue
        if ln.startswith(".") or ln.startswith("'"):
            parts = ln[1:].strip().split(None, 1)
            mac = parts[0] if parts else ""
            if mac in ("TS", "EX", "nf", "Vb"):
                skip = True
            elif mac in ("TE", "EE", "fi", "Ve"):
                skip = False
            if cur:
                paras.append(" ".join(cur))
                cur = []
            if mac in ROFF_TEXT_MACROS and len(parts) > 1 and not skip:
                cur.append(parts[1].replace('"', " "))
                if mac in ("SH", "SS"):
                    paras.append(" ".join(cur))
                    cur = []
            continue
        if skip or "\t" in ln:
            continue
        if not ln.strip():
            if cur:
                paras.append(" ".join(cur))
                cur = []
            continue
        cur.append(ln)
    if cur:
        paras.append(" ".join(cur))
    out = []
    for p in paras:
        p = p.replace("\\-", "-").replace("\\e", "\\").replace("\\ ", " ").replace("\\~", " ")
        p = ROFF_ESC_RE.sub("", p)
        p = p.replace("\\", "")
        out.append(clean_line(p))
    return out


def manpage_documents():
    docs = []
    for sec in sorted(os.listdir(MAN_ZH_DIR)):
        d = os.path.join(MAN_ZH_DIR, sec)
        if not os.path.isdir(d):
            continue
        for name in sorted(os.listdir(d)):
            path = os.path.join(d, name)
            if not os.path.isfile(path) or os.path.islink(path):
                continue
            opener = gzip.open if name.endswith(".gz") else open
            with opener(path, "rb") as f:
                raw = f.read()
            try:
                src = raw.decode("utf-8")
            except UnicodeDecodeError:
                continue
            sents = []
            for p in roff_to_text(src):
                sents.extend(chinese_sentences(p))
            if sents:
                docs.append(sents)
    return docs


def load_corpus():
    """{'en': [doc, ...], 'zh': [doc, ...], 'sources': counts per package}; a doc is a list
    of sentence strings."""
    en, zf, zm = english_documents(), zh_fortune_documents(), manpage_documents()
    sources = {name: {"documents": len(d), "sentences": sum(len(x) for x in d)}
               for name, d in (("fortunes", en), ("fortunes-zh", zf), ("manpages-zh", zm))}
    return {"en": en, "zh": zf + zm, "sources": sources}


if __name__ == "__main__":
    import random
    import sys
    c = load_corpus()
    for lang in ("en", "zh"):
        docs = c[lang]
        sents = [s for d in docs for s in d]
        print(lang, "docs", len(docs), "sentences", len(sents),
              "chars", sum(len(s) for s in sents), file=sys.stderr)
        rng = random.Random(1)
        for s in rng.sample(sents, 12):
            print(lang, "|", s)
