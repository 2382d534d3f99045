#!/bin/sh
# The shipped demo model: attnscope's tokenizer and forward pass, run from the sentences'
# text, give the tokens and the attention the trainer's own (PyTorch) forward pass saved in
# data/models/demo/train/check/ when it wrote the model.  Then the masked-LM head answers.
# Usage: test-demo.sh ATTNSCOPE NPY_DIFF SOURCE_ROOT
set -u
A="$1"; NPYDIFF="$2"; SRC="$3"
CHECK="$SRC/data/models/demo/train/check"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
[ -f "$SRC/data/models/demo/model.safetensors" ] || { echo "no demo model"; exit 77; }
python3 - "$CHECK/sentences.json" >"$T/cases" <<'PY' || fail "reading sentences.json"
import json, sys
for i, s in enumerate(json.load(open(sys.argv[1], encoding="utf-8"))):
    print(i, json.dumps(s["text"]), json.dumps(s.get("text_pair")), json.dumps(s["tokens"]))
PY
n=0
while read -r line; do
  i=$(echo "$line" | cut -d' ' -f1)
  python3 -c "
import json,sys
parts=sys.argv[1].split(' ',1)[1]
dec=json.JSONDecoder(); text,pos=dec.raw_decode(parts); rest=parts[pos:].strip()
pair,pos=dec.raw_decode(rest); toks=json.loads(rest[pos:].strip())
open('$T/text','w',encoding='utf-8').write(text)
open('$T/pair','w',encoding='utf-8').write(pair or '')
open('$T/tokens','w',encoding='utf-8').write(json.dumps(toks))
" "$line" || fail "case $i"
  text=$(cat "$T/text"); pair=$(cat "$T/pair")
  if [ -n "$pair" ]; then set -- --text "$text" --text-pair "$pair"; else set -- --text "$text"; fi
  "$A" tokenize --model demo "$@" --json >"$T/tok.json" || fail "tokenize $i"
  python3 -c "
import json
got=[t['token'] if isinstance(t,dict) else t for t in json.load(open('$T/tok.json',encoding='utf-8'))['tokens']]
want=json.load(open('$T/tokens',encoding='utf-8'))
assert got==want,(got,want)" || fail "sentence $i: tokens differ from the trainer's"
  "$A" run --model demo "$@" -o "$T/a.npy" || fail "run $i"
  "$NPYDIFF" "$T/a.npy" "$CHECK/attn_$i.npy" 1e-4 || fail "sentence $i: attention differs from the trainer's forward"
  n=$((n + 1))
done <"$T/cases"
[ "$n" -ge 2 ] || fail "only $n sentences"
"$A" predict --model demo --text "the cat sat on the [MASK] ." --json >"$T/p.json" || fail "predict"
python3 -c "
import json
p=json.load(open('$T/p.json'))[0]['predictions']
assert len(p)==5 and all(p[i]['prob']>=p[i+1]['prob'] for i in range(4)) and 0<sum(x['prob'] for x in p)<=1,p" ||
  fail "predictions"

# The demo model's acceptance (docs/ARCHITECTURE.md, "Targets"), measured by attnscope itself on the held-out sentences: a previous-,
# a next- and a [CLS]/[SEP]-token head of at least 0.5, and every head's numbers as the
# trainer's own PyTorch statistics (train/metrics.json, rounded to 3 places) give them.
"$A" stats --model demo --corpus "$SRC/data/models/demo/train/heldout.txt" --format csv >"$T/stats.csv" 2>"$T/stats.err" ||
  fail "stats --corpus: $(cat "$T/stats.err")"
python3 - "$T/stats.csv" "$SRC/data/models/demo/train/metrics.json" <<'PY' || fail "head statistics"
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1])))
ref = json.load(open(sys.argv[2]))["head_stats_single"]
L, H = len(ref["prev"]), len(ref["prev"][0])
assert len(rows) == L * H, (len(rows), L, H)
worst = 0
for r in rows:
    l, h = int(r["layer"]), int(r["head"])
    for k in ("prev", "next", "self", "cls", "sep"):
        worst = max(worst, abs(float(r[k]) - ref[k][l][h]))
assert worst <= 5.1e-4, f"attnscope stats differs from the trainer's by {worst}"
best = {k: max(rows, key=lambda r: float(r[k])) for k in ("prev", "next", "cls", "sep")}
special = max(float(best["cls"]["cls"]), float(best["sep"]["sep"]))
for k in ("prev", "next"):
    assert float(best[k][k]) >= 0.5, (k, best[k])
assert special >= 0.5, special
print("held-out: previous L%s.H%s %.3f, next L%s.H%s %.3f, [CLS]/[SEP] %.3f; stats within %.1e of the trainer's" % (
    best["prev"]["layer"], best["prev"]["head"], float(best["prev"]["prev"]), best["next"]["layer"],
    best["next"]["head"], float(best["next"]["next"]), special, worst))
PY
echo "$n sentences agree with the trainer; predict works"
