#!/usr/bin/env python3
"""`attnscope download` against the local fake Hub (tests/hub/fake_hub.py): the cache it
writes is compared entry by entry with the layout huggingface_hub writes (blob names from
the content: git blob sha1, sha256 for LFS; relative symlinks; refs without a newline), and
the faults: a repository or revision that does not exist, a gated model (no token, a wrong
token, HF_TOKEN, the saved token file; the token never goes to the CDN), a dropped
connection (resumed with Range), Ctrl-C (exit 130, the partial kept, resumed next time), a
corrupt LFS file (deleted, never linked), no space (RLIMIT_FSIZE), offline mode, no network,
files never fetched twice, a renamed repository, sentence-transformers and sharded models.
Usage: test_download.py ATTNSCOPE NPY_DIFF SOURCE_ROOT"""
import hashlib
import json
import os
import resource
import signal
import subprocess
import sys
import time

ATN, NPYDIFF, SRC = sys.argv[1:4]
sys.dont_write_bytecode = True   # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fake_hub  # noqa: E402  (the same repositories the server serves)
import hub_harness  # noqa: E402  (the server started, the environment, run, check)

H = hub_harness.Harness(ATN, SRC, "atn-hub-test-")
T, LOG, ENDPOINT, REPOS, BASE_ENV = H.tmp, H.log, H.endpoint, H.repos, H.base_env
run, check, requests, clear_log = H.run, H.check, H.requests, H.clear_log


def is_lfs(name):
    return name.endswith(fake_hub.LFS_SUFFIXES)


def expected_tree(rid, rev, names, ref=True):
    """The entries huggingface_hub's hf_hub_download would leave for these files."""
    r = REPOS[rid][rev]
    repo = "models--" + rid.replace("/", "--")
    tree = {repo: "d", repo + "/blobs": "d", repo + "/snapshots": "d", repo + "/snapshots/" + r["sha"]: "d",
            ".locks": "d", ".locks/" + repo: "d"}
    if ref:
        tree[repo + "/refs"] = "d"
        tree[repo + "/refs/" + rev] = "f:" + r["sha"]
    for name in names:
        data = r["files"][name]
        etag = hashlib.sha256(data).hexdigest() if is_lfs(name) else fake_hub.git_sha1(data)
        tree[repo + "/blobs/" + etag] = "f:" + hashlib.sha256(data).hexdigest()
        tree[".locks/" + repo + "/" + etag + ".lock"] = "f:" + hashlib.sha256(b"").hexdigest()
        parts = name.split("/")
        for i in range(1, len(parts)):
            tree[repo + "/snapshots/" + r["sha"] + "/" + "/".join(parts[:i])] = "d"
        tree[repo + "/snapshots/" + r["sha"] + "/" + name] = "l:" + "../" * (1 + len(parts)) + "blobs/" + etag
    return tree


def actual_tree(cache):
    tree = {}
    for root, dirs, files in os.walk(cache):
        for d in dirs:
            p = os.path.join(root, d)
            rel = os.path.relpath(p, cache)
            tree[rel] = "l:" + os.readlink(p) if os.path.islink(p) else "d"
        for f in files:
            p = os.path.join(root, f)
            rel = os.path.relpath(p, cache)
            if os.path.islink(p):
                tree[rel] = "l:" + os.readlink(p)
            elif rel.endswith("/refs/main") or "/refs/" in rel:
                tree[rel] = "f:" + open(p).read()
            else:
                tree[rel] = "f:" + hashlib.sha256(open(p, "rb").read()).hexdigest()
    return tree


def same_tree(cache, want, what):
    got = actual_tree(cache)
    if got != want:
        for k in sorted(set(got) | set(want)):
            if got.get(k) != want.get(k):
                print("  %s: got %s, want %s" % (k, got.get(k), want.get(k)), file=sys.stderr)
    check(got == want, what + ": cache layout differs from huggingface_hub's")


TINY_FILES = ["config.json", "vocab.txt", "model.safetensors"]

try:
    # ---- a plain download, byte for byte; the model opens and agrees with torch
    cache = os.path.join(T, "c1")
    r = run(["download", "org/tiny"], cache)
    check(r.returncode == 0, "org/tiny: exit %d: %s" % (r.returncode, r.stderr))
    snap = os.path.join(cache, "models--org--tiny", "snapshots", REPOS["org/tiny"]["main"]["sha"])
    check(r.stdout.strip() == snap, "org/tiny: prints the snapshot folder, got %r" % r.stdout)
    same_tree(cache, expected_tree("org/tiny", "main", TINY_FILES), "org/tiny")
    reqs = requests()
    paths = [q["path"] for q in reqs]
    check(any(p.startswith("/api/models/org/tiny/revision/main") and "blobs=true" in p for p in paths),
          "model info asked with blobs=true: %s" % paths)
    check(not any("pytorch_model.bin" in p or "flax" in p or "README" in p or "onnx" in p for p in paths),
          "only the files attnscope needs are fetched: %s" % paths)
    cdn = [q for q in reqs if q["path"].startswith("/cdn/")]
    check(len(cdn) == 1 and cdn[0]["host"].startswith("localhost"), "LFS file fetched from the CDN: %s" % cdn)
    out = os.path.join(T, "a.npy")
    r = run(["run", "--model", "org/tiny", "--ids", "2,13,27,41,30,40,3", "-o", out], cache)
    check(r.returncode == 0, "run --model org/tiny: %s" % r.stderr)
    d = subprocess.run([NPYDIFF, out, os.path.join(SRC, "tests/hf/fixtures/f32-single-attn.npy"), "1e-4"],
                       capture_output=True, text=True)
    check(d.returncode == 0, "downloaded model's attention differs from torch: %s" % d.stdout)
    r = run(["models"], cache)
    check("org/tiny" in r.stdout and "main (" in r.stdout, "models lists the download: %s" % r.stdout)

    # ---- never fetched again: a second run asks only the model info
    clear_log()
    r = run(["download", "org/tiny"], cache)
    check(r.returncode == 0, "second download: %s" % r.stderr)
    paths = [q["path"] for q in requests()]
    check(len(paths) == 1 and paths[0].startswith("/api/models/"), "second download fetched files: %s" % paths)
    # a snapshot link lost but its blob there: HEAD only, no content
    os.unlink(os.path.join(snap, "model.safetensors"))
    clear_log()
    r = run(["download", "org/tiny"], cache)
    check(r.returncode == 0, "relink: %s" % r.stderr)
    reqs = requests()
    check(not any(q["method"] == "GET" and "/resolve/" in q["path"] or q["path"].startswith("/cdn/") for q in reqs),
          "an existing blob was fetched again: %s" % reqs)
    same_tree(cache, expected_tree("org/tiny", "main", TINY_FILES), "org/tiny relinked")

    # ---- a tag: refs/v1, another snapshot beside main's, shared blobs not fetched twice
    clear_log()
    r = run(["download", "org/tiny@v1"], cache)
    check(r.returncode == 0, "org/tiny@v1: %s" % r.stderr)
    want = expected_tree("org/tiny", "main", TINY_FILES)
    want.update(expected_tree("org/tiny", "v1", ["config.json", "vocab.txt", "tokenizer_config.json",
                                                 "model.safetensors"]))
    same_tree(cache, want, "org/tiny@v1")
    # by commit: no ref written
    c2 = os.path.join(T, "c2")
    sha = REPOS["org/tiny"]["v1"]["sha"]
    r = run(["download", "org/tiny@" + sha], c2)
    check(r.returncode == 0, "by commit: %s" % r.stderr)
    want = expected_tree("org/tiny", "v1", ["config.json", "vocab.txt", "tokenizer_config.json",
                                            "model.safetensors"], ref=False)
    same_tree(c2, want, "org/tiny@<commit>")

    # ---- errors: exit 2 and a message naming what happened
    for spec, pat in [("org/nothere", 'no model repository "org/nothere" on ' + ENDPOINT + " (HTTP 404)"),
                      ("org/tiny@nope", 'no revision "nope" in org/tiny'),
                      ("org/no-weights", "has no weights attnscope reads"),
                      ("not/a/model", "is not a Hugging Face model id")]:
        r = run(["download", spec], os.path.join(T, "err"))
        check(r.returncode == 2 and pat in r.stderr, "%s: exit %d, stderr %r" % (spec, r.returncode, r.stderr))
    check(not os.path.exists(os.path.join(T, "err", "models--org--nothere")), "nothing made for a 404")
    r = run(["download"], cache)
    check(r.returncode == 2 and "give one model id" in r.stderr, "no id: %r" % r.stderr)
    # network down
    r = run(["download", "org/tiny"], os.path.join(T, "down"), {"HF_ENDPOINT": "http://127.0.0.1:1"})
    check(r.returncode == 2 and "cannot reach http://127.0.0.1:1/api/models/org/tiny" in r.stderr
          and "HF_HUB_OFFLINE" in r.stderr, "network down: %r" % r.stderr)
    # offline: no request at all; the cached model is reported, a missing one refused
    clear_log()
    r = run(["download", "org/tiny"], cache, {"HF_HUB_OFFLINE": "1"})
    check(r.returncode == 0 and r.stdout.strip() == snap and "offline mode" in r.stderr, "offline cached: %r" % r.stderr)
    r = run(["download", "org/slow"], cache, {"HF_HUB_OFFLINE": "true"})
    check(r.returncode == 2 and "offline mode (HF_HUB_OFFLINE is set)" in r.stderr and "models--org--slow" in r.stderr,
          "offline missing: %r" % r.stderr)
    check(requests() == [], "offline mode made requests: %s" % requests())

    # ---- gated: 401 without a token, 403 with a wrong one, then HF_TOKEN and the token file
    gc = os.path.join(T, "gated")
    r = run(["download", "org/gated"], gc)
    check(r.returncode == 2 and "gated (HTTP 401)" in r.stderr and "HF_TOKEN" in r.stderr, "gated: %r" % r.stderr)
    r = run(["download", "org/gated"], gc, {"HF_TOKEN": "hf_wrong"})
    check(r.returncode == 2 and "gated (HTTP 403)" in r.stderr, "gated wrong token: %r" % r.stderr)
    clear_log()
    r = run(["download", "org/gated"], gc, {"HF_TOKEN": "hf_good"})
    check(r.returncode == 0, "gated with HF_TOKEN: %r" % r.stderr)
    reqs = requests()
    hub_reqs = [q for q in reqs if not q["path"].startswith("/cdn/")]
    check(all(q["auth"] == "Bearer hf_good" for q in hub_reqs), "token sent to the Hub: %s" % hub_reqs)
    check(all(q["auth"] is None for q in reqs if q["path"].startswith("/cdn/")),
          "the token went to the CDN: %s" % reqs)
    same_tree(gc, expected_tree("org/gated", "main", TINY_FILES), "org/gated")
    hf_home = os.path.join(T, "hfhome")
    os.makedirs(hf_home)
    with open(os.path.join(hf_home, "token"), "w") as f:
        f.write("hf_good\n")
    gc2 = os.path.join(T, "gated2")
    r = run(["download", "org/gated"], gc2, {"HF_HOME": hf_home})
    check(r.returncode == 0, "gated with the saved token file: %r" % r.stderr)

    # ---- a dropped connection halfway: resumed with a Range request, same bytes
    dc = os.path.join(T, "drop")
    clear_log()
    r = run(["download", "org/drop"], dc)
    check(r.returncode == 0, "dropped connection: %r" % r.stderr)
    cdn = [q for q in requests() if q["path"].startswith("/cdn/")]
    size = len(REPOS["org/drop"]["main"]["files"]["model.safetensors"])
    check(len(cdn) == 2 and cdn[0]["range"] is None and cdn[1]["range"] == "bytes=%d-" % (size // 2),
          "resume after a drop: %s" % cdn)
    same_tree(dc, expected_tree("org/drop", "main", TINY_FILES), "org/drop")

    # ---- a corrupt LFS file: deleted, reported, never linked, no ref
    cc = os.path.join(T, "corrupt")
    r = run(["download", "org/corrupt"], cc)
    check(r.returncode == 2 and "model.safetensors: checksum mismatch" in r.stderr, "corrupt: %r" % r.stderr)
    tree = actual_tree(cc)
    check(not any("model.safetensors" in k or k.endswith(".incomplete") for k in tree), "corrupt kept: %s" % tree)
    check(not any("/refs/" in k for k in tree), "ref written for a failed download: %s" % tree)
    lfs = hashlib.sha256(REPOS["org/corrupt"]["main"]["files"]["model.safetensors"]).hexdigest()
    check(not os.path.exists(os.path.join(cc, "models--org--corrupt", "blobs", lfs)), "corrupt blob placed")

    # ---- no space: the write fails (RLIMIT_FSIZE below the weights' size), nothing in the snapshot
    nc = os.path.join(T, "nospace")

    def small_files():
        resource.setrlimit(resource.RLIMIT_FSIZE, (20000, 20000))
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    r = run(["download", "org/tiny"], nc, preexec_fn=small_files)
    check(r.returncode == 2 and "cannot write" in r.stderr and "File too large" in r.stderr
          and "nothing of it is in the snapshot" in r.stderr, "no space: %r" % r.stderr)
    tree = actual_tree(nc)
    check(not any(k.endswith("/model.safetensors") for k in tree), "half-written file linked: %s" % tree)
    # and the next try, with room, finishes the same partial blob
    clear_log()
    r = run(["download", "org/tiny"], nc)
    check(r.returncode == 0, "after no space: %r" % r.stderr)
    cdn = [q for q in requests() if q["path"].startswith("/cdn/")]
    check(len(cdn) == 1 and cdn[0]["range"] is not None and cdn[0]["range"].startswith("bytes="),
          "resumed after no space: %s" % cdn)
    same_tree(nc, expected_tree("org/tiny", "main", TINY_FILES), "org/tiny after no space")

    # ---- Ctrl-C: exit 130, the partial kept as .incomplete, nothing linked; resumed next time
    sc = os.path.join(T, "slow")
    env = dict(BASE_ENV, HF_ENDPOINT=ENDPOINT, HF_HUB_CACHE=sc)
    p = subprocess.Popen([ATN, "download", "org/slow"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    blob = hashlib.sha256(REPOS["org/slow"]["main"]["files"]["model.safetensors"]).hexdigest()
    inc = os.path.join(sc, "models--org--slow", "blobs", blob + ".incomplete")
    for _ in range(400):
        if os.path.exists(inc) and os.path.getsize(inc) >= 4096:
            break
        time.sleep(0.02)
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=30)
    check(p.returncode == 130 and "interrupted" in err, "Ctrl-C: exit %d %r" % (p.returncode, err))
    check(os.path.exists(inc) and 0 < os.path.getsize(inc) < size, "Ctrl-C: partial not kept")
    part = os.path.getsize(inc) if os.path.exists(inc) else -1
    tree = actual_tree(sc)
    check(not any(k.endswith("/model.safetensors") or "/refs/" in k for k in tree), "Ctrl-C: linked: %s" % tree)
    clear_log()
    r = run(["download", "org/slow"], sc)
    check(r.returncode == 0, "after Ctrl-C: %r" % r.stderr)
    cdn = [q for q in requests() if q["path"].startswith("/cdn/")]
    check(len(cdn) == 1 and cdn[0]["range"] == "bytes=%d-" % part, "resumed after Ctrl-C: %s (part %d)" % (cdn, part))
    same_tree(sc, expected_tree("org/slow", "main", TINY_FILES), "org/slow after Ctrl-C")

    # ---- renamed repository: relative redirects followed, stored under the name asked for
    rc_ = os.path.join(T, "renamed")
    r = run(["download", "org/old-name"], rc_)
    check(r.returncode == 0, "renamed: %r" % r.stderr)
    check(os.path.isdir(os.path.join(rc_, "models--org--old-name", "snapshots", REPOS["org/tiny"]["main"]["sha"])),
          "renamed: snapshot under the asked name")

    # ---- sentence-transformers: modules.json and the Transformer folder; opens by id
    stc = os.path.join(T, "st")
    r = run(["download", "sentence-transformers/mini"], stc)
    check(r.returncode == 0, "sentence-transformers: %r" % r.stderr)
    same_tree(stc, expected_tree("sentence-transformers/mini", "main",
                                 ["modules.json", "0_Transformer/config.json", "0_Transformer/vocab.txt",
                                  "0_Transformer/model.safetensors"]), "sentence-transformers/mini")
    r = run(["run", "--model", "sentence-transformers/mini", "--ids", "2,13,27,41,30,40,3", "-o", out], stc)
    check(r.returncode == 0, "run sentence-transformers/mini: %r" % r.stderr)
    d = subprocess.run([NPYDIFF, out, os.path.join(SRC, "tests/hf/fixtures/f32-single-attn.npy"), "1e-4"],
                       capture_output=True, text=True)
    check(d.returncode == 0, "sentence-transformers attention differs from torch: %s" % d.stdout)

    # ---- sharded: the index and every shard it names
    shc = os.path.join(T, "sharded")
    r = run(["download", "org/sharded"], shc)
    check(r.returncode == 0, "sharded: %r" % r.stderr)
    same_tree(shc, expected_tree("org/sharded", "main", ["config.json", "vocab.txt", "model.safetensors.index.json",
                                                         "model-00001-of-00002.safetensors",
                                                         "model-00002-of-00002.safetensors"]), "org/sharded")
    r = run(["run", "--model", "org/sharded", "--ids", "2,13,3", "-o", out], shc)
    check(r.returncode == 0, "run org/sharded: %r" % r.stderr)
    # the Hub's JSON goes through the engine's parser (engine/core/json.c): one value per file, the
    # last of a duplicated key wins (as Python's json module, and so huggingface_hub, reads it)
    r = run(["download", "org/index-trailing"], os.path.join(T, "trailing"))
    check(r.returncode == 2 and "model.safetensors.index.json in org/index-trailing: extra data after the JSON "
          "value (byte %d)" % (len(REPOS["org/sharded"]["main"]["files"]["model.safetensors.index.json"]) + 1)
          in r.stderr, "index with trailing data: exit %d, %r" % (r.returncode, r.stderr))
    r = run(["download", "org/modules-cut"], os.path.join(T, "cut"))
    check(r.returncode == 2 and "modules.json in org/modules-cut: invalid JSON (near byte" in r.stderr,
          "cut modules.json: exit %d, %r" % (r.returncode, r.stderr))
    r = run(["download", "org/index-duplicate", "--list"], os.path.join(T, "dup"))
    check(r.returncode == 0 and "model-00001-of-00002.safetensors" in r.stdout and "gone" not in r.stdout + r.stderr,
          "index with a duplicated tensor: exit %d, %r %r" % (r.returncode, r.stdout, r.stderr))
    # pytorch weights when there are no safetensors
    r = run(["download", "org/pt-only", "--list"], os.path.join(T, "pt"))
    check(r.returncode == 0 and "pytorch_model.bin" in r.stdout and "pytorch weights" in r.stdout,
          "pt-only: %r" % r.stdout)
    # --list marks cached files
    r = run(["download", "org/tiny", "--list"], cache)
    check(r.returncode == 0 and r.stdout.count("cached") == 3, "--list cached: %r" % r.stdout)
finally:
    H.close()
H.exit("hub download")
