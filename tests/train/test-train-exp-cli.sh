#!/bin/sh
# attnscope train --test-lengths (train short, test long) from the command line: the table
# on stdout, the CSV and JSON logs (the training length first, learned positions refused
# past their table), the plot; bad options exit 2 naming the option.
# Usage: test-train-exp-cli.sh ATTNSCOPE
set -u
EXE=$1
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
SMALL="--d-model 16 --heads 2 --layers 1 --length 4 --symbols 5 --batch 4 --steps 3"

"$EXE" train $SMALL --test-lengths 7,6 --schemes alibi,learned --log "$T/tl.csv" --plot "$T/tl.svg" \
    >"$T/out" 2>"$T/err" || fail "test-lengths: $(cat "$T/err")"
head -1 "$T/out" | grep -q "trained at --length 4 (3 steps, copy task)" || fail "table head: $(cat "$T/out")"
grep -Eq "^positions +4 +6 +7$" "$T/out" || fail "table lengths: $(cat "$T/out")"
grep -Eq "^learned +[0-9.]+ +refused +refused$" "$T/out" || fail "learned row: $(cat "$T/out")"
grep -Eq "^alibi +[0-9.]+ +[0-9.]+ +[0-9.]+$" "$T/out" || fail "alibi row: $(cat "$T/out")"
grep -q "positions=alibi seed 1: 3 steps" "$T/err" || fail "progress: $(cat "$T/err")"
[ "$(head -1 "$T/tl.csv")" = "positions,seed,length,tokens,loss,accuracy,refused" ] || fail "csv head"
[ "$(wc -l <"$T/tl.csv")" = 7 ] || fail "csv rows: $(cat "$T/tl.csv")"
grep -q '^alibi,1,7,16,' "$T/tl.csv" || fail "alibi at 7 (16 tokens): $(cat "$T/tl.csv")"
grep -q '^learned,1,6,,,,"--positions learned: the table has 10 rows' "$T/tl.csv" || fail "refusal: $(cat "$T/tl.csv")"
grep -q "<svg" "$T/tl.svg" || fail "no svg"
# the table's numbers are the log's (accuracy % with 2 decimals)
/usr/bin/python3 - "$T/tl.csv" "$T/out" <<'PY' || fail "table and log differ"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
table = {l.split()[0]: l.split()[1:] for l in open(sys.argv[2]).read().splitlines()[2:]}
for r in rows:
    i = [4, 6, 7].index(int(r["length"]))
    want = "refused" if r["refused"] else "%.2f" % (100 * float(r["accuracy"]))
    assert table[r["positions"]][i] == want, (r, table)
PY

# JSON, two seeds, the plot as PNG
"$EXE" train $SMALL --test-lengths 5 --schemes rotary --seeds 2 --log "$T/tl.json" --plot "$T/tl.png" \
    >/dev/null 2>"$T/err" || fail "json: $(cat "$T/err")"
/usr/bin/python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
assert d['train_length'] == 4 and d['eval_batches'] == 4, d
runs = d['runs']
assert [(r['seed'], r['length']) for r in runs] == [(1, 4), (1, 5), (2, 4), (2, 5)], runs
assert all(0 <= r['accuracy'] <= 1 and r['loss'] > 0 and r['tokens'] == 2 * r['length'] + 2 for r in runs), runs
" "$T/tl.json" || fail "json content"
[ "$(head -c 4 "$T/tl.png" | tail -c 3)" = "PNG" ] || fail "no png"

# bad options: exit 2, the option named
bad() {
    want=$1; shift
    "$EXE" train $SMALL "$@" >/dev/null 2>"$T/err"
    rc=$?
    [ $rc = 2 ] || fail "$*: exit $rc, not 2"
    grep -q -- "$want" "$T/err" || fail "$*: message does not name $want: $(cat "$T/err")"
}
bad "--test-lengths" --test-lengths 8,x
bad "--test-lengths" --test-lengths 300
bad "--schemes" --test-lengths 8 --schemes alibi,relative
bad "--schemes" --schemes alibi
bad "--positions" --test-lengths 8 --positions alibi
bad "modadd" --test-lengths 8 --task modadd
bad "one at a time" --test-lengths 8 --sweep heads=1,2
bad "no -o" --test-lengths 8 -o "$T/x"
exit 0
