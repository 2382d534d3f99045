#!/usr/bin/env python3
"""Writes engine/tokenize/tables/unicode-tables.c: the Unicode data the WordPiece tokenizer needs.

The tables come from the Unicode Character Database that Debian ships in the
`unicode-data` package (/usr/share/unicode), never typed by hand:

  - a character class per code point (control = any C* category, including unassigned
    code points; Zs; P*; Mn; other Python whitespace), as run starts, binary searched;
  - the lower-case mapping Python's str.lower() uses (UnicodeData's simple mapping, with
    SpecialCasing's unconditional multi-character mappings on top), as runs with a delta;
  - canonical combining classes, as runs;
  - full canonical decompositions (Hangul syllables are done by arithmetic in the code);
  - canonical composition pairs, without the Full_Composition_Exclusion characters.

Usage: tools/gen-unicode-tables.py [UCD_DIR] > engine/tokenize/tables/unicode-tables.c
   or: tools/gen-unicode-tables.py [UCD_DIR] -o engine/tokenize/tables/unicode-tables.c
"""
import argparse
import os
import sys

CLS_OTHER, CLS_CONTROL, CLS_ZS, CLS_PUNCT, CLS_MN, CLS_PYSPACE = range(6)
MAX_CP = 0x110000
HANGUL_S0, HANGUL_SN = 0xAC00, 11172


def parse_unicode_data(path):
    """Returns {cp: fields} with First/Last ranges expanded."""
    recs = {}
    first = None
    with open(path, encoding="ascii") as f:
        for line in f:
            fields = line.rstrip("\n").split(";")
            cp = int(fields[0], 16)
            name = fields[1]
            if name.endswith(", First>"):
                first = cp
                continue
            if name.endswith(", Last>"):
                for c in range(first, cp + 1):
                    recs[c] = fields
                first = None
                continue
            recs[cp] = fields
    return recs


def parse_ranges(path, want=None):
    """Yields (lo, hi, value) from a UCD property file ("0340..0341 ; Value # ...")."""
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            parts = [p.strip() for p in line.split(";")]
            rng = parts[0]
            if ".." in rng:
                lo, hi = (int(x, 16) for x in rng.split(".."))
            else:
                lo = hi = int(rng, 16)
            value = parts[1] if len(parts) > 1 else ""
            if want is None or value == want:
                yield lo, hi, value


def char_class(rec, cp):
    if rec is None:
        return CLS_CONTROL  # unassigned: category Cn
    cat, bidi = rec[2], rec[4]
    if cat.startswith("C"):
        return CLS_CONTROL
    if cat == "Zs":
        return CLS_ZS
    if cat.startswith("P"):
        return CLS_PUNCT
    if cat == "Mn":
        return CLS_MN
    if bidi in ("WS", "B", "S"):
        return CLS_PYSPACE  # str.isspace() but not Zs (U+2028, U+2029)
    return CLS_OTHER


def build(ucd):
    recs = parse_unicode_data(os.path.join(ucd, "UnicodeData.txt"))

    # ---- classes: run starts -------------------------------------------------
    runs = []
    prev = None
    for cp in range(MAX_CP):
        c = char_class(recs.get(cp), cp)
        if c != prev:
            runs.append((cp, c))
            prev = c

    # ---- lower case --------------------------------------------------------------
    lower = {}
    for cp, rec in recs.items():
        if rec[13]:
            lower[cp] = [int(rec[13], 16)]
    special = {}
    for line in open(os.path.join(ucd, "SpecialCasing.txt"), encoding="utf-8"):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        parts = [p.strip() for p in line.split(";")]
        # code; lower; title; upper; (condition_list;)?
        if len(parts) >= 5 and parts[4]:
            continue  # conditional (Final_Sigma, language-specific): not used by str.lower
        cp = int(parts[0], 16)
        lo = [int(x, 16) for x in parts[1].split()]
        if lo != [cp] and len(lo) > 1:
            special[cp] = lo
    simple = sorted((cp, m[0]) for cp, m in lower.items() if cp not in special)
    # runs of (lo, hi, stride, delta): consecutive mappings with the same delta and stride
    case_runs = []
    for cp, to in simple:
        d = to - cp
        if case_runs:
            lo, hi, stride, delta = case_runs[-1]
            if delta == d:
                if stride in (0, 1) and cp == hi + 1:
                    case_runs[-1] = (lo, cp, 1, d)
                    continue
                if stride in (0, 2) and cp == hi + 2:
                    case_runs[-1] = (lo, cp, 2, d)
                    continue
        case_runs.append((cp, cp, 0, d))
    case_runs = [(lo, hi, stride or 1, d) for lo, hi, stride, d in case_runs]

    # ---- combining classes -------------------------------------------------------
    ccc = {cp: int(rec[3]) for cp, rec in recs.items() if int(rec[3])}
    ccc_runs = []
    for cp in sorted(ccc):
        if ccc_runs and ccc_runs[-1][1] == cp - 1 and ccc_runs[-1][2] == ccc[cp]:
            ccc_runs[-1] = (ccc_runs[-1][0], cp, ccc[cp])
        else:
            ccc_runs.append((cp, cp, ccc[cp]))

    # ---- canonical decompositions ----------------------------------------------------
    canon = {}
    for cp, rec in recs.items():
        dm = rec[5]
        if dm and not dm.startswith("<"):
            canon[cp] = [int(x, 16) for x in dm.split()]

    def full(cp):
        if cp in canon:
            out = []
            for c in canon[cp]:
                out.extend(full(c))
            return out
        return [cp]

    decomp = {cp: full(cp) for cp in canon}
    maxlen = max(len(v) for v in decomp.values())

    # ---- composition ---------------------------------------------------------------
    excl = set()
    for lo, hi, _ in parse_ranges(os.path.join(ucd, "CompositionExclusions.txt")):
        excl.update(range(lo, hi + 1))
    comp = []
    derived_excl = set()
    for cp, seq in canon.items():
        excluded = (cp in excl or len(seq) == 1 or ccc.get(cp, 0) != 0
                    or ccc.get(seq[0], 0) != 0)
        if excluded:
            derived_excl.add(cp)
            continue
        assert len(seq) == 2, hex(cp)
        comp.append((seq[0], seq[1], cp))
    comp.sort()
    # cross-check with the derived property the UCD publishes
    published = set()
    for lo, hi, _ in parse_ranges(os.path.join(ucd, "DerivedNormalizationProps.txt"),
                                  "Full_Composition_Exclusion"):
        published.update(range(lo, hi + 1))
    assert published == derived_excl, sorted(published ^ derived_excl)[:10]

    version = "?"
    with open(os.path.join(ucd, "ReadMe.txt"), encoding="utf-8") as f:
        for line in f:
            if "Version" in line and "Unicode Standard" in line:
                version = line.split("Version", 1)[1].split()[0]
                break
    return dict(runs=runs, case_runs=case_runs, special=special, ccc_runs=ccc_runs,
                decomp=decomp, maxlen=maxlen, comp=comp, version=version)


def fmt_list(items, per_line, indent="    "):
    lines = []
    for i in range(0, len(items), per_line):
        lines.append(indent + ", ".join(items[i:i + per_line]) + ",")
    return "\n".join(lines)


TEMPLATE_FUNCS = r"""
/* ---- lookups ------------------------------------------------------------------ */

atn_uc_class atn_uc_class_of(uint32_t cp) {
    if (cp >= 0x110000) return ATN_UC_CONTROL;
    /* largest run start <= cp */
    size_t lo = 0, hi = sizeof class_runs / sizeof class_runs[0];
    while (hi - lo > 1) {
        size_t mid = (lo + hi) / 2;
        if ((class_runs[mid] >> 3) <= cp) lo = mid; else hi = mid;
    }
    return (atn_uc_class)(class_runs[lo] & 7);
}

int atn_uc_lower(uint32_t cp, uint32_t out[ATN_UC_MAX_LOWER]) {
    if (cp < 0x80) {
        out[0] = (cp >= 'A' && cp <= 'Z') ? cp + 32 : cp;
        return 1;
    }
    for (size_t i = 0; i < sizeof lower_special / sizeof lower_special[0]; i++) {
        if (lower_special[i].cp == cp) {
            int n = 0;
            while (n < ATN_UC_MAX_LOWER && lower_special[i].to[n]) { out[n] = lower_special[i].to[n]; n++; }
            return n;
        }
    }
    size_t lo = 0, hi = sizeof lower_runs / sizeof lower_runs[0];
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (lower_runs[mid].hi < cp) lo = mid + 1;
        else if (lower_runs[mid].lo > cp) hi = mid;
        else {
            const struct lower_run *r = &lower_runs[mid];
            if ((cp - r->lo) % r->stride == 0) { out[0] = (uint32_t)((int32_t)cp + r->delta); return 1; }
            break;
        }
    }
    out[0] = cp;
    return 1;
}

int atn_uc_ccc(uint32_t cp) {
    if (cp < 0x300) return 0;
    size_t lo = 0, hi = sizeof ccc_runs / sizeof ccc_runs[0];
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (ccc_runs[mid].hi < cp) lo = mid + 1;
        else if (ccc_runs[mid].lo > cp) hi = mid;
        else return ccc_runs[mid].ccc;
    }
    return 0;
}

enum { HANGUL_S0 = 0xAC00, HANGUL_L0 = 0x1100, HANGUL_V0 = 0x1161, HANGUL_T0 = 0x11A7,
       HANGUL_LN = 19, HANGUL_VN = 21, HANGUL_TN = 28, HANGUL_NN = 21 * 28, HANGUL_SN = 11172 };

int atn_uc_decompose(uint32_t cp, uint32_t out[ATN_UC_MAX_DECOMP]) {
    if (cp < 0xC0) { out[0] = cp; return 1; }
    if (cp >= HANGUL_S0 && cp < HANGUL_S0 + HANGUL_SN) {
        uint32_t s = cp - HANGUL_S0;
        out[0] = HANGUL_L0 + s / HANGUL_NN;
        out[1] = HANGUL_V0 + (s % HANGUL_NN) / HANGUL_TN;
        if (s % HANGUL_TN == 0) return 2;
        out[2] = HANGUL_T0 + s % HANGUL_TN;
        return 3;
    }
    size_t lo = 0, hi = sizeof decomp_index / sizeof decomp_index[0];
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        uint32_t key = decomp_index[mid] >> 2;
        if (key < cp) lo = mid + 1;
        else if (key > cp) hi = mid;
        else {
            uint32_t n = (decomp_index[mid] & 3) + 1;
            const uint32_t *src = &decomp_pool[decomp_page[mid]];
            for (uint32_t i = 0; i < n; i++) out[i] = src[i];
            return (int)n;
        }
    }
    out[0] = cp;
    return 1;
}

uint32_t atn_uc_compose(uint32_t a, uint32_t b) {
    if (a >= HANGUL_L0 && a < HANGUL_L0 + HANGUL_LN && b >= HANGUL_V0 && b < HANGUL_V0 + HANGUL_VN)
        return HANGUL_S0 + ((a - HANGUL_L0) * HANGUL_VN + (b - HANGUL_V0)) * HANGUL_TN;
    if (a >= HANGUL_S0 && a < HANGUL_S0 + HANGUL_SN && (a - HANGUL_S0) % HANGUL_TN == 0 &&
        b > HANGUL_T0 && b < HANGUL_T0 + HANGUL_TN)
        return a + (b - HANGUL_T0);
    uint64_t key = ((uint64_t)a << 21) | b;
    size_t lo = 0, hi = sizeof comp_pairs / sizeof comp_pairs[0];
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        uint64_t k = ((uint64_t)comp_pairs[mid].a << 21) | comp_pairs[mid].b;
        if (k < key) lo = mid + 1;
        else if (k > key) hi = mid;
        else return comp_pairs[mid].c;
    }
    return 0;
}
"""


def emit(t, out):
    w = out.write
    w("/* GENERATED by tools/gen-unicode-tables.py from the Unicode Character Database %s\n"
      " * (Debian's unicode-data package).  Do not edit: rerun the script.\n"
      " *\n"
      " * The character data the WordPiece tokenizer needs, as compact sorted tables searched\n"
      " * by bisection: a class per code point, Python's lower-case mapping, canonical\n"
      " * combining classes, full canonical decompositions and composition pairs.\n"
      " * Over 1,000 lines because it is generated data tables, not code to read. */\n"
      % t["version"])
    w("#include \"tokenize/unicode-tables.h\"\n\n#include <stddef.h>\n\n")
    w("const char atn_uc_version[] = \"%s\";\n\n" % t["version"])

    runs = t["runs"]
    w("/* (run start << 3) | atn_uc_class; a run lasts until the next start. %d runs. */\n"
      % len(runs))
    w("static const uint32_t class_runs[] = {\n")
    w(fmt_list(["0x%x" % ((s << 3) | c) for s, c in runs], 8))
    w("\n};\n\n")

    cr = t["case_runs"]
    w("/* Simple lower-case mappings: cp in [lo, hi] with (cp - lo) %% stride == 0 maps to\n"
      " * cp + delta.  %d runs. */\n" % len(cr))
    w("static const struct lower_run { uint32_t lo, hi; int32_t delta; uint32_t stride; } "
      "lower_runs[] = {\n")
    w(fmt_list(["{0x%x, 0x%x, %d, %d}" % (lo, hi, d, s) for lo, hi, s, d in cr], 4))
    w("\n};\n\n")
    sp = sorted(t["special"].items())
    assert all(len(v) <= 3 for _, v in sp)
    w("/* SpecialCasing.txt's unconditional multi-character lower-case mappings. */\n")
    w("static const struct { uint32_t cp; uint32_t to[3]; } lower_special[] = {\n")
    w(fmt_list(["{0x%x, {%s}}" % (cp, ", ".join("0x%x" % x for x in v)) for cp, v in sp], 4))
    w("\n};\n\n")

    cc = t["ccc_runs"]
    w("/* Non-zero canonical combining classes.  %d runs. */\n" % len(cc))
    w("static const struct { uint32_t lo, hi; uint8_t ccc; } ccc_runs[] = {\n")
    w(fmt_list(["{0x%x, 0x%x, %d}" % r for r in cc], 5))
    w("\n};\n\n")

    dec = sorted(t["decomp"].items())
    assert t["maxlen"] <= 4
    pool, page = [], []
    for cp, seq in dec:
        page.append(len(pool))
        pool.extend(seq)
    assert len(pool) < (1 << 16)
    w("/* Full canonical decompositions of %d code points: (cp << 2) | (len - 1); the\n"
      " * sequence starts at decomp_pool[decomp_page[i]]. */\n" % len(dec))
    w("static const uint32_t decomp_index[] = {\n")
    w(fmt_list(["0x%x" % ((cp << 2) | (len(seq) - 1)) for cp, seq in dec], 8))
    w("\n};\n")
    w("static const uint16_t decomp_page[] = {\n")
    w(fmt_list(["%d" % p for p in page], 12))
    w("\n};\n")
    w("static const uint32_t decomp_pool[] = {\n")
    w(fmt_list(["0x%x" % x for x in pool], 10))
    w("\n};\n\n")

    cp_ = t["comp"]
    w("/* Canonical composition pairs (a, b) -> c, sorted by (a, b); excludes the\n"
      " * Full_Composition_Exclusion characters.  %d pairs. */\n" % len(cp_))
    w("static const struct { uint32_t a, b, c; } comp_pairs[] = {\n")
    w(fmt_list(["{0x%x, 0x%x, 0x%x}" % r for r in cp_], 4))
    w("\n};\n")
    w(TEMPLATE_FUNCS)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("ucd", nargs="?", default="/usr/share/unicode")
    ap.add_argument("-o", "--output")
    args = ap.parse_args()
    t = build(args.ucd)
    if args.output:
        tmp = args.output + ".tmp"
        with open(tmp, "w", encoding="ascii") as f:
            emit(t, f)
        os.replace(tmp, args.output)
    else:
        emit(t, sys.stdout)


if __name__ == "__main__":
    main()
