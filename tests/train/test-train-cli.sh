#!/bin/sh
# attnscope train from the command line: a short run writes its Hugging Face folder, the
# log, DIR/step-0 and the gradient dump; `attnscope run` and `predict` open the folder;
# --log FILE.json is JSON with a row per step; Ctrl-C saves the last step and exits 130.
# Usage: test-train-cli.sh ATTNSCOPE
set -u
EXE=$1
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
SMALL="--d-model 32 --heads 4 --layers 2 --length 4 --symbols 6 --batch 8"

# a decoder: 3 steps, the dump, the folder
"$EXE" train $SMALL --decoder --steps 3 --dump-grads "$T/g.npz" -o "$T/dec" 2>"$T/err" >"$T/out" || fail "train: $(cat "$T/err")"
grep -q "^3 steps in" "$T/out" || fail "summary: $(cat "$T/out")"
grep -q "^step 3/3  loss" "$T/err" || fail "progress line: $(cat "$T/err")"
for f in config.json model.safetensors vocab.txt tokenizer_config.json training.json train-log.csv \
         step-0/config.json step-0/model.safetensors; do
    [ -s "$T/dec/$f" ] || fail "no $f"
done
[ -s "$T/g.npz" ] || fail "no g.npz"
[ "$(wc -l <"$T/dec/train-log.csv")" = 4 ] || fail "log: $(cat "$T/dec/train-log.csv")"
[ "$(head -1 "$T/dec/train-log.csv")" = "step,loss,accuracy,grad_norm,lr,seconds,grad_norm_layer0,grad_norm_layer1" ] ||
    fail "log header: $(head -1 "$T/dec/train-log.csv")"
grep -q '"steps_done": 0' "$T/dec/step-0/training.json" || fail "step-0 is not the initial model"
grep -q '"steps_done": 3' "$T/dec/training.json" || fail "the folder is not the last step"
# the copy task's layout: [CLS] x1..x4 [SEP] y1..y4 = 10 tokens; the folder opens as GPT-2
"$EXE" run --model "$T/dec" --ids 2,5,6,7,8,3,5,6,7,8 -o "$T/a.npy" 2>"$T/err" || fail "run: $(cat "$T/err")"
[ -s "$T/a.npy" ] || fail "no a.npy"
"$EXE" info --model "$T/dec" >"$T/info" 2>&1 || fail "info: $(cat "$T/info")"
grep -qi "gpt-2" "$T/info" || fail "info does not say GPT-2: $(cat "$T/info")"

# an encoder, the JSON log
"$EXE" train $SMALL --encoder --steps 2 --log "$T/log.json" -o "$T/enc" 2>"$T/err" >/dev/null || fail "encoder: $(cat "$T/err")"
/usr/bin/python3 -c "
import json, sys
rows = json.load(open(sys.argv[1]))['steps']
assert [r['step'] for r in rows] == [1, 2], rows
assert all(r['loss'] > 0 and 0 <= r['accuracy'] <= 1 for r in rows), rows
# each layer's gradient norm; together no more than the global norm
assert all(len(r['layer_grad_norms']) == 2 and sum(x * x for x in r['layer_grad_norms']) <= r['grad_norm'] ** 2 * (1 + 1e-5)
           for r in rows), rows
" "$T/log.json" || fail "log.json"
"$EXE" predict --model "$T/enc" --ids 2,5,6,7,8,3,4,4,4,4 >"$T/pred" 2>&1 || fail "predict: $(cat "$T/pred")"

# a sweep: one row per value and seed, a summary per value; its (heads 2, seed 2) run is the
# run a sweep of that value alone with --seed 2 makes (the seed reaches every run)
"$EXE" train $SMALL --steps 5 --sweep heads=1,2 --seeds 2 --log "$T/sweep.csv" --plot "$T/sweep.png" >"$T/sum" \
    2>"$T/err" || fail "sweep: $(cat "$T/err")"
# --plot: a PNG of 5 value slots at 2x (200 + 90 x 5 points by 420): 1300 x 840 pixels
[ "$(od -An -tx1 -N8 "$T/sweep.png" | tr -d ' \n')" = 89504e470d0a1a0a ] || fail "sweep plot: not a PNG"
[ "$(od -An -tu1 -j16 -N8 "$T/sweep.png" | tr -s ' ' | sed 's/^ //')" = "0 0 5 20 0 0 3 72" ] ||
    fail "sweep plot size: $(od -An -tu1 -j16 -N8 "$T/sweep.png")"
[ "$(wc -l <"$T/sweep.csv")" = 5 ] || fail "sweep rows: $(cat "$T/sweep.csv")"
[ "$(head -1 "$T/sweep.csv")" = "heads,seed,loss,accuracy,seconds" ] || fail "sweep header"
grep -q "^1  *2 " "$T/sum" && grep -q "^2  *2 " "$T/sum" || fail "sweep summary: $(cat "$T/sum")"
"$EXE" train $SMALL --steps 5 --sweep heads=2 --seed 2 --log "$T/one.csv" >/dev/null 2>&1 || fail "sweep of one"
[ "$(sed -n 2p "$T/one.csv" | cut -d, -f1-4)" = "$(grep '^2,2,' "$T/sweep.csv" | cut -d, -f1-4)" ] ||
    fail "sweep runs differ: $(cat "$T/one.csv") vs $(cat "$T/sweep.csv")"

# --precision: a bad value exits 2 naming the option; fp16 logs the loss scale and the
# skipped steps (none in 3 steps at 2^16)
"$EXE" train $SMALL --steps 1 --precision fp8 >/dev/null 2>"$T/err"
rc=$?
[ $rc = 2 ] && grep -q -- "--precision must be fp32, fp16 or bf16, not \"fp8\"" "$T/err" || fail "--precision fp8: exit $rc, $(cat "$T/err")"
"$EXE" train $SMALL --steps 3 --precision fp16 --log "$T/fp16.json" >/dev/null 2>"$T/err" || fail "fp16: $(cat "$T/err")"
grep -q "^fp16: 0 of 3 steps skipped for overflowing gradients; the last step's loss scale 65536" "$T/err" ||
    fail "fp16 line: $(cat "$T/err")"
/usr/bin/python3 -c "
import json, sys
log = json.load(open(sys.argv[1]))
assert log['precision'] == 'fp16' and log['overflow_steps'] == 0, log
assert [r['loss_scale'] for r in log['steps']] == [65536] * 3 and not any(r['overflow'] for r in log['steps']), log
" "$T/fp16.json" || fail "fp16.json"

# --checkpoint: the same losses, fewer bytes of activations (printed and in the JSON log)
"$EXE" train $SMALL --layers 4 --steps 2 --log "$T/full.json" >/dev/null 2>"$T/err" || fail "full: $(cat "$T/err")"
grep -q "^activation memory: .* MiB (.* bytes; the layers' [0-9]* bytes), precision fp32" "$T/err" ||
    fail "activation line: $(cat "$T/err")"
"$EXE" train $SMALL --layers 4 --steps 2 --checkpoint --log "$T/ckpt.json" >/dev/null 2>"$T/err" ||
    fail "checkpoint: $(cat "$T/err")"
grep -q "^activation memory: .*, checkpointed), precision fp32" "$T/err" || fail "checkpoint line: $(cat "$T/err")"
/usr/bin/python3 -c "
import json, sys
a, b = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
assert not a['checkpoint'] and b['checkpoint'], (a, b)
assert [r['loss'] for r in a['steps']] == [r['loss'] for r in b['steps']], (a, b)
assert a['activation_layer_bytes'] >= 2.5 * b['activation_layer_bytes'], (a, b)
assert a['activation_bytes'] - b['activation_bytes'] == a['activation_layer_bytes'] - b['activation_layer_bytes'], (a, b)
" "$T/full.json" "$T/ckpt.json" || fail "checkpoint logs"
# attention variants: Longformer's globals recorded in training.json; chunked; Linformer
# trains and logs but is not saved; bad values exit 2 naming the option
"$EXE" train $SMALL --steps 2 --attention longformer --window 1 --globals 0,5 -o "$T/lf" >/dev/null 2>"$T/err" ||
    fail "longformer: $(cat "$T/err")"
/usr/bin/python3 -c "
import json, sys
j = json.load(open(sys.argv[1]))
assert j['attention'] == 'longformer' and j['window'] == 1 and j['global_first'] == 0 and j['globals'] == [0, 5], j
" "$T/lf/training.json" || fail "longformer training.json: $(cat "$T/lf/training.json")"
"$EXE" train $SMALL --steps 2 --attention chunked --chunk 3 -o "$T/ch" >/dev/null 2>"$T/err" || fail "chunked: $(cat "$T/err")"
grep -q '"chunk": 3' "$T/ch/training.json" || fail "chunked training.json: $(cat "$T/ch/training.json")"
"$EXE" train $SMALL --encoder --steps 2 --attention linformer --linformer-k 4 --log "$T/lin.csv" >/dev/null 2>"$T/err" ||
    fail "linformer: $(cat "$T/err")"
[ "$(wc -l <"$T/lin.csv")" = 3 ] || fail "linformer log: $(cat "$T/lin.csv")"
bad() {   # bad ARGS... MESSAGE-PART: exit 2 and the message names it
    want=$1; shift
    "$EXE" train $SMALL --steps 1 "$@" >/dev/null 2>"$T/err"
    rc=$?
    [ $rc = 2 ] || fail "$*: exit $rc, $(cat "$T/err")"
    grep -q -- "$want" "$T/err" || fail "$*: message does not name $want: $(cat "$T/err")"
}
bad --globals --attention longformer --globals 10
bad --globals --attention longformer --globals 1,-2
bad --globals --attention longformer --globals first:x
bad --chunk --attention chunked --chunk 0
bad --linformer-k --encoder --attention linformer --linformer-k 11
bad "--attention linformer" --attention linformer
bad "--attention linformer" --encoder --attention linformer -o "$T/no"
[ ! -e "$T/no" ] || fail "a refused Linformer run wrote $T/no"
bad --attention --attention sparse
# a knob its attention does not read changes nothing: refused (a sweep over it too), unless
# the sweep varies the attention
bad "--window changes nothing under --attention causal" --window 2
bad "--chunk changes nothing under --attention longformer" --attention longformer --chunk 2
bad "--linformer-k changes nothing" --encoder --sweep linformer-k=2,4
bad "--globals changes nothing" --attention window --globals 0
"$EXE" train $SMALL --steps 2 --sweep attention=window,chunked --chunk 3 >"$T/sum" 2>"$T/err" ||
    fail "sweep over the attention with --chunk: $(cat "$T/err")"
grep -q "^chunked " "$T/sum" || fail "sweep over the attention: $(cat "$T/sum")"

# Ctrl-C: the last step is saved, exit 130
"$EXE" train $SMALL --steps 100000000 -o "$T/int" 2>"$T/err" >/dev/null &
pid=$!
i=0
while [ ! -s "$T/err" ] || ! grep -q "^training" "$T/err"; do
    sleep 0.2; i=$((i + 1)); [ $i -lt 100 ] || break
done
sleep 1
kill -INT $pid
wait $pid
rc=$?
[ $rc = 130 ] || fail "Ctrl-C: exit $rc, $(cat "$T/err")"
grep -q "interrupted after [0-9]* steps: saved to $T/int" "$T/err" || fail "Ctrl-C message: $(cat "$T/err")"
[ -s "$T/int/model.safetensors" ] && [ -s "$T/int/train-log.csv" ] || fail "Ctrl-C saved nothing"
echo "train-cli: ok"
