# The golden cases: one line each, "NAME|attnscope arguments".  Each writes OUT (a file
# name the runner fills in) or prints to stdout.  tests/golden/make.sh records what the
# current build gives; tests/golden/test-golden.sh checks a build gives the same bytes.
# Paths are relative to the source root.
golden_cases() {
cat <<'CASES'
demo-en.npy|run --model demo --text "the cat sat on the mat ." -o OUT
demo-zh.npy|run --model demo --text "我爱你，中国。" -o OUT
demo-pair.npy|run --model demo --text "where is the cat ?" --text-pair "the cat is on the mat ." -o OUT
demo-mask.json|run --model demo --text "the [MASK] sat on the mat ." -o OUT
worked.npy|run --model worked-example -o OUT
mlm-text.npy|run --model tests/hf/models/mlm --text "hello world, the cat sat" -o OUT
odd3-pair.npy|run --model tests/hf/models/odd3-relu --text "a b c" --text-pair "d e" -o OUT
odd5-padded.npy|run --model tests/hf/models/odd5-mixed --ids 2,5,7,9,3,0,0 --mask 1,1,1,1,1,0,0 -o OUT
sharded.npy|run --model tests/hf/models/sharded --text "the cat sat on the mat" -o OUT
trace-worked.json|trace --model worked-example --layer 0 --head 0 --query 0 --json
trace-demo.json|trace --model demo --text "我爱你" --layer 1 --head 2 --query 1 --json
trace-mlm.json|trace --model tests/hf/models/mlm --text "the cat sat" --layer 1 --head 1 --query 2 --json
predict-demo.json|predict --model demo --text "the cat sat on the [MASK] ." --json
predict-mlm.json|predict --model tests/hf/models/mlm --text "the [MASK] sat on the [MASK]" --json
stats-demo.csv|stats --model demo --text "the cat sat on the mat , and the dog ran ." --format csv -o OUT
stats-corpus.csv|stats --model demo --corpus data/models/demo/train/heldout.txt --format csv -o OUT
sim-demo.json|similarity --model demo --text "the cat sat on the mat ." --scope model -o OUT
sim-demo-layer.csv|similarity --model demo --text "我爱你，中国。" --metric cosine --scope layer --layer 1 -o OUT
tokenize-demo.txt|tokenize --model demo --text "Hello, 世界! Don't [MASK] it."
roberta-padded.npy|run --model tests/hf/models/roberta-f32 --ids 2,6,25,3,26,24,32,3,1,1 --mask 1,1,1,1,1,1,1,1,0,0 -o OUT
xlmr-bf16.npy|run --model tests/hf/models/xlmr-bf16 --ids 2,5,21,13,13,24,3 -o OUT
distilbert-pair.npy|run --model tests/hf/models/distilbert-f32 --ids 2,27,24,3,39,14,39,3,0,0 --type-ids 0,0,0,0,1,1,1,1,0,0 --mask 1,1,1,1,1,1,1,1,0,0 -o OUT
albert-pair.npy|run --model tests/hf/models/albert-f32 --ids 2,42,44,3,32,33,27,3,0,0 --type-ids 0,0,0,0,1,1,1,1,0,0 --mask 1,1,1,1,1,1,1,1,0,0 -o OUT
predict-albert.json|predict --model tests/hf/models/albert-f32 --ids 2,34,31,4,16,36,3 --json
electra-pair.npy|run --model tests/hf/models/electra-disc --ids 2,18,20,3,20,43,17,3,0,0 --type-ids 0,0,0,0,1,1,1,1,0,0 --mask 1,1,1,1,1,1,1,1,0,0 -o OUT
gpt2-padded.npy|run --model tests/hf/models/gpt2-f32 --ids 34,31,43,37,20,32,61,0,0 --mask 1,1,1,1,1,1,1,0,0 -o OUT
predict-gpt2.json|predict --model tests/hf/models/gpt2-f32 --text "The cat sat on the MAT" --after 2 --json
demo-gpt2.npy|run --model demo-gpt2 --text "This License applies to any program or other work" -o OUT
predict-demo-gpt2.json|predict --model demo-gpt2 --text "This License applies to any program or other work" --after 3 --json
CASES
}
