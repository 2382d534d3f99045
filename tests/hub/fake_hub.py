#!/usr/bin/env python3
"""A local stand-in for the Hugging Face Hub, serving the tests/hf/models folders the way
huggingface.co does (standard library only; CI has no network but 127.0.0.1 works).

  GET  /api/models/ID/revision/REV[?blobs=true]  {"id", "sha", "siblings": [{"rfilename",
       "size", "blobId", "lfs": {"sha256", "size", "pointerSize"}}]}; 404 with X-Error-Code
       RepoNotFound / RevisionNotFound; gated: 401 (no token) / 403 (wrong token) GatedRepo
  HEAD|GET /ID/resolve/REV/FILE  small files: 200, ETag "<git blob sha1>", X-Repo-Commit;
       LFS files (*.safetensors, *.bin, *.msgpack, *.model): 302 to the CDN on another host
       name (localhost instead of 127.0.0.1), ETag of the pointer, X-Linked-Etag "<sha256>",
       X-Linked-Size, X-Repo-Commit
  GET  /cdn/SHA256  the LFS object, with Range (206, Content-Range)

Repositories with faults: org/corrupt (the CDN flips a byte of model.safetensors),
org/drop (the first CDN answer closes the connection halfway), org/slow (the CDN sends 1 kB
every 50 ms), org/old-name (renamed: relative 307 redirects to org/tiny), org/gated,
org/index-trailing (a shard index with a second JSON value after the first),
org/modules-cut (a modules.json cut off mid-value), org/index-duplicate (weight_map names a
tensor twice: the first a shard that does not exist, the last a real one).

With --hostile, the repositories of a hostile Hub too (issue 41; test_hostile_hub.py):
org/flood (the CDN sends model.safetensors without end), org/silent (the API never answers),
org/drip (HEAD answers one byte a second), org/escape (a shard named with a terminal escape
sequence), org/gzip (config.json gzip-encoded though identity was asked for), org/empty (a
zero-byte special_tokens_map.json), org/flipped (config.json with one byte changed under
the right git blob ETag), org/bad-size (a size of 1e300 in the model info),
org/huge-sum (1100 shards of 2^53 bytes each: the sum passes 2^63), org/many-shards
(MANY_SHARDS shards, for the planner's complexity).

Every request is appended to --log as one JSON line: method, path, host, range, auth.
Usage: fake_hub.py --models DIR --port-file FILE --log FILE [--hostile]
"""
import gzip
import argparse
import hashlib
import json
import os
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LFS_SUFFIXES = (".safetensors", ".bin", ".msgpack", ".model", ".h5")
GOOD_TOKEN = "hf_good"


def git_sha1(data):
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def lfs_pointer(data):
    return ("version https://git-lfs.github.com/spec/v1\noid sha256:%s\nsize %d\n"
            % (hashlib.sha256(data).hexdigest(), len(data))).encode()


def commit_of(name):
    return hashlib.sha1(name.encode()).hexdigest()


def load(models, folder, files, prefix=""):
    out = {}
    for f in files:
        with open(os.path.join(models, folder, f), "rb") as fh:
            out[prefix + f] = fh.read()
    return out


MANY_SHARDS = 30000
ESCAPE_SHARD = "model-\x1b]52;c;ZXZpbA==\x07-\x1b[2J.safetensors"


def sharded_with(sharded, names, shard_data=None):
    """The sharded model with its index pointing at these shard names (a tensor each)."""
    index = json.loads(sharded["model.safetensors.index.json"])
    tensors = sorted(index["weight_map"])
    files = {k: v for k, v in sharded.items() if not k.startswith("model-")}
    wm = {}
    for i, name in enumerate(names):
        wm[tensors[i] if i < len(tensors) else "extra.%d" % i] = name
        files[name] = shard_data if shard_data is not None else sharded["model-00001-of-00002.safetensors"]
    files["model.safetensors.index.json"] = json.dumps({"metadata": {}, "weight_map": wm}).encode()
    return files


def hostile_repos(models, tiny, sharded):
    empty = dict(tiny)
    empty["special_tokens_map.json"] = b""
    return {
        "org/flood": {"main": dict(tiny)},
        "org/silent": {"main": dict(tiny)},
        "org/drip": {"main": dict(tiny)},
        "org/gzip": {"main": dict(tiny)},
        "org/flipped": {"main": dict(tiny)},
        "org/empty": {"main": empty},
        "org/bad-size": {"main": dict(tiny)},
        "org/escape": {"main": sharded_with(sharded, [ESCAPE_SHARD, "model-00002-of-00002.safetensors"])},
        "org/huge-sum": {"main": sharded_with(sharded, ["m-%05d.safetensors" % i for i in range(1100)], b"x")},
        "org/many-shards": {"main": sharded_with(sharded, ["m-%06d.safetensors" % i for i in range(MANY_SHARDS)],
                                                 b"x")},
    }


def build_repos(models, hostile=False):
    bert = ["config.json", "model.safetensors", "vocab.txt"]
    tiny = load(models, "f32", bert)
    tiny["README.md"] = b"# tiny\n"
    tiny["pytorch_model.bin"] = b"not used: safetensors is preferred" * 10   # must not be fetched
    tiny["flax_model.msgpack"] = b"not used either" * 10
    tiny["onnx/model.onnx"] = b"onnx"
    mlm = load(models, "mlm", ["config.json", "model.safetensors", "tokenizer_config.json", "vocab.txt"])
    st = load(models, "f32", bert, "0_Transformer/")
    st["modules.json"] = json.dumps([
        {"idx": 0, "name": "0", "path": "0_Transformer", "type": "sentence_transformers.models.Transformer"},
        {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"}]).encode()
    st["1_Pooling/config.json"] = b'{"word_embedding_dimension": 16}'
    st["README.md"] = b"# mini\n"
    sharded = load(models, "sharded", ["config.json", "model-00001-of-00002.safetensors",
                                       "model-00002-of-00002.safetensors", "model.safetensors.index.json",
                                       "vocab.txt"])
    trailing = dict(sharded)
    trailing["model.safetensors.index.json"] = sharded["model.safetensors.index.json"] + b'\n{"weight_map": {}}\n'
    cut = dict(st)
    cut["modules.json"] = st["modules.json"][:40]
    dup = dict(sharded)
    index = sharded["model.safetensors.index.json"].decode()
    first = index.index('"weight_map"')
    first = index.index("{", first) + 1
    dup["model.safetensors.index.json"] = (index[:first] + '"embeddings.word_embeddings.weight": "gone.safetensors", '
                                           + index[first:]).encode()
    pt = {"config.json": tiny["config.json"], "vocab.txt": tiny["vocab.txt"],
          "pytorch_model.bin": b"\x00" * 3000}
    repos = {
        "org/tiny": {"main": tiny, "v1": mlm},
        "org/corrupt": {"main": dict(tiny)},
        "org/drop": {"main": dict(tiny)},
        "org/slow": {"main": dict(tiny)},
        "org/gated": {"main": dict(tiny)},
        "sentence-transformers/mini": {"main": st},
        "org/sharded": {"main": sharded},
        "org/index-trailing": {"main": trailing},
        "org/modules-cut": {"main": cut},
        "org/index-duplicate": {"main": dup},
        "org/pt-only": {"main": pt},
        "org/no-weights": {"main": {"config.json": tiny["config.json"], "vocab.txt": tiny["vocab.txt"]}},
    }
    if hostile:
        repos.update(hostile_repos(models, tiny, sharded))
    out = {}
    for rid, revs in repos.items():
        out[rid] = {}
        for rev, files in revs.items():
            out[rid][rev] = {"sha": commit_of(rid + "@" + rev), "files": files}
    return out


class Hub:
    def __init__(self, models, log, hostile=False):
        self.repos = build_repos(models, hostile)
        self.log = open(log, "a", buffering=1)
        self.lock = threading.Lock()
        self.dropped = set()
        self.cdn = {}   # sha256 -> (repo, data)
        for rid, revs in self.repos.items():
            for rev in revs.values():
                for name, data in rev["files"].items():
                    if name.endswith(LFS_SUFFIXES):
                        self.cdn.setdefault((rid, hashlib.sha256(data).hexdigest()), data)

    def revision(self, rid, rev):
        revs = self.repos.get(rid)
        if revs is None:
            return None, "RepoNotFound"
        if rev in revs:
            return revs[rev], None
        for r in revs.values():
            if r["sha"] == rev:
                return r, None
        return None, "RevisionNotFound"


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"
    hub = None

    def log_message(self, fmt, *args):
        pass

    def record(self):
        with self.hub.lock:
            self.hub.log.write(json.dumps({
                "method": self.command, "path": self.path, "host": self.headers.get("Host", ""),
                "range": self.headers.get("Range"), "auth": self.headers.get("Authorization")}) + "\n")

    def send(self, code, body=b"", headers=None, head=False):
        self.send_response(code)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if not head and body:
            self.wfile.write(body)

    def error(self, code, error_code, message, head=False):
        self.send(code, json.dumps({"error": message}).encode(),
                  {"X-Error-Code": error_code, "X-Error-Message": message, "Content-Type": "application/json"},
                  head)

    def gate(self, rid, head=False):
        if rid != "org/gated":
            return True
        auth = self.headers.get("Authorization")
        if auth is None:
            self.error(401, "GatedRepo", "Access to model %s is restricted. You must be authenticated." % rid, head)
            return False
        if auth != "Bearer " + GOOD_TOKEN:
            self.error(403, "GatedRepo", "Access to model %s is restricted and you are not in the authorized "
                       "list." % rid, head)
            return False
        return True

    def do_HEAD(self):
        self.handle_any(head=True)

    def do_GET(self):
        try:
            self.handle_any(head=False)
        except (BrokenPipeError, ConnectionResetError):
            pass   # the client went away (Ctrl-C test)

    def handle_any(self, head):
        self.record()
        url = urllib.parse.urlsplit(self.path)
        parts = [urllib.parse.unquote(p) for p in url.path.split("/")[1:]]
        if parts[:2] == ["api", "models"] and "revision" in parts:
            i = parts.index("revision")
            return self.api("/".join(parts[2:i]), "/".join(parts[i + 1:]), head)
        if parts[:1] == ["cdn"] and len(parts) == 3:
            return self.cdn(parts[1], parts[2], head)
        if "resolve" in parts:
            i = parts.index("resolve")
            rid = "/".join(parts[:i])
            return self.resolve(rid, parts[i + 1], "/".join(parts[i + 2:]), head)
        self.error(404, "EntryNotFound", "no route", head)

    def api(self, rid, rev, head):
        if rid == "org/old-name":
            return self.send(307, b"", {"Location": "/api/models/org/tiny/revision/" + urllib.parse.quote(rev, "")},
                             head)
        if not self.gate(rid, head):
            return
        if rid == "org/silent":
            time.sleep(3600)   # the answer never comes (the client must stay cancellable)
            return
        r, why = self.hub.revision(rid, rev)
        if r is None:
            return self.error(404, why, "%s not found: %s@%s" % (why, rid, rev), head)
        sibs = []
        for name, data in sorted(r["files"].items()):
            s = {"rfilename": name, "size": len(data), "blobId": git_sha1(data)}
            if rid == "org/bad-size" and name == "config.json":
                s["size"] = 1e300
            if rid == "org/huge-sum" and name.startswith("m-"):
                s["lfs"] = {"sha256": "0" * 64, "size": 2 ** 53, "pointerSize": 100}
                sibs.append(s)
                continue
            if name.endswith(LFS_SUFFIXES):
                p = lfs_pointer(data)
                s["blobId"] = git_sha1(p)
                s["lfs"] = {"sha256": hashlib.sha256(data).hexdigest(), "size": len(data), "pointerSize": len(p)}
            sibs.append(s)
        body = json.dumps({"id": rid, "modelId": rid, "sha": r["sha"], "private": False,
                           "gated": "auto" if rid == "org/gated" else False, "siblings": sibs}).encode()
        self.send(200, body, {"Content-Type": "application/json"}, head)

    def resolve(self, rid, rev, name, head):
        if rid == "org/old-name":
            return self.send(307, b"", {"Location": "/org/tiny/resolve/%s/%s" % (
                urllib.parse.quote(rev, ""), urllib.parse.quote(name))}, head)
        if not self.gate(rid, head):
            return
        r, why = self.hub.revision(rid, rev)
        if r is None:
            return self.error(404, why, why, head)
        data = r["files"].get(name)
        if data is None:
            return self.error(404, "EntryNotFound", "%s not found" % name, head)
        common = {"X-Repo-Commit": r["sha"]}
        if rid == "org/drip" and head:
            # one byte of the answer a second, for ever
            try:
                for c in b"HTTP/1.0 200 OK\r\nX-Padding: " + b"x" * 100000:
                    self.wfile.write(bytes([c]))
                    self.wfile.flush()
                    time.sleep(1)
            except (BrokenPipeError, ConnectionResetError):
                pass
            self.close_connection = True
            return
        if rid == "org/flipped" and name == "config.json":
            # the right ETag and length, one byte of the body changed
            common["ETag"] = '"%s"' % git_sha1(data)
            return self.send(200, bytes([data[0] ^ 1]) + data[1:], common, head)
        if rid == "org/gzip" and name == "config.json":
            body = gzip.compress(data)
            common.update({"ETag": '"%s"' % git_sha1(data), "Content-Encoding": "gzip"})
            return self.send(200, body, common, head)
        if name.endswith(LFS_SUFFIXES):
            sha = hashlib.sha256(data).hexdigest()
            port = self.server.server_address[1]
            common.update({"ETag": '"%s"' % git_sha1(lfs_pointer(data)), "X-Linked-Etag": '"%s"' % sha,
                           "X-Linked-Size": str(len(data)),
                           "Location": "http://localhost:%d/cdn/%s/%s?X-Amz-Signature=abc" % (
                               port, urllib.parse.quote(rid, ""), sha)})
            return self.send(302, b"", common, head)
        common["ETag"] = '"%s"' % git_sha1(data)
        self.send(200, data, common, head)

    def cdn(self, rid, sha, head):
        rid = urllib.parse.unquote(rid)
        data = self.hub.cdn.get((rid, sha))
        if data is None:
            return self.send(404, b"NoSuchKey")
        if rid == "org/corrupt":
            data = bytes([data[0] ^ 1]) + data[1:]
        start = 0
        rng = self.headers.get("Range")
        if rng and rng.startswith("bytes=") and rng.endswith("-"):
            start = int(rng[6:-1])
        if start >= len(data) and rng:
            return self.send(416, b"", {"Content-Range": "bytes */%d" % len(data)}, head)
        body = data[start:]
        self.send_response(206 if rng else 200)
        if rng:
            self.send_header("Content-Range", "bytes %d-%d/%d" % (start, len(data) - 1, len(data)))
        if rid != "org/flood":
            self.send_header("Content-Length", str(len(body)))
        self.send_header("ETag", '"%s"' % sha)
        self.end_headers()
        if head:
            return
        if rid == "org/drop":
            with self.hub.lock:
                first = sha not in self.hub.dropped
                self.hub.dropped.add(sha)
            if first:
                self.wfile.write(body[:len(body) // 2])
                self.wfile.flush()
                self.close_connection = True
                return
        if rid == "org/flood":
            # never-ending: the announced size, then more, until the client hangs up
            try:
                self.wfile.write(body)
                while True:
                    self.wfile.write(b"\0" * 65536)
            except (BrokenPipeError, ConnectionResetError):
                pass
            self.close_connection = True
            return
        if rid == "org/slow":
            for i in range(0, len(body), 1024):
                self.wfile.write(body[i:i + 1024])
                self.wfile.flush()
                time.sleep(0.05)
            return
        self.wfile.write(body)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", required=True)
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--log", required=True)
    ap.add_argument("--hostile", action="store_true")
    a = ap.parse_args()
    Handler.hub = Hub(a.models, a.log, a.hostile)
    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    tmp = a.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write(str(srv.server_address[1]))
    os.rename(tmp, a.port_file)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    sys.exit(main())
