/* Shared pieces of the command line: option parsing, opening the model and the input
 * every sub-command takes, and error reporting (exit code 2 for bad input). */
#ifndef ATN_CLI_H
#define ATN_CLI_H

#include "attention-file.h"
#include "attnscope.h"

#include <stdbool.h>
#include <stdio.h>

enum { CLI_EXIT_OK = 0, CLI_EXIT_FAIL = 1, CLI_EXIT_USAGE = 2, CLI_EXIT_INTERRUPTED = 130 };
enum { CLI_MAX_OPTS = 64 };

/* "--name value", "--name=value", "-o value" and bare flags ("--json"). */
typedef struct cli_args {
    const char *prog;          /* "attnscope run" */
    int n;
    const char *names[CLI_MAX_OPTS];
    const char *values[CLI_MAX_OPTS];   /* NULL for a flag */
    bool used[CLI_MAX_OPTS];
    const char *positional[CLI_MAX_OPTS];
    int n_positional;
} cli_args;

/* flags: NULL-terminated names that take no value (without "--").  Returns false and
 * prints a message on a malformed command line. */
bool cli_parse(cli_args *a, const char *prog, int argc, char **argv, const char *const *flags);
const char *cli_get(cli_args *a, const char *name);          /* NULL if absent */
bool cli_flag(cli_args *a, const char *name);
/* Every value of an option given more than once, in the order given: how many were given (0
 * if absent); the first max of them are in out. */
int cli_get_all(cli_args *a, const char *name, const char **out, int max);
/* The one parser for numeric options: an integer (decimal) in lo..hi, or a finite number in
 * lo..hi.  Absent: dflt.  Present but not a number, not finite (nan, inf), overflowing or
 * outside lo..hi: *ok becomes false and "PROG: --NAME must be an integer in LO..HI, not
 * "TEXT"" is printed (the text as given); dflt is returned.  Every numeric option of every
 * command goes through these two, so none can reach the engine unchecked. */
long cli_get_int(cli_args *a, const char *name, long dflt, long lo, long hi, bool *ok);
double cli_get_double(cli_args *a, const char *name, double dflt, double lo, double hi, bool *ok);
/* The largest index (layer, head, token) an option may name before the model is known. */
enum { CLI_MAX_INDEX = 1000000 };
/* Reports options nobody asked for.  Returns false when there were any. */
bool cli_check_unused(cli_args *a);
/* Marks as read, without checking them, the options a model-running command reads only
 * after cli_check_unused: --model, the input (--text, --text-pair, --ids, --type-ids,
 * --mask) and the what-if options (cli_mark_whatif_options), so that the check, called
 * next, reports only unknown ones.  cli_open_model, cli_encode and cli_interventions_parse
 * read and check their values later.  Absent options are fine; a is not otherwise changed. */
void cli_mark_model_options(cli_args *a);
/* The same for the what-if options alone (cli_intervention_options), for a command that
 * takes its input another way (stats --corpus). */
void cli_mark_whatif_options(cli_args *a);

/* Prints "attnscope: message" on stderr. */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int cli_fail(const atn_error *err);   /* prints err->message, returns CLI_EXIT_USAGE */

/* Comma-separated integers ("1,2,3").  Returns count, or -1 (message printed). */
int cli_parse_int_list(const char *s, const char *what, int32_t **out);

/* --device cpu|cuda|auto (default cpu), --memory-limit SIZE (the run's budget, default from
 * physical memory and limits: over it, heads on demand) and --precision fp32|fp16|bf16 (on the CPU, says
 * once on stderr how the CPU runs bf16/fp16: cli_precision_note). */
bool cli_run_options(cli_args *a, atn_run_options *opts);
/* A size in bytes: a positive number with an optional K, M, G or T (powers of 1024; "KiB",
 * "MB" also read so), e.g. "800M", "1.5G", "4096".  False for anything else (out untouched). */
bool cli_parse_size(const char *text, size_t *out);
/* Says once per process on stderr that capture c keeps heads on demand because its full
 * attention did not fit the memory budget (nothing for NULL or a full capture). */
void cli_note_on_demand(const atn_capture *c);
/* Says once per process on stderr how the CPU runs p (atn_cpu_precision_note); nothing for FP32. */
void cli_precision_note(atn_precision p);
/* "fp16 overflow in layer L: N values of the ... became +-inf" on stderr, one line per layer
 * and operand with overflows; nothing when cap counted none. */
void cli_report_fp16_overflow(const atn_capture *cap);

/* Opens --model (default "demo", falling back to "worked-example" when the demo model is
 * not installed), with a progress line on a terminal. */
atn_model *cli_open_model(cli_args *a, atn_error *err);

/* Builds the input from --text/--text-pair, --ids/--type-ids/--mask, --tokens N
 * (cli_encode_tokens), or the toy model's own tokens.  Prints a notice on stderr when the text was truncated. */
atn_status cli_encode(cli_args *a, const atn_model *model, atn_encoding **enc, atn_error *err);

/* N made-up token ids for model m (what `attnscope bench` and --tokens N run): 101, then
 * 1000 + 7919 i mod (V - 1000), then 102 for a vocabulary over 2000 (else i mod V); token
 * type 1 for the second half when the model has token types.  Errors as
 * atn_model_encode_ids (more tokens than positions). */
atn_status cli_encode_tokens(const atn_model *m, int32_t n, atn_encoding **enc, atn_error *err);

/* Opens the model, encodes, runs: the common first half of most sub-commands.
 * On success the caller frees *run, *enc and *model. */
int cli_model_run(cli_args *a, atn_model **model, atn_encoding **enc, atn_run **run);
/* The same, and run_fp32 (not NULL) gets the same input run again with the same options in
 * fp32 (attnscope run --compare-fp32); the caller frees it too. */
int cli_model_run_pair(cli_args *a, atn_model **model, atn_encoding **enc, atn_run **run, atn_run **run_fp32);
/* An encoder-decoder's decoder input from --target-ids, or from --target TEXT (the decoder
 * start token, then the text's tokens but the last: teacher forcing, HF's shift_right of the
 * labels), malloc'ed, *n its length; NULL with *n 0 when neither is given (the run then feeds
 * the start token alone), NULL with err set when they are wrong or the model is not an
 * encoder-decoder. */
int32_t *cli_target_ids(cli_args *a, const atn_model *model, int32_t *n, atn_error *err);

/* --attention FILE (app/cli-attention.c): the weight-free commands read an attention file
 * in place of running --model.  cli_attention_wanted says whether it was given (without
 * marking it read).  cli_attention_open refuses the options that only make sense with a
 * model (--model, the input, --corpus, --device, the what-if options: each named), checks
 * for unknown options, opens the file, reads and checks every layer, and prints the file's
 * warning (rows that do not sum to 1) on stderr.  Returns CLI_EXIT_OK, or the exit code
 * with the message printed.  *at is freed with cli_attention_free (also after a failure).
 * cli_attention_open_lazy, for the commands that read one head or one layer (export heatmap,
 * trace): the same, but reads no layer (atn_attn_file_capture_lazy: each layer is read and
 * checked when a head of it is read); the warning is printed by cli_attention_free. */
typedef struct cli_attention {
    atn_attn_file *file;
    const atn_capture *cap;   /* borrowed from file */
    const char *name;         /* the file's model_id, else its path: where --model's name goes */
    bool causal;              /* the file's "causal" */
    bool lazy;                /* opened by cli_attention_open_lazy */
} cli_attention;
bool cli_attention_wanted(const cli_args *a);
int cli_attention_open(cli_args *a, cli_attention *at);
int cli_attention_open_lazy(cli_args *a, cli_attention *at);
void cli_attention_free(cli_attention *at);

/* Ctrl-C and SIGTERM (main installs the handler for every sub-command): the progress
 * callbacks below then return false, so the engine's work ends with ATN_E_CANCELLED within a
 * layer; cli_atomic_close keeps no file; main exits with CLI_EXIT_INTERRUPTED and
 * "interrupted".  A second signal ends the process at once. */
void cli_catch_signals(void);
bool cli_interrupted(void);

/* A progress line on stderr when it is a terminal ("\r what 42%", what the stage's
 * atn_stage_name); ends with a newline at fraction 1.  Always returns true unless SIGINT
 * or SIGTERM was received. */
bool cli_progress(double fraction, atn_stage stage, void *user_data);
/* The same for the command's own work (what: its English words, e.g. "exporting"). */
bool cli_report(double fraction, const char *what);
/* The same without the progress line: false once Ctrl-C was pressed (for inner loops). */
bool cli_keep_going(double fraction, atn_stage stage, void *user_data);

/* The what-if lab's options (app/cli-whatif.c): their names, NULL-terminated, and the
 * flags among them (for cli_parse's flag list). */
extern const char *const cli_intervention_options[];
#define CLI_INTERVENTION_FLAGS "causal", "alibi", "no-positions"
#define CLI_INTERVENTION_HELP \
    "What-if (every layer): --heads-off L:H,L:H | --keep-heads L:H,... [--head-mode zero|uniform]\n" \
    "  (zero: Hugging Face's head_mask; uniform: 1/k over the keys the query sees; --keep-heads keeps\n" \
    "  only the listed heads in each layer it names), --causal, --window W [--global-tokens 0,12],\n" \
    "  --strided S, --hide-tokens 3,4 (masks; --mask-layers 0,2-3: in those layers only), --alibi,\n" \
    "  --no-positions, --shuffle-seed N, --temperature T (scores after 1/sqrt(d_k) and the masks\n" \
    "  divided by T).  Rotary models (Llama, Qwen, Mistral, Gemma): --rope-theta B (the rotation's\n" \
    "  base), --rope-factor F (linear scaling: positions / F), --rope-llama3 F (Llama 3's scaling\n" \
    "  with factor F in place of the model's), --no-positions (NoPE: q and k not\n" \
    "  rotated), --sliding-off 0,2-3 / --sliding-on 1 (a layer's sliding window off or on;\n" \
    "  --sliding-window W: the window of a model without one).\n"
typedef struct cli_interventions {
    atn_interventions iv;   /* points into the arrays below */
    uint8_t *heads_off;     /* [L][H] */
    int32_t *global, *hide;
    uint8_t *mask_layers;   /* [L], or NULL */
    int8_t *sliding;        /* [L] 1 on, -1 off, 0 as the model; or NULL */
    bool any;               /* some option changes the model */
} cli_interventions;
/* Reads the options into *ci for a model of config c, checking layer/head ranges and the
 * combinations; false (message printed, *ci freed) on bad input. */
bool cli_interventions_parse(cli_args *a, const atn_config *c, cli_interventions *ci);
/* --global-tokens / --hide-tokens inside an input of n tokens; false (message printed). */
bool cli_interventions_check_tokens(const cli_interventions *ci, const char *prog, int32_t n);
void cli_interventions_free(cli_interventions *ci);   /* NULL: nothing */
/* The what-if options given, as a figure's title names them ("what-if: --heads-off 0:1
 * --alibi"), into buf; "" when none. */
void cli_whatif_title(cli_args *a, char *buf, size_t size);

/* Sub-commands: int cmd(int argc, char **argv), argv[0] is the sub-command name. */
typedef int (*cli_command_fn)(int argc, char **argv);
int cmd_models(int argc, char **argv);
int cmd_info(int argc, char **argv);     /* app/cmd-info.c */
int cmd_download(int argc, char **argv);   /* app/cmd-download.c, through hub/ */
int cmd_run(int argc, char **argv);
int cmd_trace(int argc, char **argv);
int cmd_devices(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_stats(int argc, char **argv);
/* app/cmd-stats-shard.c: stats --shard / -o PART.safetensors (a parsed command line) and
 * stats merge; app/cmd-examples.c: attnscope examples. */
int cmd_stats_shard(cli_args *a);
int cmd_stats_merge(int argc, char **argv);
/* stats --from's input: one partial, or @LIST (one partial a line, relative to LIST's folder)
 * merged in memory as `stats merge` would.  NULL after a message naming the file (and, for
 * partials that do not merge, both files); the exit code in *rc. */
struct atn_corpus_stats *cli_load_partials(const char *arg, int *rc);
/* The lines want[0..n) (1-based, numbered as stats --shard numbers --corpus ARG: one file, or
 * @LIST's files one after another) into text[0..n) (malloc'd; NULL where a line does not exist;
 * text must come zeroed), and the corpus's line count into *n_lines.  false after a message
 * naming the file that could not be read. */
bool cli_corpus_read_lines(const char *arg, const int64_t *want, int32_t n, char **text, int64_t *n_lines);
int cmd_examples(int argc, char **argv);
int cmd_view(int argc, char **argv);     /* app/cmd-view.c: the window on an attention file */
int cmd_similarity(int argc, char **argv);
int cmd_tokenize(int argc, char **argv);
int cmd_predict(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_cost(int argc, char **argv);
int cmd_importance(int argc, char **argv);
int cmd_train(int argc, char **argv);     /* app/cmd-train.c, the training lab */


/* Writing a user's file through a temporary name in the same folder (the engine's
 * atn_atomic_open): open, write to f with stdio, then cli_atomic_close renames it into
 * place (or removes it when ok is false or the command was interrupted), saying on stderr
 * what went wrong. */
typedef struct cli_atomic_file {
    FILE *f;
    atn_atomic_file *file;
    char path[4096];
} cli_atomic_file;
bool cli_atomic_open(cli_atomic_file *af, const char *path);
bool cli_atomic_close(cli_atomic_file *af, bool ok);

/* Flushes stdout and checks that every write to it succeeded; false (and once per process
 * "standard output: write failed: REASON" on stderr) when one failed (a full disk, a closed
 * pipe with SIGPIPE ignored, a file grown past ulimit -f).  cli_stdout_close also closes it
 * (main, after the command: its exit status becomes 2). */
bool cli_stdout_flush(void);
bool cli_stdout_close(void);

/* Writes a double as JSON (null for NaN/Inf, which JSON cannot hold). */
void cli_json_number(FILE *f, double v);
void cli_json_string(FILE *f, const char *s);

#endif
