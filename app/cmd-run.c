/* attnscope run: run a model and write every head's attention, as .npy or .json. */
#include "cli.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>

/* How a size given to disk_room is known. */
typedef enum { SIZE_EXACT, SIZE_AT_LEAST, SIZE_AT_MOST } size_kind;

/* An on-demand capture's attention is never whole in memory, so nothing bounded its size before
 * the write: L x H x n x n float32 can be far more than the disk has.  Before writing `out`
 * (need bytes: exactly, at least (the floats alone) or at most, as `kind` says), the free space
 * of its folder's file system (statvfs, as an unprivileged user may use it) must hold it; false
 * after a message naming the file and both figures.  A folder statvfs cannot read passes: the
 * write itself then says why. */
static bool disk_room(const char *out, const atn_capture *cap, double need, size_kind kind) {
    const char *slash = strrchr(out, '/');
    char dir[4096];
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else
        snprintf(dir, sizeof dir, "%.*s", slash == out ? 1 : (int)(slash - out), out);
    struct statvfs sv;
    if (statvfs(dir, &sv) != 0)
        return true;
    double avail = (double)sv.f_bavail * (double)sv.f_frsize;
    if (avail >= need)
        return true;
    cli_error("attnscope run: %s needs %s%.1f MB of disk (%d layers x %d heads x %d x %d floats, made head by head), "
              "but its file system has %.1f MB free", out,
              kind == SIZE_AT_LEAST ? "at least " : kind == SIZE_AT_MOST ? "up to " : "", need / 1e6, cap->n_layers,
              cap->n_heads, cap->n, cap->n, avail / 1e6);
    return false;
}

static bool ends_with(const char *s, const char *suffix) {
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

typedef struct compare compare;
static void compare_json(FILE *f, const compare *c, const atn_capture *low);

/* write_json's text before the attention lists: the tokens, ids, type ids, mask and shape. */
static void json_prelude(FILE *f, const atn_capture *cap) {
    const atn_encoding *e = cap->enc;
    int32_t n = cap->n;
    fputs("{\n  \"tokens\": [", f);
    for (int32_t i = 0; i < n; i++) {
        if (i)
            fputs(", ", f);
        cli_json_string(f, e->tokens[i].text);
    }
    fputs("],\n  \"ids\": [", f);
    for (int32_t i = 0; i < n; i++)
        fprintf(f, "%s%d", i ? ", " : "", e->ids[i]);
    fputs("],\n  \"type_ids\": [", f);
    for (int32_t i = 0; i < n; i++)
        fprintf(f, "%s%d", i ? ", " : "", e->type_ids[i]);
    fputs("],\n  \"mask\": [", f);
    for (int32_t i = 0; i < n; i++)
        fprintf(f, "%s%d", i ? ", " : "", e->mask[i]);
    fprintf(f, "],\n  \"shape\": [%d, %d, %d, %d],\n  \"attentions\": [", cap->n_layers, cap->n_heads, n, n);
}

/* write_json's text after the attention lists. */
static void json_tail(FILE *f, const atn_capture *cap, const compare *cmp) {
    fprintf(f, "],\n  \"nonfinite_layer\": %d", cap->nonfinite_layer);
    if (cmp)
        compare_json(f, cmp, cap);
    else if (cap->precision != ATN_PRECISION_FP32) {
        fputs(",\n  \"precision\": {\"name\": ", f);
        cli_json_string(f, atn_precision_name(cap->precision));
        fprintf(f, ", \"fp16_overflow\": %lld}", (long long)cap->fp16_overflow_total);
    }
    fputs("\n}\n", f);
}

/* The most bytes write_json writes for cap: its text before and after the attention lists
 * exactly (written to memory), and the lists at most: each weight 15 characters ("%.9g" of a
 * float: "-1.23456789e-38"; "null" is 4) and its ", " or its row's "]", each row's ", [",
 * each head's ",\n    [" and "]", each layer's ",\n   [" and "]".  -1 when out of memory. */
static double json_bytes_max(const atn_capture *cap, const compare *cmp) {
    char *buf = NULL;
    size_t len = 0, around = 0;
    FILE *m = open_memstream(&buf, &len);
    if (!m)
        return -1;
    json_prelude(m, cap);
    json_tail(m, cap, cmp);
    bool ok = fclose(m) == 0;
    around = len;
    free(buf);
    if (!ok)
        return -1;
    double L = cap->n_layers, H = cap->n_heads, n = cap->n;
    return (double)around + L * H * n * (n * 17 + 3) + L * H * 8 + L * 7;
}

static bool write_json(const char *path, const atn_capture *cap, const compare *cmp) {
    cli_atomic_file af;
    if (!cli_atomic_open(&af, path))
        return false;
    FILE *f = af.f;
    int32_t n = cap->n;
    /* room for one head made on demand (a full capture's heads are read in place) */
    float *scratch = cap->attn ? NULL : malloc((size_t)n * n * sizeof(float));
    if (!cap->attn && !scratch) {
        cli_error("out of memory");
        return cli_atomic_close(&af, false);
    }
    json_prelude(f, cap);
    for (int32_t l = 0; l < cap->n_layers; l++) {
        fputs(l ? ",\n   [" : "\n   [", f);
        for (int32_t h = 0; h < cap->n_heads; h++) {
            fputs(h ? ",\n    [" : "\n    [", f);
            atn_error herr = {0};
            const float *a = atn_capture_head_read(cap, l, h, scratch, &herr);
            if (!a) {
                free(scratch);
                cli_fail(&herr);
                return cli_atomic_close(&af, false);
            }
            for (int32_t i = 0; i < n; i++) {
                fputs(i ? ", [" : "[", f);
                for (int32_t j = 0; j < n; j++) {
                    if (j)
                        fputs(", ", f);
                    cli_json_number(f, a[(size_t)i * n + j]);
                }
                fputc(']', f);
            }
            fputc(']', f);
        }
        fputc(']', f);
    }
    json_tail(f, cap, cmp);
    free(scratch);
    return cli_atomic_close(&af, true);
}

/* An encoder-decoder's run as JSON: the source and target ids, then each stack by its name
 * ("encoder", "decoder", "cross") with its shape [L, H, queries, keys] and nested lists. */
static bool write_stacks_json(const char *path, const atn_capture *cap) {
    cli_atomic_file af;
    if (!cli_atomic_open(&af, path))
        return false;
    FILE *f = af.f;
    fputs("{\n  \"source_ids\": [", f);
    for (int32_t i = 0; i < cap->n; i++)
        fprintf(f, "%s%d", i ? ", " : "", cap->enc->ids[i]);
    fputs("],\n  \"source_mask\": [", f);
    for (int32_t i = 0; i < cap->n; i++)
        fprintf(f, "%s%d", i ? ", " : "", cap->enc->mask[i]);
    fputs("],\n  \"target_ids\": [", f);
    for (int32_t i = 0; i < cap->n_tgt; i++)
        fprintf(f, "%s%d", i ? ", " : "", cap->target_ids[i]);
    fputc(']', f);
    for (int32_t s = 0; s < cap->n_stacks; s++) {
        const atn_stack *st = &cap->stacks[s];
        fprintf(f, ",\n  \"%s\": {\"shape\": [%d, %d, %d, %d], \"attentions\": [", st->name, st->n_layers,
                st->n_heads, st->n_q, st->n_k);
        for (int32_t l = 0; l < st->n_layers; l++) {
            fputs(l ? ",\n   [" : "\n   [", f);
            for (int32_t h = 0; h < st->n_heads; h++) {
                fputs(h ? ", [" : "[", f);
                const float *a = st->attn + ((size_t)l * st->n_heads + h) * st->n_q * st->n_k;
                for (int32_t i = 0; i < st->n_q; i++) {
                    fputs(i ? ", [" : "[", f);
                    for (int32_t j = 0; j < st->n_k; j++) {
                        if (j)
                            fputs(", ", f);
                        cli_json_number(f, a[(size_t)i * st->n_k + j]);
                    }
                    fputc(']', f);
                }
                fputc(']', f);
            }
            fputc(']', f);
        }
        fputs("]}", f);
    }
    fputs("\n}\n", f);
    return cli_atomic_close(&af, true);
}

/* --compare-fp32: how far the reduced-precision run moves from the same run in fp32. */
typedef struct guess_change {
    int32_t pos;
    atn_prediction ref, low;
} guess_change;

typedef struct compare {
    const char *name;               /* "bf16" */
    int32_t L, H;
    float *mx, *mean;               /* [L][H] |p_low - p_fp32| */
    float *hmax, *hrel;             /* [L+1] hidden-state drift */
    int32_t top[5], n_top;          /* the heads that move most (by max |difference|) */
    const char *guess_kind;         /* "[MASK]", "next-token" or NULL (no head) */
    int32_t n_guesses;              /* positions guessed */
    guess_change *changed;          /* the ones whose top guess changed */
    int32_t n_changed;
} compare;

/* NaN (a head that overflowed) ranks above every number. */
static float rank_key(float x) { return x != x ? INFINITY : x; }

static void compare_free(compare *c) {
    free(c->mx);
    free(c->mean);
    free(c->hmax);
    free(c->hrel);
    free(c->changed);
}

static int compare_compute(const atn_model *model, const atn_capture *low, const atn_capture *ref, compare *c) {
    memset(c, 0, sizeof *c);
    c->name = atn_precision_name(low->precision);
    c->L = ref->n_layers, c->H = ref->n_heads;
    size_t heads = (size_t)c->L * c->H;
    c->mx = calloc(heads, sizeof(float)), c->mean = calloc(heads, sizeof(float));
    c->hmax = calloc((size_t)c->L + 1, sizeof(float)), c->hrel = calloc((size_t)c->L + 1, sizeof(float));
    c->changed = calloc((size_t)ref->n, sizeof(guess_change));
    atn_error err = {0};
    if (!c->mx || !c->mean || !c->hmax || !c->hrel || !c->changed) {
        cli_error("out of memory");
        return CLI_EXIT_FAIL;
    }
    if (atn_precision_compare(ref, low, c->mx, c->mean, c->hmax, c->hrel, &err))
        return cli_fail(&err);
    for (size_t i = 0; i < heads; i++) {   /* the five largest, in order */
        if (c->n_top < 5)
            c->top[c->n_top++] = (int32_t)i;
        else if (rank_key(c->mx[i]) > rank_key(c->mx[c->top[4]]))
            c->top[4] = (int32_t)i;
        else
            continue;
        for (int32_t k = c->n_top - 1; k > 0 && rank_key(c->mx[c->top[k]]) > rank_key(c->mx[c->top[k - 1]]); k--) {
            int32_t t = c->top[k];
            c->top[k] = c->top[k - 1], c->top[k - 1] = t;
        }
    }
    bool causal = atn_model_is_causal(model), mlm = !causal && atn_model_has_mlm_head(model);
    c->guess_kind = causal ? "next-token" : mlm ? "[MASK]" : NULL;
    for (int32_t i = 0; c->guess_kind && i < ref->n; i++) {
        const atn_token *t = &ref->enc->tokens[i];
        if (!ref->enc->mask[i] || (mlm && t->role != ATN_TOKEN_MASK))
            continue;
        atn_prediction a, b;
        atn_status st = causal ? atn_predict_next(model, ref, i, 1, &a, &err) : atn_predict_position(model, ref, i, 1,
                                                                                                   &a, &err);
        if (st == ATN_OK)
            st = causal ? atn_predict_next(model, low, i, 1, &b, &err) : atn_predict_position(model, low, i, 1, &b,
                                                                                             &err);
        if (st)
            return cli_fail(&err);
        c->n_guesses++;
        if (a.id != b.id)
            c->changed[c->n_changed++] = (guess_change){i, a, b};
    }
    return CLI_EXIT_OK;
}

static void compare_print(FILE *f, const compare *c, const atn_capture *ref) {
    fprintf(f, "%s vs fp32 attention, |p_%s - p_fp32| per head\nlayer head   max        mean\n", c->name, c->name);
    float worst = 0;
    for (int32_t i = 0; i < c->L * c->H; i++) {
        fprintf(f, "%5d %4d   %.3e  %.3e\n", i / c->H, i % c->H, c->mx[i], c->mean[i]);
        worst = c->mx[i] > worst || c->mx[i] != c->mx[i] ? c->mx[i] : worst;
    }
    fprintf(f, "largest difference over all heads: %.3e\nheads that move most:", worst);
    for (int32_t k = 0; k < c->n_top; k++)
        fprintf(f, "%s layer %d head %d (%.3e)", k ? "," : "", c->top[k] / c->H, c->top[k] % c->H, c->mx[c->top[k]]);
    fprintf(f, "\nhidden-state drift (real tokens): state  max |dh|   ||dh|| / ||h||\n");
    for (int32_t l = 0; l <= c->L; l++) {
        char what[32];
        snprintf(what, sizeof what, l ? "after layer %d" : "embeddings", l - 1);
        fprintf(f, "  %-16s %.3e  %.3e\n", what, fabs(c->hmax[l]), fabs(c->hrel[l]));
    }
    if (!c->guess_kind)
        fprintf(f, "guesses: the model has no masked-LM or next-token head\n");
    else if (c->n_guesses == 0)
        fprintf(f, "guesses: no [MASK] in the input\n");
    else
        fprintf(f, "%s guesses changed: %d of %d\n", c->guess_kind, c->n_changed, c->n_guesses);
    for (int32_t k = 0; k < c->n_changed; k++) {
        const guess_change *g = &c->changed[k];
        fprintf(f, "  position %d (%s): fp32 \"%s\" (%.4f) -> %s \"%s\" (%.4f)\n", g->pos, ref->enc->tokens[g->pos].text,
                g->ref.token, g->ref.prob, c->name, g->low.token, g->low.prob);
    }
}

static void json_floats(FILE *f, const float *v, int32_t n) {
    fputc('[', f);
    for (int32_t i = 0; i < n; i++) {
        if (i)
            fputs(", ", f);
        cli_json_number(f, v[i]);
    }
    fputc(']', f);
}

/* The "precision" member of the JSON output (after "nonfinite_layer"). */
static void compare_json(FILE *f, const compare *c, const atn_capture *low) {
    fputs(",\n  \"precision\": {\"name\": ", f);
    cli_json_string(f, c->name);
    fputs(", \"compare_fp32\": {\n    \"max_abs\": [", f);
    for (int32_t l = 0; l < c->L; l++) {
        fputs(l ? ", " : "", f);
        json_floats(f, c->mx + (size_t)l * c->H, c->H);
    }
    fputs("],\n    \"mean_abs\": [", f);
    for (int32_t l = 0; l < c->L; l++) {
        fputs(l ? ", " : "", f);
        json_floats(f, c->mean + (size_t)l * c->H, c->H);
    }
    fputs("],\n    \"most_moved\": [", f);
    for (int32_t k = 0; k < c->n_top; k++)
        fprintf(f, "%s[%d, %d]", k ? ", " : "", c->top[k] / c->H, c->top[k] % c->H);
    fputs("],\n    \"hidden_max_abs\": ", f);
    json_floats(f, c->hmax, c->L + 1);
    fputs(",\n    \"hidden_relative\": ", f);
    json_floats(f, c->hrel, c->L + 1);
    fprintf(f, ",\n    \"guess_kind\": ");
    if (c->guess_kind)
        cli_json_string(f, c->guess_kind);
    else
        fputs("null", f);
    fprintf(f, ", \"guesses\": %d, \"changed_guesses\": [", c->n_guesses);
    for (int32_t k = 0; k < c->n_changed; k++) {
        const guess_change *g = &c->changed[k];
        fprintf(f, "%s{\"position\": %d, \"fp32\": ", k ? ", " : "", g->pos);
        cli_json_string(f, g->ref.token);
        fputs(", \"fp32_prob\": ", f);
        cli_json_number(f, g->ref.prob);
        fputs(", \"reduced\": ", f);
        cli_json_string(f, g->low.token);
        fputs(", \"reduced_prob\": ", f);
        cli_json_number(f, g->low.prob);
        fputc('}', f);
    }
    fprintf(f, "],\n    \"fp16_overflow\": %lld}}", (long long)low->fp16_overflow_total);
}

int cmd_run(int argc, char **argv) {
    cli_args a;
    static const char *const flags[] = {"help", "compare-fp32", "qkv", CLI_INTERVENTION_FLAGS, NULL};
    if (!cli_parse(&a, "attnscope run", argc, argv, flags))
        return CLI_EXIT_USAGE;
    if (cli_flag(&a, "help")) {
        printf("Usage: attnscope run --model M (--text T [--text-pair T2] | --ids 1,2,3 [--type-ids ...] "
               "[--mask 1,1,0] | --tokens N) [--device cpu|cuda|auto] [--precision fp32|bf16|fp16 [--compare-fp32]]\n"
               "       [--target TEXT | --target-ids 0,5,7] [--stack encoder|decoder|cross]\n"
               "       -o OUT.npy|OUT.json|OUT.safetensors|OUT.npz   (with --compare-fp32, -o may be left out: only the\n"
               "       comparison, on standard output)\n\n"
               "Writes the attention of every layer and head: .npy is float32 [layers, heads, n, n];\n"
               ".json has tokens, ids and the nested attention lists; .safetensors is an attention file\n"
               "(docs/attention-file.md) that --attention FILE and `attnscope view` open without the model;\n"
               "with --qkv it also holds every head's q, k, v and the model's scale, so `attnscope trace\n"
               "--attention FILE` and the window's Trace view work from it.\n"
               "Toy models take no text.\n"
               "--model random:SHAPE (e.g. random:gpt2) runs a model of that shape with random weights;\n"
               "--tokens N gives N made-up ids (as bench runs) to any model that takes ids.\n"
               "An encoder-decoder (T5, BART, Marian) reads --text as the source and --target as the decoder's\n"
               "input: its start token, then the target's tokens but the last (teacher forcing); without\n"
               "--target the start token alone.  -o OUT.npz writes its three stacks as arrays encoder\n"
               "[L, H, n, n], decoder [Ld, H, t, t] and cross [Ld, H, t, n] (target rows, source columns);\n"
               "-o OUT.json writes them under the same names with source_ids and target_ids; --stack picks\n"
               "one for .npy; -o OUT.safetensors writes the three as an attention file (the encoder's shown,\n"
               "the decoder's tokens as query_tokens, the source's as key_tokens).\n"
               "-o - --format npy|json writes to standard output.\n\n"
               "--precision bf16|fp16 rounds the operands of every matrix product to that format and sums in\n"
               "fp32, as autocast does (softmax, LayerNorm, GELU stay fp32; on a CPU without bf16/fp16\n"
               "arithmetic the numbers are emulated by rounding, said once on stderr; fp16 overflow is\n"
               "reported per layer).  --compare-fp32 runs the same input in fp32 too and prints per layer and\n"
               "head the max and mean |difference| of the maps, the heads that move most, the hidden-state\n"
               "drift and the changed [MASK] / next-token guesses (in the .json output as \"precision\").\n\n"
               CLI_INTERVENTION_HELP);
        return 0;
    }
    const char *out = cli_get(&a, "output"), *format = cli_get(&a, "format");
    /* --compare-fp32 without -o: only its report, on standard output */
    bool report_only = !out && cli_flag(&a, "compare-fp32");
    if (report_only && format) {
        cli_error("attnscope run: --format goes with -o - (standard output)");
        return CLI_EXIT_USAGE;
    }
    if (report_only)
        out = "";
    else if (!out) {
        cli_error("attnscope run: -o OUT.npy or -o OUT.json is required");
        return CLI_EXIT_USAGE;
    }
    bool to_stdout = !strcmp(out, "-");
    if (to_stdout && (!format || (strcmp(format, "npy") && strcmp(format, "json")))) {
        cli_error("attnscope run: -o - (standard output) needs --format npy or --format json");
        return CLI_EXIT_USAGE;
    }
    if (!to_stdout && format) {
        cli_error("attnscope run: --format goes with -o - (standard output); name the file OUT.npy|OUT.json");
        return CLI_EXIT_USAGE;
    }
    if (!to_stdout && !report_only && !ends_with(out, ".npy") && !ends_with(out, ".json") &&
        !ends_with(out, ".safetensors") && !ends_with(out, ".npz")) {
        cli_error("attnscope run: output \"%s\" must end in .npy or .json (or .safetensors, an attention file; "
                  ".npz for an encoder-decoder's three stacks)", out);
        return CLI_EXIT_USAGE;
    }
    bool npz = !to_stdout && ends_with(out, ".npz");
    const char *stack_s = cli_get(&a, "stack");
    atn_stack_kind stack_kind = ATN_STACK_ENCODER;
    if (stack_s && !atn_stack_kind_parse(stack_s, &stack_kind)) {
        cli_error("attnscope run: --stack is encoder, decoder or cross, not \"%s\"", stack_s);
        return CLI_EXIT_USAGE;
    }
    bool npy = to_stdout ? !strcmp(format, "npy") : ends_with(out, ".npy");
    bool attn_file = !to_stdout && ends_with(out, ".safetensors");
    bool want_compare = cli_flag(&a, "compare-fp32"), qkv = cli_flag(&a, "qkv");
    if (qkv && !attn_file) {
        cli_error("attnscope run: --qkv goes with -o OUT.safetensors (an attention file), not \"%s\"", out);
        return CLI_EXIT_USAGE;
    }
    const char *prec = cli_get(&a, "precision");
    if (want_compare && (!prec || !strcmp(prec, "fp32"))) {
        cli_error("attnscope run: --compare-fp32 needs --precision bf16 or fp16");
        return CLI_EXIT_USAGE;
    }
    atn_model *model;
    atn_encoding *enc;
    atn_run *run, *run32 = NULL;
    int rc = cli_model_run_pair(&a, &model, &enc, &run, want_compare ? &run32 : NULL);
    compare cmp;
    bool have_cmp = false;
    if (rc == CLI_EXIT_OK && want_compare) {
        rc = compare_compute(model, atn_run_capture(run), atn_run_capture(run32), &cmp);
        have_cmp = true;
        if (rc == CLI_EXIT_OK)   /* on standard output unless the attention goes there */
            compare_print(to_stdout ? stderr : stdout, &cmp, atn_run_capture(run32));
    }
    if (rc == CLI_EXIT_OK && report_only && !cli_stdout_flush())
        rc = CLI_EXIT_USAGE;
    if (rc == CLI_EXIT_OK && !report_only) {
        const atn_capture *cap = atn_run_capture(run);
        if (cap->nonfinite_layer >= 0)
            fprintf(stderr, "attnscope: warning: values became NaN or infinite at layer %d\n", cap->nonfinite_layer);
        bool ok;
        const atn_stack *stack = stack_s ? atn_capture_stack(cap, stack_kind) : NULL;
        /* .npy: a 128-byte header and the floats, exactly; an attention file: the floats and a
           header; JSON: at most json_bytes_max (refused when the disk has less, though the
           file may have fitted) */
        double floats = (double)cap->n_layers * cap->n_heads * (double)cap->n * cap->n;
        bool json = !npy && !attn_file;
        double json_max = json && !cap->attn && cap->attn_on_demand ? json_bytes_max(cap, have_cmp ? &cmp : NULL) : 0;
        if (!cap->attn && cap->attn_on_demand && !to_stdout && !stack_s && !npz &&
            !disk_room(out, cap, npy ? 128 + 4 * floats : attn_file ? 4 * floats : json_max >= 0 ? json_max : 2 * floats,
                       npy ? SIZE_EXACT : attn_file || json_max < 0 ? SIZE_AT_LEAST : SIZE_AT_MOST))
            ok = false;
        else if ((npz || stack_s) && !cap->n_stacks) {
            cli_error("attnscope run: %s is for encoder-decoder models (T5, BART, Marian); model \"%s\" is %s",
                      npz ? ".npz output" : "--stack", atn_model_name(model), atn_model_family_name(model));
            ok = false;
        } else if (cap->n_stacks && !npz && !stack && !npy && !attn_file && !have_cmp) {
            ok = write_stacks_json(out, cap);
        } else if (cap->n_stacks && attn_file && stack_s) {
            cli_error("attnscope run: an attention file holds all three stacks (encoder, decoder, cross): leave out "
                      "--stack %s", stack_s);
            ok = false;
        } else if (cap->n_stacks && !npz && !stack && !attn_file) {
            cli_error("attnscope run: model \"%s\" is an encoder-decoder with three stacks of attention: write "
                      "them all with -o OUT.npz (arrays encoder, decoder, cross) or OUT.json, or pick one with "
                      "--stack encoder|decoder|cross", atn_model_name(model));
            ok = false;
        } else if (npz) {   /* encoder [L][H][n][n], decoder [Ld][H][t][t], cross [Ld][H][t][n] */
            atn_error err = {0};
            ok = !cli_interrupted() && atn_capture_write_stacks_npz(out, cap, &err) == ATN_OK;
            if (!ok && !cli_interrupted())
                cli_fail(&err);
        } else if (stack && npy) {
            int64_t shape[4] = {stack->n_layers, stack->n_heads, stack->n_q, stack->n_k};
            atn_error err = {0};
            ok = !cli_interrupted() && atn_npy_write_f32(out, stack->attn, shape, 4, &err) == ATN_OK;
            if (!ok && !cli_interrupted())
                cli_fail(&err);
        } else if (stack && stack->kind != ATN_STACK_ENCODER) {
            cli_error("attnscope run: --stack %s writes .npy or .npz for now (JSON and attention files hold the "
                      "encoder's)", stack->name);
            ok = false;
        } else if (attn_file) {
            atn_attn_file_meta meta = {.model_id = atn_model_name(model), .family = atn_model_family_name(model),
                                       .source = "attnscope", .causal = atn_model_is_causal(model),
                                       .qkv = qkv, .model = model};
            atn_error err = {0};
            ok = !cli_interrupted() && atn_attn_file_write(out, cap, &meta, &err) == ATN_OK;
            if (!ok && !cli_interrupted())
                cli_fail(&err);
        } else if (npy) {
            atn_error err = {0};   /* head by head: an on-demand capture is never whole */
            ok = !cli_interrupted() && atn_npy_write_attention(out, cap, cli_keep_going, NULL, &err) == ATN_OK;
            if (!ok && !cli_interrupted())
                cli_fail(&err);
        } else {
            ok = write_json(out, cap, have_cmp ? &cmp : NULL);
        }
        rc = ok ? CLI_EXIT_OK : CLI_EXIT_USAGE;   /* an unwritable output, as everywhere */
    }
    if (have_cmp)
        compare_free(&cmp);
    atn_run_free(run32);
    atn_run_free(run);
    atn_encoding_free(enc);
    atn_model_free(model);
    return rc;
}
