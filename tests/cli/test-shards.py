#!/usr/bin/env python3
"""Corpus statistics in parts (stats --shard, stats merge, stats --from, examples) on the demo
model and a generated corpus of a few hundred lines:
  - shards merged in several orders and groupings give the same bytes as one process over the
    whole corpus, also shards whose heads are made on demand (--on-demand); a partial given twice or two that overlap are refused naming both files;
    missing ranges are reported; partials of another --top are refused;
  - stats --from equals stats --corpus (sentences exact, every mean within 1e-9 relative);
  - HF_HUB_OFFLINE=1: a shard gives the same bytes, a model not cached is refused naming it;
  - a shard killed (SIGKILL) at a random line and run again with --resume writes the same bytes;
  - the shards run by GNU parallel (docs/cluster.md's one-machine recipe) merge to the same file;
  - each head's exemplars equal a brute-force search over `attnscope run` JSON attention, also
    with role filters (--query-role word --key-role special: exemplars, → [CLS] means, the
    sentence count), which are in the provenance and make a merge with unfiltered parts refuse;
  - --corpus @LIST (files numbered as one corpus): shards crossing files merge to one process's
    bytes, and the numbers and exemplars equal those of the files concatenated; --from @LIST.
  - the per-offset sums (positional evidence): stats --from's offset_weights equal a brute force
    over `run` JSON; every head's corpus label comes with its evidence and figure (json, csv);
    a partial without the sums (an older attnscope's) degrades by name in --from and examples,
    and a merge of one with a newer partial refuses naming both files;
  - examples --corpus @LIST shows each exemplar's sentence with the query and key marked.
  - (opt-in, `make test-shards-big`) 10,000 lines in 7 shards = one process.
Usage: test-shards.py ATTNSCOPE [parallel|core|examples|lists|big]"""
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile

exe = os.path.abspath(sys.argv[1])
part = sys.argv[2] if len(sys.argv) > 2 else "core"
env = dict(os.environ, LANGUAGE="C", LC_ALL="C.UTF-8")
env.pop("ATTNSCOPE_TEST_KILL_AT_LINE", None)
tmp = tempfile.mkdtemp(prefix="atn-shards-")
failures = []


def run(*args, rc=0, extra_env=None):
    r = subprocess.run([exe, *args], capture_output=True, text=True, env=dict(env, **(extra_env or {})), cwd=tmp)
    if rc is not None and r.returncode != rc:
        sys.exit(f"attnscope {' '.join(args)}: exit {r.returncode}, expected {rc}\n{r.stderr}")
    return r


def path(name):
    return os.path.join(tmp, name)


def same_bytes(a, b, what):
    if open(path(a), "rb").read() != open(path(b), "rb").read():
        failures.append(f"{what}: {a} and {b} differ")


def without_offsets(src, dst):
    """A partial as an attnscope before the per-offset sums wrote it: the same file without the
    "offsets" and "offsets.rows" tensors (the header rewritten, the other tensors' bytes moved up)."""
    raw = open(path(src), "rb").read()
    hlen = int.from_bytes(raw[:8], "little")
    header = json.loads(raw[8:8 + hlen])
    data = raw[8 + hlen:]
    out, pos = {}, 0
    chunks = []
    for name, t in header.items():   # the writer's order
        if name == "__metadata__":
            out[name] = t
            continue
        if name in ("offsets", "offsets.rows"):
            continue
        a, b = t["data_offsets"]
        chunks.append(data[a:b])
        out[name] = dict(t, data_offsets=[pos, pos + b - a])
        pos += b - a
    if len(out) != len(header) - 2:
        failures.append(f"{src} has no offsets tensors: {sorted(header)}")
    h = json.dumps(out, separators=(",", ":")).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    open(path(dst), "wb").write(len(h).to_bytes(8, "little") + h + b"".join(chunks))


def make_corpus(name, lines, seed):
    rng = random.Random(seed)
    words = ("the cat sat on a mat , and dog ran to park . she said that he would come home soon ; birds fly "
             "over river while children play in garden ? über café naïve 東京").split()
    with open(path(name), "w", encoding="utf-8") as f:
        for i in range(lines):
            if i % 29 == 7:
                f.write("\n" if i % 2 else "   \n")   # empty lines are covered, never run
                continue
            f.write(" ".join(rng.choice(words) for _ in range(rng.randint(2, 22))) + "\n")


make_corpus("c.txt", 240, 38)
M = ["--model", "demo"]

if part == "core":
    # one process, the reference in both forms
    run("stats", *M, "--corpus", "c.txt", "--format", "json", "-o", "ref.json")
    run("stats", *M, "--corpus", "c.txt", "-o", "whole.safetensors")
    for i in range(4):
        run("stats", *M, "--corpus", "c.txt", "--shard", f"{i}/4", "--checkpoint-every", "11", "-o", f"p{i}.safetensors")
    run("stats", "merge", "p0.safetensors", "p1.safetensors", "p2.safetensors", "p3.safetensors", "-o", "m1.safetensors")
    run("stats", "merge", "p3.safetensors", "p0.safetensors", "p2.safetensors", "p1.safetensors", "-o", "m2.safetensors")
    run("stats", "merge", "p2.safetensors", "p0.safetensors", "-o", "g1.safetensors")
    run("stats", "merge", "p3.safetensors", "p1.safetensors", "-o", "g2.safetensors")
    run("stats", "merge", "g2.safetensors", "g1.safetensors", "-o", "m3.safetensors")
    for m in ("m1", "m2", "m3"):
        same_bytes("whole.safetensors", m + ".safetensors", "merge order/grouping")
    # HF_HUB_OFFLINE=1 (a cluster node without network): a shard reads only the cache, the same
    # bytes; a model not in the cache is refused naming it, never fetched
    run("stats", *M, "--corpus", "c.txt", "--shard", "0/4", "--checkpoint-every", "11", "-o", "off0.safetensors",
        extra_env={"HF_HUB_OFFLINE": "1"})
    same_bytes("p0.safetensors", "off0.safetensors", "a shard under HF_HUB_OFFLINE=1")
    r = run("stats", "--model", "org/not-cached", "--corpus", "c.txt", "--shard", "0/4", "-o", "x.safetensors", rc=2,
            extra_env={"HF_HUB_OFFLINE": "1", "HF_HOME": path("hf-home")})
    if "org/not-cached" not in r.stderr or "not in the Hugging Face cache" not in r.stderr:
        failures.append("HF_HUB_OFFLINE with a model not cached: " + r.stderr)
    # heads made one at a time from Q, K, V (--on-demand): the same bytes as the full captures
    for i in range(2):
        run("stats", *M, "--corpus", "c.txt", "--shard", f"{i}/2", "--on-demand", "-o", f"d{i}.safetensors")
    run("stats", "merge", "d1.safetensors", "d0.safetensors", "-o", "d.safetensors")
    same_bytes("whole.safetensors", "d.safetensors", "--on-demand shards")
    # a shard of no lines (more shards than lines) is a partial too, and merges as nothing
    make_corpus("tiny.txt", 3, 1)
    run("stats", *M, "--corpus", "tiny.txt", "--shard", "0/5", "-o", "t0.safetensors")
    # refusals, naming both files
    r = run("stats", "merge", "p0.safetensors", "p1.safetensors", "p0.safetensors", "-o", "x.safetensors", rc=2)
    if "p0.safetensors and p0.safetensors both cover lines 1-60" not in r.stderr:
        failures.append("a partial given twice: " + r.stderr)
    r = run("stats", "merge", "p0.safetensors", "t0.safetensors", "-o", "x.safetensors", rc=2)
    if "different corpus" not in r.stderr or "p0.safetensors and t0.safetensors" not in r.stderr:
        failures.append("partials of two corpora: " + r.stderr)
    run("stats", *M, "--corpus", "c.txt", "--shard", "1/4", "--top", "5", "-o", "k5.safetensors")
    r = run("stats", "merge", "p0.safetensors", "k5.safetensors", "-o", "x.safetensors", rc=2)
    if "different exemplar counts (--top): 32 and 5" not in r.stderr:
        failures.append("partials of another --top: " + r.stderr)
    r = run("stats", "merge", "p0.safetensors", "p3.safetensors", "-o", "x.safetensors")
    if "missing lines 61-180" not in r.stderr:
        failures.append("missing ranges not reported: " + r.stderr)
    # `attnscope view FILE` / `attnscope FILE` on a statistics file that is cut short: exit 2 naming it
    data = open(path("p0.safetensors"), "rb").read()
    open(path("cut.safetensors"), "wb").write(data[:len(data) // 2])
    for args in (("view", "cut.safetensors"), ("cut.safetensors",)):
        r = run(*args, rc=2)
        if "cut.safetensors" not in r.stderr:
            failures.append(f"attnscope {' '.join(args)} on a cut statistics file: " + r.stderr)
    r = run("stats", "--from", "c.txt", rc=2)
    if "c.txt" not in r.stderr:
        failures.append("stats --from a text file: " + r.stderr)
    # --from equals --corpus
    run("stats", "--from", "m1.safetensors", "--format", "json", "-o", "from.json")
    ref, got = json.load(open(path("ref.json"))), json.load(open(path("from.json")))
    for key in ("sentences", "tokens", "layers", "heads_per_layer", "model"):
        if ref[key] != got[key]:
            failures.append(f"--from {key}: {got[key]} != {ref[key]}")
    worst = 0.0
    for a, b in zip(ref["heads"], got["heads"]):
        for k, v in a.items():
            if isinstance(v, float):
                d = abs(v - b[k]) / max(abs(v), 1e-300) if v else abs(b[k])
                worst = max(worst, d)
                if d > 1e-9 and abs(v - b[k]) > 1e-15:
                    failures.append(f"layer {a['layer']} head {a['head']} {k}: {b[k]!r} != {v!r}")
            elif v != b[k]:
                failures.append(f"layer {a['layer']} head {a['head']} {k}: {b[k]!r} != {v!r}")
    print(f"--from vs --corpus: {ref['sentences']} sentences, largest relative difference {worst:.2e}")
    # every head's corpus label with its evidence and figure (json and csv)
    for hd in got["heads"]:
        if not hd.get("corpus_label") or not hd.get("label_evidence") or "label_figure" not in hd or \
                len(hd.get("offset_weights", [])) != 17:
            failures.append(f"--from json without a label's evidence: {hd}")
            break
    csv_rows = run("stats", "--from", "m1.safetensors", "--format", "csv").stdout.splitlines()
    if not csv_rows[0].endswith(",corpus_label,label_evidence,label_figure") or len(csv_rows) != 1 + len(got["heads"]):
        failures.append("--from csv header: " + csv_rows[0])
    for row, hd in zip(csv_rows[1:], got["heads"]):
        if f'"{hd["corpus_label"]}","{hd["label_evidence"]}",' not in row:
            failures.append(f"--from csv row {row} lacks {hd['corpus_label']} / {hd['label_evidence']}")
            break
    # a partial of before the per-offset sums: --from and examples say so, a merge with a newer
    # partial refuses naming both, two older ones merge
    without_offsets("p0.safetensors", "old0.safetensors")
    without_offsets("p1.safetensors", "old1.safetensors")
    r = run("stats", "--from", "old0.safetensors", "--format", "json")
    if "old0.safetensors has no per-offset sums" not in r.stderr:
        failures.append("--from an old partial: " + r.stderr)
    old = json.loads(r.stdout)
    if "offset_weights" in old["heads"][0] or "positional labels not tested" not in old["heads"][0]["label_evidence"]:
        failures.append(f"an old partial's evidence: {old['heads'][0]}")
    r = run("examples", "--from", "old0.safetensors", "--layer", "0", "--head", "0", "--format", "json")
    if "no per-offset sums in this partial" not in json.loads(r.stdout)["evidence"]:
        failures.append("examples of an old partial: " + r.stdout[:300])
    r = run("stats", "merge", "p1.safetensors", "old0.safetensors", "-o", "x.safetensors", rc=2)
    if "p1.safetensors and old0.safetensors" not in r.stderr or "no per-offset sums" not in r.stderr:
        failures.append("merging an old partial with a new one: " + r.stderr)
    run("stats", "merge", "old1.safetensors", "old0.safetensors", "-o", "old01.safetensors")
    run("stats", "merge", "p1.safetensors", "p0.safetensors", "-o", "new01.safetensors")
    without_offsets("new01.safetensors", "new01-old.safetensors")
    same_bytes("old01.safetensors", "new01-old.safetensors", "two old partials merged")
    # resume after a kill at a random line
    seed = int(os.environ.get("ATN_TEST_SEED", random.randrange(1 << 30)))
    kill_at = random.Random(seed).randint(62, 118)
    print(f"killing shard 1/4 (lines 61-120) at line {kill_at} (ATN_TEST_SEED={seed})")
    args = ("stats", *M, "--corpus", "c.txt", "--shard", "1/4", "--checkpoint-every", "7", "-o", "r1.safetensors")
    r = run(*args, rc=None, extra_env={"ATTNSCOPE_TEST_KILL_AT_LINE": str(kill_at)})
    if r.returncode != -9:
        failures.append(f"the killed run ended with {r.returncode}, not SIGKILL")
    r = run(*args, "--resume")
    if kill_at > 67 and "resuming shard 1/4 after line" not in r.stderr:
        failures.append("no resume: " + r.stderr)
    same_bytes("p1.safetensors", "r1.safetensors", "resume after a kill")
    r = run("stats", *M, "--corpus", "c.txt", "--shard", "2/4", "-o", "p0.safetensors", "--resume", rc=2)
    if "cannot resume from p0.safetensors: it covers lines 1-60, not a start of shard 2/4" not in r.stderr:
        failures.append("resume from another shard's file: " + r.stderr)

elif part == "lists":
    # --corpus @LIST: the files' lines numbered as one corpus; shards split that sequence
    make_corpus("a.txt", 50, 3)
    open(path("empty.txt"), "w").close()
    os.mkdir(path("sub"))
    make_corpus("sub/c.txt", 70, 4)
    with open(path("sub/c.txt"), "rb+") as f:   # a last line without its newline
        f.seek(-1, os.SEEK_END)
        f.truncate()
    with open(path("list.txt"), "w") as f:
        f.write("a.txt\n# a comment\n\nempty.txt\nsub/c.txt\n")
    with open(path("cat.txt"), "wb") as f:
        for n in ("a.txt", "empty.txt", "sub/c.txt"):
            f.write(open(path(n), "rb").read())
    run("stats", *M, "--corpus", "@list.txt", "--top", "6", "-o", "whole.safetensors")
    for i in range(5):   # 24 lines each: shards 1 and 2 cross from a.txt into sub/c.txt
        run("stats", *M, "--corpus", "@list.txt", "--top", "6", "--shard", f"{i}/5", "--checkpoint-every", "7",
            "-o", f"l{i}.safetensors")
    run("stats", "merge", *[f"l{i}.safetensors" for i in (3, 1, 4, 0, 2)], "-o", "merged.safetensors")
    same_bytes("whole.safetensors", "merged.safetensors", "shards of a list")
    # the same lines as one file: the same numbers and the same exemplars (global line numbers)
    run("stats", *M, "--corpus", "cat.txt", "--top", "6", "-o", "cat.safetensors")
    a_json = json.loads(run("stats", "--from", "whole.safetensors", "--format", "json").stdout)
    c_json = json.loads(run("stats", "--from", "cat.safetensors", "--format", "json").stdout)
    want = sum(1 for line in open(path("cat.txt"), encoding="utf-8").read().split("\n") if line.strip())
    if a_json["sentences"] != want or c_json["sentences"] != want:
        failures.append(f"sentences: {a_json['sentences']} (list), {c_json['sentences']} (one file), not {want}")
    if a_json["heads"] != c_json["heads"]:
        failures.append("a list's statistics differ from its concatenation's")
    for l, h in ((0, 0), (3, 15), (2, 7)):
        ea = json.loads(run("examples", "--from", "whole.safetensors", "--layer", str(l), "--head", str(h),
                            "--format", "json").stdout)["exemplars"]
        ec = json.loads(run("examples", "--from", "cat.safetensors", "--layer", str(l), "--head", str(h),
                            "--format", "json").stdout)["exemplars"]
        if ea != ec:
            failures.append(f"layer {l} head {h}: a list's exemplars {ea} != the concatenation's {ec}")
    # examples --corpus @LIST: each exemplar's sentence, the global line of the concatenation, with
    # the query and key marked at their byte spans
    cat_lines = open(path("cat.txt"), encoding="utf-8").read().split("\n")
    ex = json.loads(run("examples", "--from", "whole.safetensors", "--layer", "1", "--head", "3", "--corpus",
                        "@list.txt", "--format", "json").stdout)["exemplars"]
    lines_seen = set()
    for e in ex:
        want = cat_lines[e["line"] - 1]
        lines_seen.add(e["line"])
        line_b = want.encode()
        qs, qe = e["query_span"]
        ks, ke = e["key_span"]
        if e.get("sentence") != want:
            failures.append(f"examples @list.txt line {e['line']}: {e.get('sentence')!r} != {want!r}")
        elif f"**{line_b[qs:qe].decode()}**" not in e.get("sentence_marked", "") or \
                (not (qs < ke and ks < qe) and f"`{line_b[ks:ke].decode()}`" not in e["sentence_marked"]):
            failures.append(f"examples @list.txt: query/key not marked in {e.get('sentence_marked')!r}")
    md = run("examples", "--from", "whole.safetensors", "--layer", "1", "--head", "3", "--corpus", "@list.txt").stdout
    if ex and ex[0]["sentence_marked"] not in md:
        failures.append("examples @list.txt markdown lacks the marked sentence: " + md[:400])
    if not any(n > 50 for n in lines_seen):
        print(f"note: the exemplars' lines {sorted(lines_seen)} are all in a.txt")
    # --from @LIST merges partials in memory: what stats merge gives
    with open(path("parts.txt"), "w") as f:
        f.write("".join(f"l{i}.safetensors\n" for i in (4, 2, 0, 3, 1)))
    if json.loads(run("stats", "--from", "@parts.txt", "--format", "json").stdout) != a_json:
        failures.append("stats --from @parts.txt differs from the merged file")
    # refusals
    run("stats", *M, "--corpus", "cat.txt", "--top", "6", "--shard", "0/5", "-o", "cat0.safetensors")
    r = run("stats", "merge", "l4.safetensors", "cat0.safetensors", "-o", "x.safetensors", rc=2)
    if "different corpus" not in r.stderr:
        failures.append("a list's partial merged with a file's: " + r.stderr)
    with open(path("bad.txt"), "w") as f:
        f.write("a.txt\nnone.txt\n")
    r = run("stats", *M, "--corpus", "@bad.txt", "-o", "x.safetensors", rc=2)
    if "none.txt" not in r.stderr or "bad.txt:2" not in r.stderr:
        failures.append("a list naming a missing file: " + r.stderr)
    with open(path("badparts.txt"), "w") as f:
        f.write("l4.safetensors\ncat0.safetensors\n")
    r = run("stats", "--from", "@badparts.txt", rc=2)
    if "l4.safetensors and cat0.safetensors" not in r.stderr or "different corpus" not in r.stderr:
        failures.append("--from @LIST of two corpora: " + r.stderr)
    print(f"a list of 3 files ({a_json['sentences']} sentences): 5 shards = one process = the concatenation")

elif part == "big":
    # the check at scale (opt-in: `make test-shards-big`, ~30 s): a 10,000-line corpus in
    # 7 shards (checkpoints every 500 lines) merged = one process, bytes
    make_corpus("big.txt", 10000, 10)
    run("stats", *M, "--corpus", "big.txt", "-o", "whole.safetensors")
    for i in range(7):
        run("stats", *M, "--corpus", "big.txt", "--shard", f"{i}/7", "--checkpoint-every", "500",
            "-o", f"b{i}.safetensors")
    run("stats", "merge", *[f"b{i}.safetensors" for i in (6, 2, 4, 0, 5, 1, 3)], "-o", "merged.safetensors")
    same_bytes("whole.safetensors", "merged.safetensors", "10,000 lines in 7 shards")
    print("10,000 lines: 7 shards merged = one process")

elif part == "parallel":
    if not shutil.which("parallel"):
        print("SKIP: GNU parallel is not installed (apt-get install parallel)")
        sys.exit(77)
    run("stats", *M, "--corpus", "c.txt", "-o", "whole.safetensors")
    # docs/cluster.md's one-machine recipe
    r = subprocess.run(["parallel", "--will-cite", "--halt", "now,fail=1", "-j", "3", exe, "stats", "--model", "demo",
                        "--corpus", "c.txt", "--shard", "{}/6", "-o", "part-{}.safetensors", ":::", *map(str, range(6))],
                       capture_output=True, text=True, env=env, cwd=tmp)
    if r.returncode != 0:
        sys.exit("parallel failed:\n" + r.stderr)
    run("stats", "merge", *[f"part-{i}.safetensors" for i in range(6)], "-o", "all.safetensors")
    same_bytes("whole.safetensors", "all.safetensors", "GNU parallel shards")

elif part == "examples":
    # a short corpus: one `attnscope run` per line for the brute force
    make_corpus("e.txt", 36, 7)
    K = 6
    run("stats", *M, "--corpus", "e.txt", "--shard", "0/2", "--top", str(K), "-o", "e0.safetensors")
    run("stats", *M, "--corpus", "e.txt", "--shard", "1/2", "--top", str(K), "-o", "e1.safetensors")
    run("stats", "merge", "e1.safetensors", "e0.safetensors", "-o", "e.safetensors")
    cands = {}   # (layer, head) -> [(weight, line, query, key, qtext, ktext)]
    special = {"[CLS]", "[SEP]", "[PAD]", "[MASK]"}
    runs = []   # (line, tokens, attention) of each non-empty line
    for no, line in enumerate(open(path("e.txt"), encoding="utf-8").read().split("\n")[:-1], 1):
        if not line.strip():
            continue
        run("run", *M, "--text", line, "-o", "one.json")
        d = json.load(open(path("one.json")))
        toks, att = d["tokens"], d["attentions"]
        runs.append((no, toks, att))
        for l, layer in enumerate(att):
            for h, head in enumerate(layer):
                for q, row in enumerate(head):
                    best = None
                    for k, w in enumerate(row):
                        if toks[k] not in special and (best is None or w > row[best]):
                            best = k
                    if best is not None:
                        cands.setdefault((l, h), []).append((-row[best], no, q, best, toks[q], toks[best]))
    # role filters: word queries, special keys; recomputed from the same runs
    run("stats", *M, "--corpus", "e.txt", "--shard", "0/2", "--top", str(K), "--query-role", "word", "--key-role",
        "special", "-o", "r0.safetensors")
    run("stats", *M, "--corpus", "e.txt", "--shard", "1/2", "--top", str(K), "--query-role", "word", "--key-role",
        "special", "-o", "r1.safetensors")
    run("stats", "merge", "r0.safetensors", "r1.safetensors", "-o", "r.safetensors")
    raw = open(path("r.safetensors"), "rb").read()
    meta = json.loads(raw[8:8 + int.from_bytes(raw[:8], "little")])["__metadata__"]
    if meta.get("query_role") != "word" or meta.get("key_role") != "special":
        failures.append(f"the role filters are not in the provenance: {meta}")
    r = run("stats", "merge", "e0.safetensors", "r1.safetensors", "-o", "x.safetensors", rc=2)
    if "e0.safetensors and r1.safetensors" not in r.stderr or "query role filter" not in r.stderr:
        failures.append("partials of other role filters merged: " + r.stderr)
    r = run("stats", *M, "--corpus", "e.txt", "--query-role", "verb", "-o", "x.safetensors", rc=2)
    if "--query-role" not in r.stderr or "verb" not in r.stderr:
        failures.append("an unknown role: " + r.stderr)

    def is_word(t):
        return t not in special and t != "[UNK]"
    rcands, cls_sum, cls_n = {}, {}, 0
    for no, toks, att in runs:
        words = [q for q in range(len(toks)) if is_word(toks[q])]
        if not words:
            continue
        cls_n += 1
        for l, layer in enumerate(att):
            for h, head in enumerate(layer):
                # the mean over the sentence's word rows of the weight on [CLS]
                cls_sum[(l, h)] = cls_sum.get((l, h), 0.0) + sum(
                    sum(w for k, w in enumerate(head[q]) if toks[k] == "[CLS]") for q in words) / len(words)
                for q in words:
                    row, best = head[q], None
                    for k, w in enumerate(row):
                        if toks[k] in special and (best is None or w > row[best]):
                            best = k
                    if best is not None:
                        rcands.setdefault((l, h), []).append((-row[best], no, q, best, toks[q], toks[best]))
    got_stats = json.loads(run("stats", "--from", "r.safetensors", "--format", "json").stdout)
    if got_stats["sentences"] != cls_n:
        failures.append(f"role-filtered sentences {got_stats['sentences']} != {cls_n}")
    worst = 0.0
    for hd in got_stats["heads"]:
        want = cls_sum[(hd["layer"], hd["head"])] / cls_n
        worst = max(worst, abs(hd["cls"] - want))
    if worst > 1e-6:
        failures.append(f"role-filtered → [CLS] means differ from the brute force by {worst:.2e}")
    for (l, h), cs in sorted(rcands.items()):
        want = sorted(cs)[:K]
        r = run("examples", "--from", "r.safetensors", "--layer", str(l), "--head", str(h), "--format", "json")
        got = json.loads(r.stdout)["exemplars"]
        got_t = [(-e["weight"], e["line"], e["query"], e["key"], e["query_text"], e["key_text"]) for e in got]
        if got_t != want:
            failures.append(f"word -> special, layer {l} head {h}: {got_t} != brute force {want}")
    print(f"role filters (word queries, special keys): {len(rcands)} heads' exemplars and → [CLS] means "
          f"(largest difference {worst:.1e}) equal the brute force")
    # the per-offset sums against the brute force: the mean weight at key - query = d over the
    # rows that have a token there (-8..+8), for every head
    off = json.loads(run("stats", "--from", "e.safetensors", "--format", "json").stdout)
    worst = 0.0
    for hd in off["heads"]:
        l, h = hd["layer"], hd["head"]
        for i, d in enumerate(range(-8, 9)):
            tot, rows = 0.0, 0
            for no, toks, att in runs:
                head = att[l][h]
                for q in range(len(toks)):
                    if 0 <= q + d < len(toks):
                        tot += head[q][q + d]
                        rows += 1
            want = tot / rows if rows else 0.0
            worst = max(worst, abs(hd["offset_weights"][i] - want))
    if worst > 1e-6:
        failures.append(f"per-offset weights differ from the brute force by {worst:.2e}")
    print(f"per-offset weights of {len(off['heads'])} heads x 17 offsets equal the brute force (within {worst:.1e})")
    checked = 0
    for (l, h), cs in sorted(cands.items()):
        want = sorted(cs)[:K]
        r = run("examples", "--from", "e.safetensors", "--layer", str(l), "--head", str(h), "--format", "json")
        got = json.loads(r.stdout)["exemplars"]
        got_t = [(-e["weight"], e["line"], e["query"], e["key"], e["query_text"], e["key_text"]) for e in got]
        if got_t != want:
            failures.append(f"layer {l} head {h}: exemplars {got_t} != brute force {want}")
        checked += 1
    # the filter and the sentence view
    r = run("examples", "--from", "e.safetensors", "--layer", "0", "--head", "0", "--corpus", "e.txt", "--limit", "2")
    if "**" not in r.stdout or "line " not in r.stdout:
        failures.append("markdown: " + r.stdout)
    want_key = sorted(cands[(0, 0)])[0][5]
    r = run("examples", "--from", "e.safetensors", "--layer", "0", "--head", "0", "--key", want_key, "--format", "json")
    if any(e["key_text"] != want_key for e in json.loads(r.stdout)["exemplars"]) or not json.loads(r.stdout)["exemplars"]:
        failures.append("--key filter: " + r.stdout)
    r = run("examples", "--from", "e.safetensors", "--layer", "9", "--head", "0", rc=2)
    if "layers 0-3" not in r.stderr:
        failures.append("a layer out of range: " + r.stderr)
    print(f"{checked} heads' exemplars equal the brute force")

shutil.rmtree(tmp)
for f in failures:
    print("FAIL:", f)
print("ok" if not failures else f"{len(failures)} failures")
sys.exit(1 if failures else 0)
