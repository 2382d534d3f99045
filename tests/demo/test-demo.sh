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
echo "$n sentences agree with the trainer; predict works"
