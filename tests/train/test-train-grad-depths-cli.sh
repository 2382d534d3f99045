#!/bin/sh
# attnscope train --grad-depths (Post-LN vs Pre-LN gradient norms per layer by depth): every
# step's and layer's norm in the CSV equals the plain training log's grad_norm_layerK for the
# same placement and depth (an independent run); the JSON's mean is the mean of its steps;
# the table shows step 1 and the mean; with --seeds 2 every seed's norms equal its own run's
# log, and the table's mean and sd are the seeds' mean and sample sd; the plot is written;
# Ctrl-C keeps the finished models; bad options exit 2 naming them.
# Usage: test-train-grad-depths-cli.sh ATTNSCOPE
set -u
EXE=$1
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
SMALL="--d-model 16 --heads 2 --length 4 --symbols 5 --batch 4 --steps 3"

"$EXE" train $SMALL --grad-depths 1,3 --log "$T/gd.csv" --plot "$T/gd.svg" >"$T/out" 2>"$T/err" ||
    fail "grad-depths: $(cat "$T/err")"
[ "$(head -1 "$T/gd.csv")" = "norm,depth,seed,step,layer,grad_norm" ] || fail "csv head: $(head -1 "$T/gd.csv")"
# post and pre, depth 1 and 3, 3 steps: (1 + 3) * 2 * 3 rows
[ "$(wc -l <"$T/gd.csv")" = 25 ] || fail "csv rows: $(wc -l <"$T/gd.csv")"
grep -q "<svg" "$T/gd.svg" || fail "no svg"
grep -q "^post-LN, 3 layers: 3 steps" "$T/err" || fail "progress: $(cat "$T/err")"
for norm in post pre; do
    for depth in 1 3; do
        "$EXE" train $SMALL --norm $norm --layers $depth --log "$T/ref-$norm-$depth.csv" >/dev/null 2>&1 ||
            fail "reference run $norm $depth"
    done
done
/usr/bin/python3 - "$T" <<'PY' || fail "the experiment's norms differ from the training log's"
import csv, sys
T = sys.argv[1]
got = list(csv.DictReader(open(T + "/gd.csv")))
n = 0
for r in got:
    assert r["seed"] == "1", r
    ref = list(csv.DictReader(open("%s/ref-%s-%s.csv" % (T, r["norm"], r["depth"]))))
    want = ref[int(r["step"]) - 1]["grad_norm_layer" + r["layer"]]
    assert r["grad_norm"] == want, (r, want)
    n += 1
assert n == 24
# the table: step 1 and the mean over the 3 steps, each layer
table = [l.split() for l in open(T + "/out").read().splitlines()[3:]]
for norm in ("post", "pre"):
    for depth in ("1", "3"):
        rows = [r for r in got if r["norm"] == norm and r["depth"] == depth]
        for k in range(int(depth)):
            v = [float(r["grad_norm"]) for r in rows if r["layer"] == str(k)]
            step1 = next(t for t in table if t[:4] == [norm, depth, "step", "1"])
            mean = next(t for t in table if t[:3] == [norm, depth, "mean"])
            assert abs(float(step1[4 + k]) - v[0]) <= 1e-3 * v[0], (step1, v)
            assert abs(float(mean[3 + k]) - sum(v) / 3) <= 1e-3 * v[0], (mean, v)
PY

# --seeds 2: each seed's norms are its own run's (seed 2 against a plain run with --seed 2);
# the table's mean is the mean of the seeds' means, sd their sample sd
"$EXE" train $SMALL --grad-depths 3 --placements post --seeds 2 --log "$T/gs.csv" --plot "$T/gs.svg" \
    --plot "$T/gs.png" --plot "$T/gs.pdf" \
    >"$T/gs.out" 2>"$T/gs.err" || fail "grad-depths --seeds: $(cat "$T/gs.err")"
grep -q "<svg" "$T/gs.svg" || fail "--seeds: no svg"
# --plot three times: the figure in each format
[ "$(head -c 4 "$T/gs.png" | tail -c 3)" = "PNG" ] || fail "--plot x3: no png"
[ "$(head -c 5 "$T/gs.pdf")" = "%PDF-" ] || fail "--plot x3: no pdf"
grep -q "^post-LN, 3 layers, seed 2: 3 steps" "$T/gs.err" || fail "--seeds progress: $(cat "$T/gs.err")"
"$EXE" train $SMALL --norm post --layers 3 --seed 2 --log "$T/ref-seed2.csv" >/dev/null 2>&1 || fail "reference seed 2"
/usr/bin/python3 - "$T" <<'PY' || fail "--seeds: the norms, the mean or the sd are wrong"
import csv, statistics, sys
T = sys.argv[1]
got = list(csv.DictReader(open(T + "/gs.csv")))
assert len(got) == 2 * 3 * 3, len(got)
assert sorted({r["seed"] for r in got}) == ["1", "2"]
ref = {"1": list(csv.DictReader(open(T + "/ref-post-3.csv"))), "2": list(csv.DictReader(open(T + "/ref-seed2.csv")))}
for r in got:
    assert r["grad_norm"] == ref[r["seed"]][int(r["step"]) - 1]["grad_norm_layer" + r["layer"]], r
table = [l.split() for l in open(T + "/gs.out").read().splitlines()]
mean = next(t for t in table if t[:3] == ["post", "3", "mean"])
sd = next(t for t in table if t[:3] == ["post", "3", "sd"])
for k in range(3):
    per_seed = [sum(float(r["grad_norm"]) for r in got if r["seed"] == s and r["layer"] == str(k)) / 3 for s in "12"]
    m, d = statistics.mean(per_seed), statistics.stdev(per_seed)
    assert abs(float(mean[3 + k]) - m) <= 1e-3 * m, (mean, per_seed)
    assert abs(float(sd[3 + k]) - d) <= 1e-3 * m + 1e-3 * d, (sd, per_seed, d)
    assert d > 0, per_seed
PY

# JSON: the mean is the mean of per_step; --placements none
"$EXE" train $SMALL --grad-depths 2 --placements none,post --log "$T/gd.json" --plot "$T/gd.png" >/dev/null 2>"$T/err" ||
    fail "json: $(cat "$T/err")"
/usr/bin/python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
assert d['steps'] == 3 and [(r['norm'], r['depth']) for r in d['runs']] == [('none', 2), ('post', 2)], d
for r in d['runs']:
    assert len(r['per_step']) == 3 and all(len(s) == 2 for s in r['per_step'])
    for k in range(2):
        m = sum(s[k] for s in r['per_step']) / 3
        assert abs(r['mean'][k] - m) <= 1e-6 * m, (r, k)
" "$T/gd.json" || fail "json content"
[ "$(head -c 4 "$T/gd.png" | tail -c 3)" = "PNG" ] || fail "no png"

# Ctrl-C: exit 130, the finished model (depth 1) in the table and the log, not the one cut
"$EXE" train --d-model 16 --heads 2 --length 4 --symbols 5 --batch 4 --steps 400 --grad-depths 1,12 \
    --placements pre --log "$T/int.csv" >"$T/int.out" 2>"$T/int.err" &
pid=$!
i=0
while ! grep -q "^pre-LN, 1 layer: 400 steps" "$T/int.err" && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
kill -INT $pid
wait $pid
rc=$?
[ $rc = 130 ] || fail "Ctrl-C: exit $rc, not 130: $(cat "$T/int.err")"
[ "$(wc -l <"$T/int.csv")" = 401 ] || fail "Ctrl-C: the log has $(wc -l <"$T/int.csv") lines, not the 400 steps of depth 1"
grep -q "^pre       1 mean" "$T/int.out" || fail "Ctrl-C: no table: $(cat "$T/int.out")"
grep -q "^pre      12" "$T/int.out" && fail "Ctrl-C: the cut model is in the table"

bad() {
    want=$1; shift
    "$EXE" train $SMALL "$@" >/dev/null 2>"$T/err"
    rc=$?
    [ $rc = 2 ] || fail "$*: exit $rc, not 2"
    grep -q -- "$want" "$T/err" || fail "$*: message does not name $want: $(cat "$T/err")"
}
bad "--grad-depths" --grad-depths 2,13
bad "--grad-depths" --grad-depths 0
bad "--grad-depths" --grad-depths 2,,6
bad "--placements" --grad-depths 2 --placements post,sandwich
bad "--placements" --placements post
bad "--norm" --grad-depths 2 --norm pre
bad "--layers" --grad-depths 2 --layers 4
bad "--seeds" --grad-depths 2 --seeds 0
bad "--steps" --grad-depths 2 --steps 0
bad "--plot" --grad-depths 2 --plot "$T/1.png" --plot "$T/2.png" --plot "$T/3.svg" --plot "$T/4.pdf"
bad "one at a time" --grad-depths 2 --test-lengths 8
exit 0
