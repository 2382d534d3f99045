#!/bin/sh
# The what-if lab's rotary knobs through `attnscope run`: every layer and head's attention
# with --rope-theta, --rope-factor, --no-positions (NoPE), --sliding-on/--sliding-off equals
# the float64 reference of tests/hf/gen_whatif_rotary.py (gen_decoders.py's LlamaModel forward
# on the changed config) within 2e-6, and differs from the unchanged model's where the knob
# matters; bad values exit 2 naming the option; a model without rotary positions refuses the
# knobs by name; --rope-llama3 F equals the folder whose config.json has llama3 scaling with
# factor F.  Usage: test-whatif-rotary.sh ATTNSCOPE SOURCE_ROOT
set -u
A="$1"
ROOT="$2"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL (whatif-rotary): $*" >&2; exit 1; }
expect_error() {
  code=$1; pat=$2; shift 2
  "$@" >"$T/out" 2>"$T/err"; rc=$?
  [ "$rc" = "$code" ] || fail "exit $rc, expected $code: $* ; stderr: $(cat "$T/err")"
  grep -q -- "$pat" "$T/err" || fail "stderr lacks '$pat': $(cat "$T/err")"
  return 0
}
FIX="$ROOT/tests/hf/fixtures/whatif-rotary.json"
M="$ROOT/tests/hf/models"
# one attnscope run per case, its .npy named after the case
python3 - "$FIX" > "$T/cases" <<'PY' || fail "reading $FIX"
import json, sys
for c in json.load(open(sys.argv[1])):
    print(c["name"], c["model"], ",".join(map(str, c["ids"])), " ".join(c["args"]))
PY
while read -r name model ids args; do
  # shellcheck disable=SC2086
  "$A" run --model "$M/$model" --ids "$ids" $args -o "$T/$name.npy" 2>"$T/err" ||
    fail "$name: run --model $model $args: $(cat "$T/err")"
done < "$T/cases"
python3 - "$FIX" "$T" <<'PY' || fail "the attention differs from the reference"
import json, struct, sys
def npy(path):
    b = open(path, "rb").read()
    hl = struct.unpack("<H", b[8:10])[0]
    head = b[10:10 + hl].decode()
    shape = tuple(int(x) for x in head.split("'shape': (")[1].split(")")[0].split(",") if x.strip())
    n = 1
    for s in shape:
        n *= s
    return shape, struct.unpack("<%df" % n, b[10 + hl:10 + hl + 4 * n])
def flat(x):
    return [v for a in x for v in flat(a)] if isinstance(x, list) else [x]
cases = {c["name"]: c for c in json.load(open(sys.argv[1]))}
got = {}
for name, c in cases.items():
    shape, vals = npy("%s/%s.npy" % (sys.argv[2], name))
    ref = flat(c["attn"])
    L, H, n = len(c["attn"]), len(c["attn"][0]), len(c["ids"])
    assert shape == (L, H, n, n), (name, shape)
    diff = max(abs(a - b) for a, b in zip(vals, ref))
    print("%-20s max |attnscope - reference| %.2e" % (name, diff))
    assert diff <= 2e-6, (name, diff)
    got[name] = vals
# each knob changes the attention (a test that cannot fail is no test)
for name, base in [("llama-theta", "llama-base"), ("llama-factor", "llama-base"), ("llama-theta-factor", "llama-base"),
                   ("llama-nope", "llama-base"), ("llama-window-on", "llama-base"),
                   ("mistral-window-off", "mistral-base"), ("mistral-theta", "mistral-base")]:
    d = max(abs(a - b) for a, b in zip(got[name], got[base]))
    assert d > 1e-2, (name, "barely differs from", base, d)
PY
# bad values and combinations: exit 2, the option named
L="$M/llama-f32"
expect_error 2 "rope-theta" "$A" run --model "$L" --ids 5,6,7 --rope-theta -3 -o "$T/x.npy"
expect_error 2 "rope-factor" "$A" run --model "$L" --ids 5,6,7 --rope-factor abc -o "$T/x.npy"
expect_error 2 "sliding-on" "$A" run --model "$L" --ids 5,6,7 --sliding-on 9 -o "$T/x.npy"
expect_error 2 "both name layer 1" "$A" run --model "$L" --ids 5,6,7 --sliding-on 1 --sliding-off 0-1 -o "$T/x.npy"
expect_error 2 "sliding_window" "$A" run --model "$L" --ids 5,6,7 --sliding-on 1 -o "$T/x.npy"
expect_error 2 "has a sliding window of its own" "$A" run --model "$M/mistral-window" --ids 5,6,7 --sliding-off 0 \
  --sliding-window 3 -o "$T/x.npy"
expect_error 2 "cannot be combined" "$A" run --model "$L" --ids 5,6,7 --sliding-off 0 --causal -o "$T/x.npy"
expect_error 2 "rope_theta: model .* has no rotary positions" "$A" run --model demo --text "a b" --rope-theta 100 \
  -o "$T/x.npy"
# --rope-llama3 F: Llama 3's scaling with factor F in place of the model's equals the same folder whose
# config.json says so (the loader's llama3 frequencies are checked against torch in hf-decoders): on
# llama-bf16-mqa (llama3, factor 8, original_max_position_embeddings 8) with factor 2, and on llama-f32
# (no scaling) with Llama 3.1's other parameters; the model's own factor changes nothing
copy_with() {  # copy_with FOLDER NAME PYTHON-EXPR-ON-cfg
  mkdir -p "$T/$2" && cp "$M/$1/model.safetensors" "$M/$1/vocab.txt" "$T/$2/" || fail "copying $1"
  python3 - "$M/$1/config.json" "$T/$2/config.json" "$3" <<'PY' || fail "writing $2's config"
import json, sys
cfg = json.load(open(sys.argv[1]))
exec(sys.argv[3])
json.dump(cfg, open(sys.argv[2], "w"))
PY
}
copy_with llama-bf16-mqa mqa-f2 'cfg["rope_scaling"]["factor"] = 2.0'
copy_with llama-f32 f32-llama3 'cfg["rope_scaling"] = {"rope_type": "llama3", "factor": 4.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0, "original_max_position_embeddings": 8192}'
IDS=5,6,7,8,9,10,11,12
for r in "llama-bf16-mqa --rope-llama3 2:$T/mqa-f2" "llama-f32 --rope-llama3 4:$T/f32-llama3" \
         "llama-bf16-mqa --rope-llama3 8:$M/llama-bf16-mqa"; do
  knob=${r%%:*} ref=${r#*:}
  # shellcheck disable=SC2086
  "$A" run --model "$M/${knob%% *}" --ids $IDS ${knob#* } -o "$T/knob.npy" 2>"$T/err" || fail "$knob: $(cat "$T/err")"
  "$A" run --model "$ref" --ids $IDS -o "$T/ref.npy" 2>"$T/err" || fail "$ref: $(cat "$T/err")"
  cmp -s "$T/knob.npy" "$T/ref.npy" || fail "run $knob differs from the folder that says so ($ref)"
done
"$A" run --model "$M/llama-bf16-mqa" --ids $IDS -o "$T/plain.npy" 2>/dev/null || fail "llama-bf16-mqa plain run"
"$A" run --model "$T/mqa-f2" --ids $IDS -o "$T/f2.npy" 2>/dev/null || fail "mqa-f2 run"
python3 - "$T/plain.npy" "$T/f2.npy" <<'PY' || fail "--rope-llama3 2 on llama-bf16-mqa barely changes the attention"
import struct, sys
def npy(p):
    b = open(p, "rb").read(); hl = struct.unpack("<H", b[8:10])[0]; n = (len(b) - 10 - hl) // 4
    return struct.unpack("<%df" % n, b[10 + hl:])
d = max(abs(a - b) for a, b in zip(npy(sys.argv[1]), npy(sys.argv[2])))
print("llama-bf16-mqa: llama3 factor 8 -> 2 changes the attention by up to %.3g" % d)
assert d > 1e-3, d
PY
expect_error 2 "rope-llama3" "$A" run --model "$L" --ids 5,6,7 --rope-llama3 0 -o "$T/x.npy"
# `attnscope trace` names a layer's sliding window and the keys it hides (mistral-window: 4 tokens)
"$A" trace --model "$M/mistral-window" --ids 5,6,7,8,9,10,11,12,13,14 --layer 0 --head 1 --query 9 >"$T/tr.txt" \
  2>"$T/err" || fail "trace mistral-window: $(cat "$T/err")"
grep -q "sliding window of 4 tokens hides the 6 earlier keys more than 3 before the query" "$T/tr.txt" ||
  fail "trace does not name mistral-window's window: $(grep -A3 'Step 5' "$T/tr.txt")"
"$A" trace --model "$L" --ids 5,6,7,8,9,10 --layer 0 --head 1 --query 5 >"$T/tr.txt" 2>"$T/err" ||
  fail "trace llama-f32: $(cat "$T/err")"
grep -q "sliding window" "$T/tr.txt" && fail "trace names a window llama-f32 does not have"

# an exported figure's title names the change (read back from a PDF, where the text is text)
if command -v pdftotext >/dev/null; then
  "$A" export heatmap --model "$L" --ids 5,6,7,8 --layer 0 --head 1 --rope-theta 7 --rope-factor 2 --sliding-on 1 \
    --sliding-window 2 -o "$T/h.pdf" 2>"$T/err" || fail "export heatmap --rope-theta: $(cat "$T/err")"
  pdftotext "$T/h.pdf" - | grep -q "what-if: --rope-theta 7 --rope-factor 2 --sliding-on 1 --sliding-window 2" ||
    fail "the figure's title does not name the change: $(pdftotext "$T/h.pdf" - | head -2)"
fi
exit 0
