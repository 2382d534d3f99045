#!/bin/sh
# The attention file on the command line (docs/attention-file.md): `run -o x.safetensors`
# round-trips the attention bit for bit; every weight-free command given --attention FILE
# writes the same bytes as with --model for the same matrices; bad files and options exit 2
# naming the problem.  Usage: test-attention-file.sh ATTNSCOPE CASE [SOURCE_ROOT]
set -u
A="$1"
CASE="$2"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL ($CASE): $*" >&2; exit 1; }
expect_error() {
  code=$1; pat=$2; shift 2
  "$@" >"$T/out" 2>"$T/err"; rc=$?
  [ "$rc" = "$code" ] || fail "exit $rc, expected $code: $* ; stderr: $(cat "$T/err")"
  grep -q -- "$pat" "$T/err" || fail "stderr lacks '$pat': $(cat "$T/err")"
  grep -qi "segmentation\|abort\|sanitizer" "$T/err" && fail "crash report: $(cat "$T/err")"
  return 0
}
TEXT="The cat sat on the mat, and the dog barked."
case "$CASE" in
round-trip)
  # the floats of run -o x.npy and of run -o x.safetensors are the same bytes
  for m in demo demo-gpt2; do
    "$A" run --model $m --text "$TEXT" -o "$T/$m.npy" 2>/dev/null || fail "run $m .npy"
    "$A" run --model $m --text "$TEXT" -o "$T/$m.safetensors" 2>/dev/null || fail "run $m .safetensors"
    python3 - "$T/$m.npy" "$T/$m.safetensors" "$m" <<'PY' || fail "$m: the attention file differs from the .npy"
import json, struct, sys
npy = open(sys.argv[1], "rb").read()
hl = struct.unpack("<H", npy[8:10])[0]
floats = npy[10 + hl:]
st = open(sys.argv[2], "rb").read()
n = struct.unpack("<Q", st[:8])[0]
h = json.loads(st[8:8 + n])
b, e = h["attn"]["data_offsets"]
assert st[8 + n + b:8 + n + e] == floats, "attention bytes differ"
meta = {k: json.loads(v) for k, v in h["__metadata__"].items()}
assert meta["format"] == "attnscope-attention/1"
assert meta["model_id"] == sys.argv[3], meta["model_id"]
assert meta["causal"] == (sys.argv[3] == "demo-gpt2"), meta["causal"]
assert len(meta["tokens"]) == h["attn"]["shape"][2]
assert (8 + n) % 8 == 0, "data area not 8-byte aligned"
PY
  done
  ;;
same-as-model)
  # each weight-free command: --attention FILE gives the bytes --model gives (demo-gpt2: the
  # figures that draw the causal mask, and the statistics)
  for m in demo demo-gpt2; do
    "$A" run --model $m --text "$TEXT" -o "$T/a.safetensors" 2>/dev/null || fail "run $m"
    figs="heatmap grid similarity headview rollout"; stats="json csv table"; sims="json csv npy"
    [ $m = demo-gpt2 ] && { figs="heatmap grid"; stats="json"; sims=""; }
    for fig in $figs; do
      "$A" export $fig --model $m --text "$TEXT" --layer 1 --head 0 -o "$T/m-$fig.svg" 2>/dev/null ||
        fail "export $fig --model $m"
      "$A" export $fig --attention "$T/a.safetensors" --layer 1 --head 0 -o "$T/f-$fig.svg" 2>"$T/err" ||
        fail "export $fig --attention ($m): $(cat "$T/err")"
      cmp -s "$T/m-$fig.svg" "$T/f-$fig.svg" || fail "export $fig ($m): --attention differs from --model"
    done
    for fmt in $stats; do
      "$A" stats --model $m --text "$TEXT" --format $fmt -o "$T/m-stats.$fmt" 2>/dev/null || fail "stats $fmt"
      "$A" stats --attention "$T/a.safetensors" --format $fmt -o "$T/f-stats.$fmt" 2>/dev/null || fail "stats $fmt file"
      cmp -s "$T/m-stats.$fmt" "$T/f-stats.$fmt" || fail "stats $fmt ($m): --attention differs from --model"
    done
    for ext in $sims; do
      "$A" similarity --model $m --text "$TEXT" -o "$T/m-sim.$ext" 2>/dev/null || fail "similarity $ext"
      "$A" similarity --attention "$T/a.safetensors" -o "$T/f-sim.$ext" 2>/dev/null || fail "similarity $ext file"
      cmp -s "$T/m-sim.$ext" "$T/f-sim.$ext" || fail "similarity $ext ($m): --attention differs from --model"
    done
    grep -q "\"model\": \"$m\"" "$T/f-stats.json" || fail "stats json does not name $m"
  done
  "$A" export heatmap --model demo --text "$TEXT" --layer 0 --head 1 -o "$T/m.png" 2>/dev/null || fail "png"
  "$A" run --model demo --text "$TEXT" -o "$T/a.safetensors" 2>/dev/null || fail "run demo"
  "$A" export heatmap --attention "$T/a.safetensors" --layer 0 --head 1 -o "$T/f.png" 2>/dev/null || fail "png"
  cmp -s "$T/m.png" "$T/f.png" || fail "export heatmap png differs"
  ;;
errors)
  "$A" run --model demo --text "$TEXT" -o "$T/a.safetensors" 2>/dev/null || fail "run"
  expect_error 2 "--text goes with --model" "$A" stats --attention "$T/a.safetensors" --text hi
  expect_error 2 "--model goes with --model" "$A" similarity --attention "$T/a.safetensors" --model demo -o "$T/s.json"
  expect_error 2 "--heads-off changes a model's run" "$A" export heatmap --attention "$T/a.safetensors" \
    --heads-off 0:1 -o "$T/h.svg"
  expect_error 2 "the trace recomputes one head from the model's weights" \
    "$A" export trace --attention "$T/a.safetensors" --layer 0 --head 0 --query 1 -o "$T/t.svg"
  expect_error 2 "unknown option --frobnicate" "$A" stats --attention "$T/a.safetensors" --frobnicate 1
  printf 'PK' > "$T/attn.pt"
  expect_error 2 "a pickle is never opened.*np.savez" "$A" stats --attention "$T/attn.pt"
  expect_error 2 "nothing.safetensors" "$A" stats --attention "$T/nothing.safetensors"
  expect_error 2 "--layer 9 is out of range" "$A" export heatmap --attention "$T/a.safetensors" --layer 9 --head 0 \
    -o "$T/h.svg"
  # attnscope view FILE (the window) checks the header first: these exit 2 before any window
  expect_error 2 "nothing.safetensors" "$A" view "$T/nothing.safetensors"
  expect_error 2 "a pickle is never opened" "$A" view "$T/attn.pt"
  expect_error 2 "a pickle is never opened" "$A" "$T/attn.pt"
  expect_error 2 "view: --model does not apply" "$A" view "$T/a.safetensors" --model demo
  expect_error 2 "view: give the attention file first" "$A" view
  expect_error 2 'not "attnscope-attention/1"' "$A" view "$3/data/models/demo/model.safetensors"
  # a weights file is not an attention file
  expect_error 2 'metadata "format" is "pt", not "attnscope-attention/1" (a model' "$A" stats --attention "$3/data/models/demo/model.safetensors"
  # NaN and negative values refused by tensor, layer, head, query and key; rows far from 1 warned
  python3 - "$T" <<'PY' || fail "could not write the bad files"
import json, struct, sys
def save(path, rows):
    data = struct.pack("<%df" % len(rows), *rows)
    h = {"__metadata__": {"format": json.dumps("attnscope-attention/1"), "tokens": json.dumps(["a", "b"])},
         "attn": {"dtype": "F32", "shape": [1, 1, 2, 2], "data_offsets": [0, len(data)]}}
    t = json.dumps(h).encode(); t += b" " * (-len(t) % 8)
    open(path, "wb").write(struct.pack("<Q", len(t)) + t + data)
save(sys.argv[1] + "/nan.safetensors", [1, 0, float("nan"), 1])
save(sys.argv[1] + "/neg.safetensors", [1, 0, 2, -1])
save(sys.argv[1] + "/sum.safetensors", [1, 0, 3.5, 1.5])
PY
  expect_error 2 "'attn' holds NaN at layer 0, head 0, query 1, key 0" "$A" stats --attention "$T/nan.safetensors"
  expect_error 2 "negative value -1 at layer 0, head 0, query 1, key 1" "$A" stats --attention "$T/neg.safetensors"
  expect_error 0 'warning: .*1 rows of .attn. do not sum to 1; the worst, layer 0 head 0 query 1 ("b"), sums to 5' \
    "$A" stats --attention "$T/sum.safetensors"
  ;;
numpy-writer)
  # the ≤ 30-line numpy writer of docs/attention-file.md, run as written, on the demo model's
  # attention: the statistics equal the model's own
  R="$3"
  PY=""
  for p in /usr/bin/python3 python3; do
    if "$p" -c "import numpy" 2>/dev/null; then PY="$p"; break; fi
  done
  [ -n "$PY" ] || { echo "numpy is not installed: skipped"; exit 77; }
  "$A" run --model demo --text "$TEXT" -o "$T/a.npy" 2>/dev/null || fail "run npy"
  "$A" run --model demo --text "$TEXT" -o "$T/a.json" 2>/dev/null || fail "run json"
  sed -n '/^<!-- numpy-writer -->$/,/^<!-- end -->$/p' "$R/docs/attention-file.md" | sed '1,2d;$d' | sed '$d' \
    > "$T/writer.py"
  [ "$(wc -l < "$T/writer.py")" -le 30 ] || fail "the writer in the docs is longer than 30 lines"
  cat >> "$T/writer.py" <<'PY'
import sys
a = np.load(sys.argv[1])
tokens = json.load(open(sys.argv[2]))["tokens"]
save_attention(sys.argv[3], a, tokens, model_id="demo", source="custom")
PY
  "$PY" "$T/writer.py" "$T/a.npy" "$T/a.json" "$T/w.safetensors" || fail "the docs' writer failed"
  "$A" stats --model demo --text "$TEXT" --format json -o "$T/m.json" 2>/dev/null || fail "stats model"
  "$A" stats --attention "$T/w.safetensors" --format json -o "$T/f.json" 2>"$T/err" || fail "stats file: $(cat "$T/err")"
  cmp -s "$T/m.json" "$T/f.json" || fail "the docs' writer's file gives other statistics than the model"
  # the writer's list of layers: attn.L0, attn.L1, ... (the same statistics), and layers of
  # different head counts (layer 1 keeps 2 of its heads: those 2 absent, the rest the model's)
  cat >> "$T/writer.py" <<'PY'
save_attention(sys.argv[4], list(a), tokens, model_id="demo", source="custom")
save_attention(sys.argv[5], [a[0], a[1][:2]] + list(a[2:]), tokens, model_id="demo", source="custom")
PY
  "$PY" "$T/writer.py" "$T/a.npy" "$T/a.json" "$T/w2.safetensors" "$T/l.safetensors" "$T/p.safetensors" ||
    fail "the docs' writer failed on a list of layers"
  grep -q '"attn.L1"' "$T/l.safetensors" || fail "the list was not written as attn.L{l}"
  "$A" stats --attention "$T/l.safetensors" --format json -o "$T/l.json" 2>"$T/err" || fail "stats list: $(cat "$T/err")"
  cmp -s "$T/m.json" "$T/l.json" || fail "the writer's attn.L{l} file gives other statistics than the model"
  "$A" stats --attention "$T/p.safetensors" --format json -o "$T/p.json" 2>"$T/err" || fail "stats pruned: $(cat "$T/err")"
  "$PY" - "$T/m.json" "$T/p.json" <<'PY' || fail "the pruned layer's statistics"
import json, sys
m, p = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
H = m["heads_per_layer"]
assert p["heads_per_layer"] == H and len(p["heads"]) == len(m["heads"])
for a, b in zip(m["heads"], p["heads"]):
    if b["layer"] == 1 and b["head"] >= 2:
        assert b.get("absent") is True and b["entropy"] is None, b
    else:
        assert a == b, (a, b)
PY
  # the same layers in an .npz (attn.L0.npy, attn.L1.npy, ...): the same statistics
  "$PY" - "$T" <<'PY' || fail "npz of layers"
import json, sys, numpy as np
t = sys.argv[1]
a = np.load(t + "/a.npy")
np.savez(t + "/p.npz", **{"attn.L%d" % l: (a[l][:2] if l == 1 else a[l]) for l in range(len(a))},
         tokens=np.array(json.load(open(t + "/a.json"))["tokens"]))
PY
  "$A" stats --attention "$T/p.safetensors" --format csv -o "$T/p.csv" 2>/dev/null || fail "stats csv pruned"
  "$A" stats --attention "$T/p.npz" --format csv -o "$T/pz.csv" 2>"$T/err" || fail "stats npz pruned: $(cat "$T/err")"
  cmp -s "$T/p.csv" "$T/pz.csv" || fail "the .npz of layers gives other statistics than the .safetensors"
  # .npz with the same names, tokens as a numpy string array
  "$PY" - "$T" <<'PY' || fail "npz"
import json, sys, numpy as np
t = sys.argv[1]
np.savez(t + "/a.npz", attn=np.load(t + "/a.npy"), tokens=np.array(json.load(open(t + "/a.json"))["tokens"]))
PY
  "$A" stats --attention "$T/a.npz" --format csv -o "$T/z.csv" 2>/dev/null || fail "stats npz"
  "$A" stats --model demo --text "$TEXT" --format csv -o "$T/m.csv" 2>/dev/null || fail "stats model csv"
  cmp -s "$T/m.csv" "$T/z.csv" || fail "the .npz gives other statistics than the model"
  "$PY" -c "import numpy as np; np.savez_compressed('$T/c.npz', attn=np.load('$T/a.npy'))"
  expect_error 2 "np.savez, not np.savez_compressed" "$A" stats --attention "$T/c.npz"
  ;;
trace)
  # trace --attention FILE of a file written by run -o --qkv gives trace --model's numbers (a
  # BERT with padding and a GPT-2 demo head); an independent pure-Python softmax of the
  # file's q, k, v gives its weights, and they equal the file's attn; without q/k/v it says why
  for spec in "demo 1 0 3 --text" "demo 0 1 2 --ids" "demo-gpt2 1 2 6 --text"; do
    set -- $spec; m=$1 l=$2 h=$3 i=$4
    if [ "$5" = --ids ]; then in1=--ids; in2="101,1996,4937,2938,102,0,0"; mk="--mask 1,1,1,1,1,0,0"
    else in1=--text; in2="$TEXT"; mk=""; fi
    "$A" run --model $m $in1 "$in2" $mk -o "$T/q.safetensors" --qkv 2>/dev/null || fail "run --qkv $m"
    "$A" trace --model $m $in1 "$in2" $mk --layer $l --head $h --query $i --json >"$T/m.json" 2>"$T/err" ||
      fail "trace --model $m: $(cat "$T/err")"
    "$A" trace --attention "$T/q.safetensors" --layer $l --head $h --query $i --json >"$T/f.json" 2>"$T/err" ||
      fail "trace --attention ($m): $(cat "$T/err")"
    python3 - "$T/m.json" "$T/f.json" "$T/q.safetensors" $l $h $i <<'PY' || fail "$m L$l H$h q$i: the traces differ"
import json, math, struct, sys
m, f = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
l, h, i = map(int, sys.argv[4:7])
for key in ["tokens", "q", "keys", "scores", "scale", "scaled", "mask", "max", "exps", "sum", "weights",
            "values", "output"]:
    assert m[key] == f[key], (key, m[key], f[key])
assert "projected" in m and "projected" not in f
# the other heads' outputs come from the file's attention and v: close to the run's ctx
assert max(abs(a - b) for a, b in zip(m["concat"], f["concat"])) < 1e-5
# an independent recomputation from the file's bytes
st = open(sys.argv[3], "rb").read()
hl = struct.unpack("<Q", st[:8])[0]
hd = json.loads(st[8:8 + hl])
def tensor(name):
    b, e = hd[name]["data_offsets"]
    return hd[name]["shape"], struct.unpack("<%df" % ((e - b) // 4), st[8 + hl + b:8 + hl + e])
(L, H, n, d), q = tensor("q")
_, k = tensor("k")
_, a = tensor("attn")
_, mask = [None, None] if "mask" not in hd else (None, struct.unpack("<%di" % n, st[8 + hl + hd["mask"]["data_offsets"][0]:8 + hl + hd["mask"]["data_offsets"][1]]))
meta = {key: json.loads(v) for key, v in hd["__metadata__"].items()}
scale = meta["scale"]
assert scale == 1 / math.sqrt(d), scale
qi = q[((l * H + h) * n + i) * d:][:d]
s = []
for j in range(n):
    kj = k[((l * H + h) * n + j) * d:][:d]
    hidden = (mask and not mask[j]) or (meta["causal"] and j > i)
    s.append(-math.inf if hidden else sum(x * y for x, y in zip(qi, kj)) * scale)
top = max(s)
e = [math.exp(x - top) for x in s]
w = [x / sum(e) for x in e]
row = a[((l * H + h) * n + i) * n:][:n]
assert max(abs(x - y) for x, y in zip(w, f["weights"])) < 1e-7, (w, f["weights"])
assert max(abs(x - y) for x, y in zip(w, row)) < 1e-6, (w, row)
assert f["max_abs_diff"] < 1e-6
print("%s: %d weights equal, max |w - attn| %.2g" % (sys.argv[3], n, f["max_abs_diff"]))
PY
  done
  "$A" trace --attention "$T/q.safetensors" --layer 1 --head 2 --query 6 >"$T/t.txt" || fail "trace text"
  grep -q "Trace of attention file \"demo-gpt2\"" "$T/t.txt" || fail "the text does not name the file's model"
  grep -q "needs the model's W_O" "$T/t.txt" || fail "the text does not say why step 10 is off"
  "$A" run --model demo --text "$TEXT" -o "$T/n.safetensors" 2>/dev/null || fail "run"
  expect_error 2 "holds no q, k, v: the trace recomputes" "$A" trace --attention "$T/n.safetensors" --layer 0 \
    --head 0 --query 0
  expect_error 2 "head 99 out of range: the file has heads 0..3" "$A" trace --attention "$T/q.safetensors" \
    --layer 0 --head 99 --query 0
  expect_error 2 "goes with -o OUT.safetensors" "$A" run --model demo --text "$TEXT" -o "$T/x.npy" --qkv
  ;;
encdec)
  # an encoder-decoder's run (T5, BART fixtures from tests/hf/gen_encdec.py) as an attention
  # file: encoder, decoder and cross byte for byte the run's .npz arrays, query_tokens (the
  # decoder's) and key_tokens (the source's), target_ids; read back, stats and export heatmap
  # give --model's bytes (the encoder's, as a run's capture)
  SRC="${3:?source root}"
  for m in t5-v1-f32 bart-f32; do
    M="$SRC/tests/hf/models/$m"; S="The house is wonderful."; G="Das Haus ist"
    "$A" run --model "$M" --text "$S" --target "$G" -o "$T/e.safetensors" 2>"$T/err" || fail "run $m: $(cat "$T/err")"
    "$A" run --model "$M" --text "$S" --target "$G" -o "$T/e.npz" 2>/dev/null || fail "run $m .npz"
    "$A" run --model "$M" --text "$S" --target "$G" -o "$T/e.json" 2>/dev/null || fail "run $m .json"
    python3 - "$T/e.safetensors" "$T/e.npz" "$T/e.json" <<'PY' || fail "$m: the file's stacks differ from the run's"
import json, struct, sys, zipfile
st = open(sys.argv[1], "rb").read()
hl = struct.unpack("<Q", st[:8])[0]
h = json.loads(st[8:8 + hl])
z = zipfile.ZipFile(sys.argv[2])
js = json.load(open(sys.argv[3]))
assert "attn" not in h
for name in ["encoder", "decoder", "cross"]:
    b, e = h[name]["data_offsets"]
    npy = z.read(name + ".npy")
    assert npy[10 + struct.unpack("<H", npy[8:10])[0]:] == st[8 + hl + b:8 + hl + e], name
    assert h[name]["shape"] == js[name]["shape"], name
meta = {k: json.loads(v) for k, v in h["__metadata__"].items()}
L, H, t, n = h["cross"]["shape"]
assert len(meta["query_tokens"]) == t and len(meta["key_tokens"]) == n == len(meta["tokens"])
assert meta["key_tokens"] == meta["tokens"]
b, e = h["target_ids"]["data_offsets"]
assert list(struct.unpack("<%di" % t, st[8 + hl + b:8 + hl + e])) == js["target_ids"]
PY
    "$A" stats --model "$M" --text "$S" --format json >"$T/sm.json" 2>/dev/null || fail "stats --model $m"
    "$A" stats --attention "$T/e.safetensors" --format json >"$T/sf.json" 2>"$T/err" || fail "stats --attention: $(cat "$T/err")"
    cmp -s "$T/sm.json" "$T/sf.json" || fail "$m: stats --attention differs from --model"
    # the figure too: T5's SentencePiece tokens ("\u2581The") read as "␣The" without the model
    "$A" export heatmap --model "$M" --text "$S" --layer 1 --head 2 -o "$T/m.svg" 2>/dev/null || fail "export --model $m"
    "$A" export heatmap --attention "$T/e.safetensors" --layer 1 --head 2 -o "$T/f.svg" 2>"$T/err" ||
      fail "export --attention ($m): $(cat "$T/err")"
    cmp -s "$T/m.svg" "$T/f.svg" || fail "$m: export heatmap --attention differs from --model"
    # a cross head: the target's labels from the file's query_tokens, read as the model's are
    "$A" export heatmap --model "$M" --text "$S" --target "$G" --stack cross --layer 1 --head 2 -o "$T/mc.svg" \
      2>/dev/null || fail "export --stack cross --model $m"
    "$A" export heatmap --attention "$T/e.safetensors" --stack cross --layer 1 --head 2 -o "$T/fc.svg" 2>"$T/err" ||
      fail "export --stack cross --attention ($m): $(cat "$T/err")"
    cmp -s "$T/mc.svg" "$T/fc.svg" || fail "$m: export --stack cross --attention differs from --model"
    expect_error 2 "holds all three stacks" "$A" run --model "$M" --text "$S" -o "$T/x.safetensors" --stack cross
    expect_error 2 "q, k, v of an encoder-decoder are not written" "$A" run --model "$M" --text "$S" \
      -o "$T/x.safetensors" --qkv
    expect_error 2 "holds no q, k, v" "$A" trace --attention "$T/e.safetensors" --layer 0 --head 0 --query 0
  done
  # bad input in the stacks and the new metadata: exit 2 naming the tensor or key
  python3 - "$T/e.safetensors" "$T/nan.safetensors" "$T/scale.safetensors" <<'PY' || fail "making the bad files"
import json, struct, sys
st = bytearray(open(sys.argv[1], "rb").read())
hl = struct.unpack("<Q", st[:8])[0]
h = json.loads(st[8:8 + hl])
b, e = h["cross"]["data_offsets"]
bad = bytearray(st)
bad[8 + hl + b + 4 * 5:8 + hl + b + 4 * 6] = struct.pack("<f", float("nan"))
open(sys.argv[2], "wb").write(bad)
h["__metadata__"]["scale"] = "-1"
text = json.dumps(h).encode()
text += b" " * (-len(text) % 8)
open(sys.argv[3], "wb").write(struct.pack("<Q", len(text)) + text + bytes(st[8 + hl:]))
PY
  expect_error 2 "'cross' holds NaN at layer 0, head 0, query 0, key 5" "$A" stats --attention "$T/nan.safetensors"
  expect_error 2 'metadata "scale" must be a number above 0' "$A" stats --attention "$T/scale.safetensors"
  ;;
lazy)
  # one head's commands (export heatmap, trace) read and check that head only: a file whose
  # head 1 of its last layer holds NaN exports layer 1 head 1 and layer 2 head 0 as the
  # clean file does, byte for byte, and refuses layer 2 head 1 naming the file, the tensor, the
  # layer and the head; a row that does not sum to 1 in layer 1 head 1 is warned only when that
  # head is read (F32); F32 in place and BF16 converted per layer
  python3 - "$T" <<'PY' || fail "could not write the files"
import json, struct, sys
L, H, n = 3, 2, 3
def bf16(x):   # float32 -> bfloat16 bits, truncated (0, 0.25, 0.5, 1 are exact)
    return struct.unpack("<I", struct.pack("<f", x))[0] >> 16
def save(path, dtype, vals):
    if dtype == "F32":
        data = struct.pack("<%df" % len(vals), *vals)
    else:
        data = struct.pack("<%dH" % len(vals), *[bf16(v) for v in vals])
    h = {"__metadata__": {"format": json.dumps("attnscope-attention/1"), "tokens": json.dumps(["a", "b", "c"]),
                          "model_id": json.dumps("lazy")},
         "attn": {"dtype": dtype, "shape": [L, H, n, n], "data_offsets": [0, len(data)]}}
    t = json.dumps(h).encode(); t += b" " * (-len(t) % 8)
    open(path, "wb").write(struct.pack("<Q", len(t)) + t + data)
rows = [[1, 0, 0], [0.5, 0.5, 0], [0.25, 0.25, 0.5]]
clean = []
for l in range(L):
    for h in range(H):
        for i in range(n):
            clean += rows[(i + l + h) % n]
bad = list(clean)
bad[((2 * H + 1) * n + 2) * n + 1] = float("nan")      # layer 2, head 1, query 2, key 1
sums = list(bad)
sums[((1 * H + 1) * n + 1) * n + 0] = 2.5               # layer 1, head 1, query 1: sums to 2.5
for dt in ("F32", "BF16"):
    save("%s/clean-%s.safetensors" % (sys.argv[1], dt), dt, clean)
    save("%s/bad-%s.safetensors" % (sys.argv[1], dt), dt, bad)
save("%s/sums-F32.safetensors" % sys.argv[1], "F32", sums)
PY
  for dt in F32 BF16; do
    for lh in "1 1" "2 0"; do
      set -- $lh
      "$A" export heatmap --attention "$T/clean-$dt.safetensors" --layer $1 --head $2 -o "$T/clean.svg" \
        2>"$T/err" || fail "$dt clean layer $1 head $2: $(cat "$T/err")"
      "$A" export heatmap --attention "$T/bad-$dt.safetensors" --layer $1 --head $2 -o "$T/bad.svg" \
        2>"$T/err" || fail "$dt: layer $1 head $2 refused though only layer 2 head 1 is bad: $(cat "$T/err")"
      cmp -s "$T/clean.svg" "$T/bad.svg" || fail "$dt layer $1 head $2: the heatmap differs from the clean file's"
    done
    expect_error 2 "bad-$dt.safetensors: 'attn' holds NaN at layer 2, head 1, query 2, key 1" \
      "$A" export heatmap --attention "$T/bad-$dt.safetensors" --layer 2 --head 1 -o "$T/x.svg"
    [ "$dt" = F32 ] || continue   # the rest reads the layers as F32 does (under 5 s in all)
    expect_error 2 "bad-$dt.safetensors: 'attn' holds NaN at layer 2, head 1, query 2, key 1" \
      "$A" stats --attention "$T/bad-$dt.safetensors"
    "$A" export heatmap --attention "$T/sums-$dt.safetensors" --layer 1 --head 0 -o "$T/x.svg" 2>"$T/err" ||
      fail "$dt sums layer 1 head 0: $(cat "$T/err")"
    grep -q "do not sum" "$T/err" && fail "$dt: head 1's rows warned though only head 0 was read"
    expect_error 0 "warning: .*1 rows of .attn. do not sum to 1; the worst, layer 1 head 1 query 1 (\"b\"), sums to 2.5" \
      "$A" export heatmap --attention "$T/sums-$dt.safetensors" --layer 1 --head 1 -o "$T/x.svg"
  done
  ;;
encdec-lazy)
  # an encoder-decoder's file read lazily, every stack a head at a time: a NaN in the encoder's
  # last layer, head 1, leaves the other encoder heads and the cross stack as the clean file
  # draws them, byte for byte, and is named ('encoder', layer, head, query, key) when that head
  # is drawn; a NaN in cross layer 0 head 0 is named only where that head is used (its heatmap,
  # stats/similarity --stack cross), while the encoder's heads, another cross head and the
  # decoder's stack (heatmap, grid, stats, similarity) are the clean file's, byte for byte
  SRC="${3:?source root}"
  M="$SRC/tests/hf/models/t5-v1-f32"
  "$A" run --model "$M" --text "The house is wonderful." --target "Das Haus ist" -o "$T/e.safetensors" 2>"$T/err" ||
    fail "run: $(cat "$T/err")"
  L=$(python3 - "$T/e.safetensors" "$T/enc-nan.safetensors" "$T/cross-nan.safetensors" <<'PY'
import json, struct, sys
st = bytearray(open(sys.argv[1], "rb").read())
hl = struct.unpack("<Q", st[:8])[0]
h = json.loads(st[8:8 + hl])
L, H, n, _ = h["encoder"]["shape"]
def put(name, index, path):
    b = h[name]["data_offsets"][0]
    bad = bytearray(st)
    bad[8 + hl + b + 4 * index:8 + hl + b + 4 * index + 4] = struct.pack("<f", float("nan"))
    open(path, "wb").write(bad)
put("encoder", (((L - 1) * H + 1) * n + 2) * n + 3, sys.argv[2])   # layer L-1, head 1, query 2, key 3
put("cross", 5, sys.argv[3])                                      # layer 0, head 0, query 0, key 5
print(L)
PY
) || fail "could not write the bad files"
  for lh in "0 0" "$((L - 1)) 0"; do
    set -- $lh
    "$A" export heatmap --attention "$T/e.safetensors" --layer $1 --head $2 -o "$T/c.svg" 2>/dev/null || fail "clean $1 $2"
    "$A" export heatmap --attention "$T/enc-nan.safetensors" --layer $1 --head $2 -o "$T/b.svg" 2>"$T/err" ||
      fail "layer $1 head $2 refused though only layer $((L - 1)) head 1 is bad: $(cat "$T/err")"
    cmp -s "$T/c.svg" "$T/b.svg" || fail "encoder layer $1 head $2 differs from the clean file's"
  done
  "$A" export heatmap --attention "$T/e.safetensors" --stack cross --layer 1 --head 2 -o "$T/c.svg" 2>/dev/null ||
    fail "clean cross"
  "$A" export heatmap --attention "$T/enc-nan.safetensors" --stack cross --layer 1 --head 2 -o "$T/b.svg" 2>"$T/err" ||
    fail "cross refused: $(cat "$T/err")"
  cmp -s "$T/c.svg" "$T/b.svg" || fail "the cross head differs from the clean file's"
  expect_error 2 "enc-nan.safetensors: 'encoder' holds NaN at layer $((L - 1)), head 1, query 2, key 3" \
    "$A" export heatmap --attention "$T/enc-nan.safetensors" --layer $((L - 1)) --head 1 -o "$T/x.svg"
  expect_error 2 "'encoder' holds NaN at layer $((L - 1)), head 1, query 2, key 3" \
    "$A" stats --attention "$T/enc-nan.safetensors"
  # the NaN in cross: one (command, file) each, clean and bad outputs byte for byte
  same() {   # same NAME ARGS...: the command on the clean file and on cross-nan writes the same file
    local name=$1; shift
    "$A" "$@" --attention "$T/e.safetensors" -o "$T/c.$name" 2>"$T/err" || fail "clean $*: $(cat "$T/err")"
    "$A" "$@" --attention "$T/cross-nan.safetensors" -o "$T/b.$name" 2>"$T/err" ||
      fail "$* refused though only cross layer 0 head 0 is bad: $(cat "$T/err")"
    cmp -s "$T/c.$name" "$T/b.$name" || fail "$* differs from the clean file's"
  }
  same svg export heatmap --layer 0 --head 0
  same svg export heatmap --stack cross --layer 1 --head 2
  same svg export heatmap --stack cross --layer 0 --head 1
  same svg export headview --stack cross --layer 1 --head 2
  same svg export heatmap --stack decoder --layer 0 --head 0
  same svg export grid --stack decoder
  same json stats --stack decoder --format json
  same json similarity --stack decoder
  same json similarity --stack cross --scope layer --layer 1
  expect_error 2 "cross-nan.safetensors: 'cross' holds NaN at layer 0, head 0, query 0, key 5" \
    "$A" export heatmap --attention "$T/cross-nan.safetensors" --stack cross --layer 0 --head 0 -o "$T/x.svg"
  expect_error 2 "cross-nan.safetensors: 'cross' holds NaN at layer 0, head 0, query 0, key 5" \
    "$A" export headview --attention "$T/cross-nan.safetensors" --stack cross --layer 0 --head 0 -o "$T/x.svg"
  expect_error 2 "cross-nan.safetensors: 'cross' holds NaN at layer 0, head 0, query 0, key 5" \
    "$A" stats --attention "$T/cross-nan.safetensors" --stack cross
  expect_error 2 "cross-nan.safetensors: 'cross' holds NaN at layer 0, head 0, query 0, key 5" \
    "$A" similarity --attention "$T/cross-nan.safetensors" --stack cross -o "$T/x.json"
  # BF16 stacks read lazily: each head converted as it is read, the same figures and numbers as an
  # F32 file holding the BF16 values
  python3 - "$T/e.safetensors" "$T/bf16.safetensors" "$T/rounded.safetensors" <<'PY' || fail "could not write BF16"
import json, struct, sys
st = open(sys.argv[1], "rb").read()
hl = struct.unpack("<Q", st[:8])[0]
h = json.loads(st[8:8 + hl])
def write(path, bf16):
    head, data = {}, b""
    for name, t in h.items():
        if name == "__metadata__":
            head[name] = t
            continue
        raw = st[8 + hl + t["data_offsets"][0]:8 + hl + t["data_offsets"][1]]
        dt = t["dtype"]
        if name in ("encoder", "decoder", "cross"):
            top = [w >> 16 for w in struct.unpack("<%dI" % (len(raw) // 4), raw)]   # truncated to BF16
            raw = struct.pack("<%dH" % len(top), *top) if bf16 else struct.pack("<%dI" % len(top), *[b << 16 for b in top])
            dt = "BF16" if bf16 else "F32"
        head[name] = {"dtype": dt, "shape": t["shape"], "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw + b"\0" * (-len(raw) % 8)
    hb = json.dumps(head).encode()
    hb += b" " * (-len(hb) % 8)
    open(path, "wb").write(struct.pack("<Q", len(hb)) + hb + data)
write(sys.argv[2], True)
write(sys.argv[3], False)
PY
  for args in "svg export heatmap --stack cross --layer 1 --head 2" "svg export heatmap --stack decoder --layer 1 --head 1" \
              "svg export grid --stack cross" "json stats --stack cross --format json"; do
    set -- $args
    ext=$1; shift
    "$A" "$@" --attention "$T/rounded.safetensors" -o "$T/r.$ext" 2>"$T/err" || fail "rounded $*: $(cat "$T/err")"
    "$A" "$@" --attention "$T/bf16.safetensors" -o "$T/h.$ext" 2>"$T/err" || fail "bf16 $*: $(cat "$T/err")"
    cmp -s "$T/r.$ext" "$T/h.$ext" || fail "BF16 $* differs from the F32 file of its values"
  done
  # a file's trace reads its q, k, v (the encoder's attn): --stack decoder/cross is refused, not ignored
  expect_error 2 "trace: --stack cross: an attention file's trace follows its q, k, v" \
    "$A" trace --attention "$T/e.safetensors" --stack cross --layer 0 --head 0 --query 0
  ;;
layer-heads)
  # one attn.L{l} per layer: with the same head count the file is the stacked file, bit for
  # bit (stats, similarity, figures); with 4 heads in layer 0 and 2 in layer 1 the capture has
  # 4 heads, layer 1's heads 2 and 3 absent: stats gives them null ("absent": true) and every
  # other head the stacked file's numbers, similarity compares the 6 heads there are with the
  # stacked file's values for them, export grid draws 2 dashed "no head" places (a file whose
  # heads 2 and 3 are zeros draws none), a head the layer lacks is refused; bad layouts exit 2
  # naming the tensor or key
  python3 - "$T" <<'PY' || fail "could not write the files"
import json, struct, sys
H, n = 4, 3
rows = [[1, 0, 0], [0.5, 0.5, 0], [0.25, 0.25, 0.5], [0, 0, 1], [0.2, 0.3, 0.5]]
def head(l, h):
    return [v for i in range(n) for v in rows[(3 * i + l + 2 * h) % len(rows)][:]]
def fix(vals):   # rows[3] and rows[4] need no fixing: every row sums to 1
    return vals
def save(path, tensors, meta=None):
    header, data = {}, b""
    for name, (shape, vals, dt) in tensors.items():
        b = struct.pack("<%d%s" % (len(vals), "f" if dt == "F32" else "i"), *vals)
        header[name] = {"dtype": dt, "shape": shape, "data_offsets": [len(data), len(data) + len(b)]}
        data += b
    m = {"format": "attnscope-attention/1", "tokens": ["a", "b", "c"], "model_id": "layers"}
    m.update(meta or {})
    header["__metadata__"] = {k: json.dumps(v) for k, v in m.items()}
    t = json.dumps(header).encode(); t += b" " * (-len(t) % 8)
    open(path, "wb").write(struct.pack("<Q", len(t)) + t + data)
d = sys.argv[1]
layer = [sum((head(l, h) for h in range(H)), []) for l in range(2)]
save(d + "/stacked.safetensors", {"attn": ([2, H, n, n], layer[0] + layer[1], "F32")})
save(d + "/perlayer.safetensors", {"attn.L0": ([H, n, n], layer[0], "F32"), "attn.L1": ([H, n, n], layer[1], "F32")})
two = layer[1][:2 * n * n]
save(d + "/differ.safetensors", {"attn.L0": ([H, n, n], layer[0], "F32"), "attn.L1": ([2, n, n], two, "F32")})
save(d + "/zeros.safetensors", {"attn": ([2, H, n, n], layer[0] + two + [0.0] * (2 * n * n), "F32")})
save(d + "/gap.safetensors", {"attn.L0": ([H, n, n], layer[0], "F32"), "attn.L2": ([2, n, n], two, "F32")})
save(d + "/beside.safetensors", {"attn": ([1, H, n, n], layer[0], "F32"), "attn.L0": ([H, n, n], layer[0], "F32")})
save(d + "/tokens.safetensors", {"attn.L0": ([H, n, n], layer[0], "F32"), "attn.L1": ([1, 2, 2], [1, 0, 0, 1], "F32")})
save(d + "/q.safetensors", {"attn.L0": ([H, n, n], layer[0], "F32"), "attn.L1": ([2, n, n], two, "F32"),
                            "q": ([2, H, n, 2], [0.0] * (2 * H * n * 2), "F32")})
save(d + "/kv.safetensors", {"attn.L0": ([H, n, n], layer[0], "F32"), "attn.L1": ([2, n, n], two, "F32")},
     {"n_kv_heads": 2})
nan = list(two); nan[n * n + 4] = float("nan")   # layer 1, head 1, query 1, key 1
save(d + "/nan.safetensors", {"attn.L0": ([H, n, n], layer[0], "F32"), "attn.L1": ([2, n, n], nan, "F32")})
PY
  # the same head count: the stacked file's bytes
  for f in stacked perlayer; do
    "$A" stats --attention "$T/$f.safetensors" --format json -o "$T/$f-stats.json" 2>"$T/err" || fail "stats $f: $(cat "$T/err")"
    "$A" similarity --attention "$T/$f.safetensors" -o "$T/$f-sim.json" 2>"$T/err" || fail "similarity $f: $(cat "$T/err")"
    "$A" similarity --attention "$T/$f.safetensors" -o "$T/$f-sim.npy" 2>"$T/err" || fail "similarity npy $f"
    for fig in grid heatmap rollout; do
      "$A" export $fig --attention "$T/$f.safetensors" --layer 1 --head 2 -o "$T/$f-$fig.svg" 2>"$T/err" ||
        fail "export $fig $f: $(cat "$T/err")"
    done
  done
  for out in stats.json sim.json sim.npy grid.svg heatmap.svg rollout.svg; do
    cmp -s "$T/stacked-$out" "$T/perlayer-$out" || fail "attn.L0, attn.L1 give another $out than attn"
  done
  # 4 heads, then 2
  "$A" stats --attention "$T/differ.safetensors" --format json -o "$T/differ-stats.json" 2>"$T/err" ||
    fail "stats differ: $(cat "$T/err")"
  "$A" stats --attention "$T/differ.safetensors" --format table -o "$T/differ-stats.txt" 2>"$T/err" ||
    fail "stats table differ: $(cat "$T/err")"
  [ "$(grep -c 'no head' "$T/differ-stats.txt")" = 2 ] || fail "the table does not say 'no head' twice: $(cat "$T/differ-stats.txt")"
  "$A" similarity --attention "$T/differ.safetensors" -o "$T/differ-sim.json" 2>"$T/err" ||
    fail "similarity differ: $(cat "$T/err")"
  python3 - "$T" <<'PY' || fail "the statistics or similarity of the 4 + 2 heads are not the stacked file's"
import json, sys
d = sys.argv[1]
full, part = json.load(open(d + "/stacked-stats.json")), json.load(open(d + "/differ-stats.json"))
assert part["layers"] == 2 and part["heads_per_layer"] == 4, part
assert len(part["heads"]) == 8
for a, b in zip(full["heads"], part["heads"]):
    if (b["layer"], b["head"]) in [(1, 2), (1, 3)]:
        assert b["absent"] is True and b["pattern"] is None, b
        assert all(b[k] is None for k in ["entropy", "entropy_norm", "cls", "sep", "punct", "self", "prev", "next",
                                          "local", "same_segment", "distance"]), b
    else:
        assert a == b, (a, b)
# hand-computed: layer 0 head 0 rows are rows[0], rows[3], rows[1] (index (3i + 0 + 0) % 5):
# self = (1 + 0 + 0) / 3; prev = (0 + 0.5) / 2 (rows with a previous token: 1, 2)
h00 = part["heads"][0]
assert abs(h00["self"] - 1 / 3) < 1e-8 and abs(h00["prev"] - 0.25) < 1e-12, h00   # %.9g
fs, ps = json.load(open(d + "/stacked-sim.json")), json.load(open(d + "/differ-sim.json"))
heads = [tuple(x) for x in ps["heads"]]
assert heads == [(0, 0), (0, 1), (0, 2), (0, 3), (1, 0), (1, 1)], heads
index = {tuple(x): i for i, x in enumerate(fs["heads"])}
for i, a in enumerate(heads):
    for j, b in enumerate(heads):
        assert ps["values"][i][j] == fs["values"][index[a]][index[b]], (a, b)
print("stats: 6 heads equal, 2 absent; similarity: 6 x 6 values equal")
PY
  "$A" export grid --attention "$T/differ.safetensors" -o "$T/differ-grid.svg" 2>"$T/err" || fail "grid: $(cat "$T/err")"
  "$A" export grid --attention "$T/zeros.safetensors" -o "$T/zeros-grid.svg" 2>"$T/err" || fail "grid zeros"
  [ "$(grep -c 'stroke-dasharray' "$T/differ-grid.svg")" = 2 ] || fail "the grid does not draw 2 dashed places"
  [ "$(grep -c 'stroke-dasharray' "$T/zeros-grid.svg")" = 0 ] || fail "zero heads are drawn as absent ones"
  "$A" export heatmap --attention "$T/differ.safetensors" --layer 1 --head 1 -o "$T/differ-h.svg" 2>"$T/err" ||
    fail "heatmap layer 1 head 1: $(cat "$T/err")"
  "$A" export heatmap --attention "$T/stacked.safetensors" --layer 1 --head 1 -o "$T/stacked-h.svg" 2>/dev/null ||
    fail "heatmap stacked"
  cmp -s "$T/differ-h.svg" "$T/stacked-h.svg" || fail "layer 1 head 1 differs from the stacked file's"
  expect_error 2 "--head 3: layer 1 has no head 3 (the attention file's layer has 2 heads, 0..1)" \
    "$A" export heatmap --attention "$T/differ.safetensors" --layer 1 --head 3 -o "$T/x.svg"
  expect_error 2 "layer 1 has no head 2" "$A" export headview --attention "$T/differ.safetensors" --layer 1 \
    --head 2 -o "$T/x.svg"
  "$A" export rollout --attention "$T/differ.safetensors" -o "$T/r.svg" 2>"$T/err" || fail "rollout: $(cat "$T/err")"
  # every head: the 6 there are, no file for an absent one
  "$A" export heatmap --attention "$T/differ.safetensors" --all-heads --format svg -o "$T/all/" 2>"$T/err" ||
    fail "--all-heads: $(cat "$T/err")"
  [ "$(ls "$T/all" | wc -l)" = 6 ] || fail "--all-heads wrote $(ls "$T/all" | wc -l) files, not 6: $(ls "$T/all")"
  # bad layouts
  expect_error 2 "'attn.L1' is missing (layers count from 0 without gaps)" "$A" stats --attention "$T/gap.safetensors"
  expect_error 2 "both 'attn' and 'attn.L0'" "$A" stats --attention "$T/beside.safetensors"
  expect_error 2 "tensor 'attn.L1' has 2 tokens, 'attn.L0' has 3" "$A" stats --attention "$T/tokens.safetensors"
  expect_error 2 "tensor 'q' is not read beside layers of different head counts" \
    "$A" stats --attention "$T/q.safetensors"
  expect_error 2 'metadata "n_kv_heads" is not read for layers of different head counts' \
    "$A" stats --attention "$T/kv.safetensors"
  expect_error 2 "'attn.L1' holds NaN at layer 1, head 1, query 1, key 1" "$A" stats --attention "$T/nan.safetensors"
  expect_error 2 "'attn.L1' holds NaN at layer 1, head 1, query 1, key 1" "$A" export heatmap --attention \
    "$T/nan.safetensors" --layer 1 --head 1 -o "$T/x.svg"
  ;;
*)
  fail "unknown case"
  ;;
esac
exit 0
