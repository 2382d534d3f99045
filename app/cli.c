/* Command-line plumbing shared by the sub-commands. */
#include "cli.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <sys/stat.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t interrupted;   /* the signal, once SIGINT or SIGTERM came */

void cli_error(const char *fmt, ...) {
    char small[1024], *msg = small;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n >= (int)sizeof small && (msg = malloc((size_t)n + 1))) {
        va_start(ap, fmt);
        vsnprintf(msg, (size_t)n + 1, fmt, ap);
        va_end(ap);
    }
    if (!msg)
        msg = small;   /* cut, rather than nothing */
    /* one prefix: a message that names its command ("attnscope run: ...") keeps that one */
    bool named = strncmp(msg, "attnscope ", 10) == 0 || strncmp(msg, "attnscope:", 10) == 0;
    /* one line: a control character (a newline or an escape sequence inside an argument or
       a file name) is shown escaped, never sent to the terminal */
    fputs(named ? "" : "attnscope: ", stderr);
    for (const unsigned char *p = (const unsigned char *)msg; *p; p++) {
        if (*p == '\n')
            fputs("\\n", stderr);
        else if (*p == '\t')
            fputs("\\t", stderr);
        else if (*p < 0x20 || *p == 0x7f)
            fprintf(stderr, "\\x%02x", *p);
        else
            fputc(*p, stderr);
    }
    fputc('\n', stderr);
    if (msg != small)
        free(msg);
}

int cli_fail(const atn_error *err) {
    if (err->status == ATN_E_CANCELLED && interrupted)
        return CLI_EXIT_USAGE;   /* main says "interrupted" */
    cli_error("%s", err->message[0] ? err->message : atn_status_str(err->status));
    return CLI_EXIT_USAGE;
}

bool cli_parse(cli_args *a, const char *prog, int argc, char **argv, const char *const *flags) {
    memset(a, 0, sizeof *a);
    a->prog = prog;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (arg[0] != '-' || arg[1] == '\0') {
            if (a->n_positional < CLI_MAX_OPTS)
                a->positional[a->n_positional++] = arg;
            continue;
        }
        if (a->n >= CLI_MAX_OPTS) {
            cli_error("%s: too many options", prog);
            return false;
        }
        const char *name = arg + (arg[1] == '-' ? 2 : 1);
        if (!strcmp(name, "o"))
            name = "output";
        const char *eq = strchr(name, '=');
        static char names_buf[CLI_MAX_OPTS][64];
        if (eq) {
            size_t len = (size_t)(eq - name) < 63 ? (size_t)(eq - name) : 63;
            memcpy(names_buf[a->n], name, len);
            names_buf[a->n][len] = 0;
            a->names[a->n] = names_buf[a->n];
            a->values[a->n++] = eq + 1;
            continue;
        }
        bool is_flag = false;
        for (int f = 0; flags && flags[f]; f++)
            is_flag |= strcmp(flags[f], name) == 0;
        a->names[a->n] = name;
        if (is_flag) {
            a->values[a->n++] = NULL;
        } else {
            if (i + 1 >= argc) {
                cli_error("%s: option --%s needs a value", prog, name);
                return false;
            }
            a->values[a->n++] = argv[++i];
        }
    }
    return true;
}

static int find(cli_args *a, const char *name) {
    for (int i = a->n - 1; i >= 0; i--)   /* the last one given wins */
        if (!strcmp(a->names[i], name)) {
            for (int j = 0; j < a->n; j++)
                if (!strcmp(a->names[j], name))
                    a->used[j] = true;
            return i;
        }
    return -1;
}

const char *cli_get(cli_args *a, const char *name) {
    int i = find(a, name);
    return i < 0 ? NULL : a->values[i] ? a->values[i] : "";
}

bool cli_flag(cli_args *a, const char *name) { return find(a, name) >= 0; }

int cli_get_all(cli_args *a, const char *name, const char **out, int max) {
    int n = 0;
    for (int i = 0; i < a->n; i++)
        if (!strcmp(a->names[i], name)) {
            a->used[i] = true;
            if (n < max)
                out[n] = a->values[i] ? a->values[i] : "";
            n++;
        }
    return n;
}

long cli_get_int(cli_args *a, const char *name, long dflt, long lo, long hi, bool *ok) {
    const char *v = cli_get(a, name);
    if (!v)
        return dflt;
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (end == v || *end) {
        cli_error("%s: --%s takes an integer, not \"%s\"", a->prog, name, v);
        *ok = false;
        return dflt;
    }
    if (errno == ERANGE || x < lo || x > hi) {
        cli_error("%s: --%s must be an integer in %ld..%ld, not \"%s\"", a->prog, name, lo, hi, v);
        *ok = false;
        return dflt;
    }
    return x;
}

double cli_get_double(cli_args *a, const char *name, double dflt, double lo, double hi, bool *ok) {
    const char *v = cli_get(a, name);
    if (!v)
        return dflt;
    char *end;
    errno = 0;
    double x = strtod(v, &end);
    if (end == v || *end) {
        cli_error("%s: --%s takes a number, not \"%s\"", a->prog, name, v);
        *ok = false;
        return dflt;
    }
    if (!isfinite(x) || !(x >= lo && x <= hi)) {
        cli_error("%s: --%s must be a number in %g..%g, not \"%s\"", a->prog, name, lo, hi, v);
        *ok = false;
        return dflt;
    }
    return x;
}

bool cli_check_unused(cli_args *a) {
    bool ok = true;
    for (int i = 0; i < a->n; i++)
        if (!a->used[i]) {
            cli_error("%s: unknown option --%s", a->prog, a->names[i]);
            ok = false;
        }
    for (int i = 0; i < a->n_positional; i++) {
        cli_error("%s: unexpected argument \"%s\"", a->prog, a->positional[i]);
        ok = false;
    }
    return ok;
}

void cli_mark_model_options(cli_args *a) {
    static const char *const input[] = {"model", "text", "text-pair", "ids", "tokens", "type-ids", "mask", "target",
                                        "target-ids", NULL};
    for (int i = 0; input[i]; i++)
        cli_get(a, input[i]);
    cli_mark_whatif_options(a);
}

void cli_mark_whatif_options(cli_args *a) {
    for (int i = 0; cli_intervention_options[i]; i++)
        cli_get(a, cli_intervention_options[i]);
}

int cli_parse_int_list(const char *s, const char *what, int32_t **out) {
    *out = NULL;
    int cap = 16, n = 0;
    int32_t *v = malloc((size_t)cap * sizeof *v);
    if (!v)
        return -1;
    const char *p = s;
    while (*p) {
        char *end;
        long x = strtol(p, &end, 10);
        if (end == p || x < -2147483647L || x > 2147483647L) {
            cli_error("%s: \"%s\" is not a comma-separated list of integers", what, s);
            free(v);
            return -1;
        }
        if (n == cap) {
            cap *= 2;
            int32_t *nv = realloc(v, (size_t)cap * sizeof *v);
            if (!nv) {
                free(v);
                return -1;
            }
            v = nv;
        }
        v[n++] = (int32_t)x;
        p = end;
        while (*p == ' ')
            p++;
        if (*p == ',')
            p++;
        else if (*p) {
            cli_error("%s: \"%s\" is not a comma-separated list of integers", what, s);
            free(v);
            return -1;
        }
    }
    if (n == 0) {
        cli_error("%s: empty list", what);
        free(v);
        return -1;
    }
    *out = v;
    return n;
}

void cli_precision_note(atn_precision p) {
    static bool said;
    if (p == ATN_PRECISION_FP32 || said)
        return;
    said = true;
    fprintf(stderr, "attnscope: %s\n", atn_cpu_precision_note(p));
}

void cli_report_fp16_overflow(const atn_capture *cap) {
    if (!cap || !cap->fp16_overflow || cap->fp16_overflow_total == 0)
        return;
    for (int32_t row = 0; row <= cap->n_layers; row++) {
        const int64_t *c = cap->fp16_overflow + (size_t)row * ATN_OPERAND_COUNT;
        for (int op = 0; op < ATN_OPERAND_COUNT; op++) {
            if (!c[op])
                continue;
            char where[32];
            if (row == 0)
                snprintf(where, sizeof where, "the embeddings");
            else
                snprintf(where, sizeof where, "layer %d", row - 1);
            if (op == ATN_OPERAND_WEIGHTS)
                fprintf(stderr, "attnscope: fp16 overflow in %s: %lld weights are beyond fp16's 65504 and "
                        "became +-inf\n", where, (long long)c[op]);
            else
                fprintf(stderr, "attnscope: fp16 overflow in %s: %lld values of the %s reached 65520 and "
                        "became +-inf (fp16's largest is 65504)\n", where, (long long)c[op],
                        atn_operand_name((atn_operand)op));
        }
    }
}

void cli_note_on_demand(const atn_capture *c) {
    static bool said;
    if (!c || !c->attn_on_demand || said)
        return;
    said = true;
    fprintf(stderr, "attnscope: notice: the attention of %d layers x %d heads x %d x %d tokens does not fit the "
            "memory limit: each head is made again when it is read (the same numbers)\n", c->n_layers, c->n_heads,
            c->n, c->n);
}

bool cli_parse_size(const char *text, size_t *out) { return atn_parse_size(text, out); }

bool cli_run_options(cli_args *a, atn_run_options *o) {
    atn_run_options_init(o);
    const char *dev = cli_get(a, "device");
    if (dev) {
        if (!strcmp(dev, "cpu"))
            o->device = ATN_DEVICE_CPU;
        else if (!strcmp(dev, "cuda") || !strcmp(dev, "gpu"))
            o->device = ATN_DEVICE_CUDA;
        else if (!strcmp(dev, "auto"))
            o->device = ATN_DEVICE_AUTO;
        else {
            cli_error("%s: --device must be cpu, cuda or auto, not \"%s\"", a->prog, dev);
            return false;
        }
    }
    const char *prec = cli_get(a, "precision");
    if (prec) {
        if (!strcmp(prec, "fp32"))
            o->precision = ATN_PRECISION_FP32;
        else if (!strcmp(prec, "fp16"))
            o->precision = ATN_PRECISION_FP16;
        else if (!strcmp(prec, "bf16"))
            o->precision = ATN_PRECISION_BF16;
        else {
            cli_error("%s: --precision must be fp32, fp16 or bf16, not \"%s\"", a->prog, prec);
            return false;
        }
    }
    if (o->device == ATN_DEVICE_CPU)
        cli_precision_note(o->precision);
    bool ok = true;
    o->threads = (int32_t)cli_get_int(a, "threads", 0, 0, 1024, &ok);   /* 0: OpenBLAS's count */
    const char *lim = cli_get(a, "memory-limit");
    if (lim && !cli_parse_size(lim, &o->memory_limit)) {
        cli_error("%s: --memory-limit must be a size such as 800M, 2G or 1500000000 (bytes), not \"%s\"", a->prog,
                  lim);
        return false;
    }
    o->progress = cli_keep_going;   /* Ctrl-C stops a forward pass within a layer */
    return ok;
}

static void on_signal(int sig) { interrupted = sig; }

void cli_catch_signals(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    /* a second Ctrl-C ends the process at once; no SA_RESTART, so that a blocking open (a FIFO
     * nobody reads) or read returns EINTR and the command ends */
    sa.sa_flags = SA_RESETHAND;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

bool cli_interrupted(void) { return interrupted != 0; }

bool cli_keep_going(double fraction, atn_stage stage, void *user_data) {
    (void)fraction, (void)stage, (void)user_data;
    return !interrupted;
}

bool cli_progress(double fraction, atn_stage stage, void *user_data) {
    (void)user_data;
    return cli_report(fraction, atn_stage_name(stage));
}

bool cli_report(double fraction, const char *what) {
    if (isatty(2)) {
        fprintf(stderr, "\r%-40s %3d%%", what, (int)(fraction * 100 + 0.5));
        if (fraction >= 1.0)
            fputc('\n', stderr);
        fflush(stderr);
    }
    return !interrupted;
}

atn_model *cli_open_model(cli_args *a, atn_error *err) {
    const char *name = cli_get(a, "model");
    if (!name) {
        atn_model *m = atn_model_open("demo", cli_progress, NULL, err);
        if (m)
            return m;
        name = "worked-example";
    }
    /* random:SHAPE with --tokens N past the shape's positions: N position rows (the first
       ones are the shape's, so shorter inputs give the same numbers) */
    const char *tok = cli_get(a, "tokens");
    long n = tok ? strtol(tok, NULL, 10) : 0;
    if (!strncmp(name, ATN_RANDOM_PREFIX, strlen(ATN_RANDOM_PREFIX)) && !strchr(name, '#') && n > 0 &&
        n <= 1 << 20) {
        const char *shape = name + strlen(ATN_RANDOM_PREFIX), *at = strchr(shape, '@');
        char sname[64];
        snprintf(sname, sizeof sname, "%.*s", (int)(at ? at - shape : (ptrdiff_t)strlen(shape)), shape);
        atn_config c;
        if (atn_random_shape_config(sname, &c, NULL) == ATN_OK && n > c.max_positions) {
            char grown[256];
            snprintf(grown, sizeof grown, "%s#%ld", name, n);
            return atn_model_open(grown, cli_progress, NULL, err);
        }
    }
    return atn_model_open(name, cli_progress, NULL, err);
}

atn_status cli_encode_tokens(const atn_model *m, int32_t n, atn_encoding **enc, atn_error *err) {
    *enc = NULL;
    const atn_config *c = atn_model_config(m);
    int32_t *ids = malloc((size_t)(n > 0 ? n : 1) * sizeof *ids), *types = malloc((size_t)(n > 0 ? n : 1) * sizeof *types);
    if (!ids || !types) {
        free(ids), free(types);
        return atn_error_set(err, ATN_E_NOMEM, "out of memory");
    }
    int32_t V = c->vocab_size;
    for (int32_t i = 0; i < n; i++) {
        if (V > 2000)
            ids[i] = i == 0 ? 101 : i == n - 1 ? 102 : 1000 + (int32_t)(((int64_t)i * 7919) % (V - 1000));
        else
            ids[i] = i % V;
        types[i] = (c->type_vocab_size > 1 && i >= n / 2) ? 1 : 0;
    }
    atn_status st = atn_model_encode_ids(m, ids, types, NULL, n, enc, err);
    free(ids), free(types);
    return st;
}

atn_status cli_encode(cli_args *a, const atn_model *m, atn_encoding **enc, atn_error *err) {
    const char *text = cli_get(a, "text"), *pair = cli_get(a, "text-pair");
    const char *ids_s = cli_get(a, "ids"), *types_s = cli_get(a, "type-ids"), *mask_s = cli_get(a, "mask");
    const char *tokens_s = cli_get(a, "tokens");
    int32_t *ids = NULL, *types = NULL, *mask = NULL;
    int n_ids = 0;
    atn_status st = ATN_OK;
    *enc = NULL;
    if (text && ids_s)
        return atn_error_set(err, ATN_E_INVALID, "give either --text or --ids, not both");
    if (tokens_s) {   /* N made-up ids, as `attnscope bench` runs: for models without a tokenizer */
        if (text || ids_s || types_s || mask_s)
            return atn_error_set(err, ATN_E_INVALID, "--tokens N makes the input: give it without --text, --ids, "
                                 "--type-ids or --mask");
        char *end;
        errno = 0;
        long n = strtol(tokens_s, &end, 10);
        if (end == tokens_s || *end || errno || n < 1 || n > 1000000)
            return atn_error_set(err, ATN_E_INVALID, "--tokens must be an integer in 1..1000000, not \"%s\"",
                                 tokens_s);
        if (atn_model_kind_of(m) == ATN_MODEL_TOY)
            return atn_error_set(err, ATN_E_INVALID, "model \"%s\" is a toy model: its tokens are in the file, so "
                                 "it takes no --tokens", atn_model_name(m));
        return cli_encode_tokens(m, (int32_t)n, enc, err);
    }
    if (pair && !text)
        return atn_error_set(err, ATN_E_INVALID, "--text-pair needs --text");
    if (ids_s && (n_ids = cli_parse_int_list(ids_s, "--ids", &ids)) < 0)
        return atn_error_set(err, ATN_E_INVALID, "bad --ids");
    if (types_s) {
        int nt = cli_parse_int_list(types_s, "--type-ids", &types);
        if (nt < 0 || !ids_s || nt != n_ids) {
            st = atn_error_set(err, ATN_E_INVALID, "--type-ids needs --ids and one type id per token (%d ids, %d "
                               "type ids)", n_ids, nt < 0 ? 0 : nt);
            goto done;
        }
    }
    if (mask_s) {
        int nm = cli_parse_int_list(mask_s, "--mask", &mask);
        int want = ids_s ? n_ids : atn_model_toy_n_tokens(m);
        if (nm < 0 || nm != want || text) {
            st = atn_error_set(err, ATN_E_INVALID, "--mask needs one 0/1 value per token (%d tokens, %d values)%s",
                               want, nm < 0 ? 0 : nm, text ? "; it goes with --ids or a toy model, not --text" : "");
            goto done;
        }
    }
    if (atn_model_kind_of(m) == ATN_MODEL_TOY) {
        if (text || ids_s) {
            st = atn_error_set(err, ATN_E_INVALID, "model \"%s\" is a toy model: its tokens are in the file, so it "
                               "takes no --text or --ids", atn_model_name(m));
            goto done;
        }
        st = atn_model_encode_toy(m, mask, enc, err);
    } else if (ids_s) {
        st = atn_model_encode_ids(m, ids, types, mask, n_ids, enc, err);
    } else {
        if (!text) {
            st = atn_error_set(err, ATN_E_INVALID, "model \"%s\" needs --text (or --ids, or --tokens N)",
                               atn_model_name(m));
            goto done;
        }
        st = atn_model_encode_cancellable(m, text, pair, cli_keep_going, NULL, enc, err);   /* Ctrl-C */
        if (st == ATN_OK && (*enc)->truncated)
            fprintf(stderr, "attnscope: notice: the input was truncated to %d tokens (model \"%s\" allows %d "
                    "positions); %d word pieces were dropped\n", (*enc)->n, atn_model_name(m),
                    atn_model_config(m)->max_positions, (*enc)->n_dropped);
    }
done:
    free(ids);
    free(types);
    free(mask);
    return st;
}

int32_t *cli_target_ids(cli_args *a, const atn_model *m, int32_t *n, atn_error *err) {
    const char *text = cli_get(a, "target"), *ids_s = cli_get(a, "target-ids");
    *n = 0;
    if (!text && !ids_s)
        return NULL;
    if (!atn_model_is_encoder_decoder(m)) {
        atn_error_set(err, ATN_E_INVALID, "--target and --target-ids are for encoder-decoder models (T5, BART, "
                      "Marian); model \"%s\" is %s", atn_model_name(m), atn_model_family_name(m));
        return NULL;
    }
    if (text && ids_s) {
        atn_error_set(err, ATN_E_INVALID, "give either --target or --target-ids, not both");
        return NULL;
    }
    int32_t *ids = NULL;
    if (ids_s) {
        int k = cli_parse_int_list(ids_s, "--target-ids", &ids);
        if (k <= 0) {
            free(ids);
            atn_error_set(err, ATN_E_INVALID, "--target-ids needs at least one id");
            return NULL;
        }
        *n = k;
        return ids;
    }
    /* teacher forcing (HF's _shift_right of the labels): the decoder start token, then the
       target's tokens but the last (T5's tokenizer ends them with </s>) */
    atn_encoding *e = NULL;
    if (atn_model_encode(m, text, NULL, &e, err) != ATN_OK)
        return NULL;
    int32_t t = e->n > 0 ? e->n : 1;
    ids = malloc((size_t)t * sizeof *ids);
    if (!ids) {
        atn_encoding_free(e);
        atn_error_set(err, ATN_E_NOMEM, "out of memory");
        return NULL;
    }
    ids[0] = atn_model_decoder_start_id(m);
    for (int32_t i = 1; i < t; i++)
        ids[i] = e->ids[i - 1];
    atn_encoding_free(e);
    *n = t;
    return ids;
}

int cli_model_run(cli_args *a, atn_model **model, atn_encoding **enc, atn_run **run) {
    return cli_model_run_pair(a, model, enc, run, NULL);
}

int cli_model_run_pair(cli_args *a, atn_model **model, atn_encoding **enc, atn_run **run, atn_run **run_fp32) {
    atn_error err = {0};
    atn_run_options opts;
    *model = NULL, *enc = NULL, *run = NULL;
    if (run_fp32)
        *run_fp32 = NULL;
    if (!cli_run_options(a, &opts))
        return CLI_EXIT_USAGE;
    cli_mark_model_options(a);   /* read below, once the model is open */
    if (!cli_check_unused(a))
        return CLI_EXIT_USAGE;
    *model = cli_open_model(a, &err);
    if (!*model)
        return cli_fail(&err);
    cli_interventions ci;
    if (!cli_interventions_parse(a, atn_model_config(*model), &ci))
        return CLI_EXIT_USAGE;
    if (cli_encode(a, *model, enc, &err)) {
        cli_interventions_free(&ci);
        return cli_fail(&err);
    }
    if (!cli_interventions_check_tokens(&ci, a->prog, (*enc)->n)) {
        cli_interventions_free(&ci);
        return CLI_EXIT_USAGE;
    }
    *run = atn_run_new(*model);
    if (!*run) {
        cli_interventions_free(&ci);
        cli_error("out of memory");
        return CLI_EXIT_FAIL;
    }
    opts.interventions = ci.any ? &ci.iv : NULL;
    int32_t n_target = 0;
    int32_t *target = cli_target_ids(a, *model, &n_target, &err);
    if (!target && err.status) {
        cli_interventions_free(&ci);
        return cli_fail(&err);
    }
    opts.target_ids = target, opts.n_target = n_target;
    atn_status st = atn_run_forward(*run, *enc, &opts, &err);
    const char *why = st == ATN_OK ? atn_run_fallback_reason(*run) : NULL;
    if (why)
        fprintf(stderr, "attnscope: no usable GPU; running on the CPU (%s)\n", why);
    if (st == ATN_OK && atn_run_device_used(*run) == ATN_DEVICE_CPU)
        cli_precision_note(opts.precision);
    if (st == ATN_OK)
        cli_report_fp16_overflow(atn_run_capture(*run));
    if (st == ATN_OK && !opts.attention_on_demand)
        cli_note_on_demand(atn_run_capture(*run));
    if (st == ATN_OK && run_fp32) {   /* the same run in fp32, for a comparison */
        *run_fp32 = atn_run_new(*model);
        atn_run_options o32 = opts;
        o32.precision = ATN_PRECISION_FP32;
        if (!*run_fp32)
            st = atn_error_set(&err, ATN_E_NOMEM, "out of memory");
        else
            st = atn_run_forward(*run_fp32, *enc, &o32, &err);
    }
    cli_interventions_free(&ci);   /* the runs copied what they keep */
    free(target);
    if (st)
        return cli_fail(&err);
    return CLI_EXIT_OK;
}

bool cli_atomic_open(cli_atomic_file *af, const char *path) {
    memset(af, 0, sizeof *af);
    atn_error err = {0};
    if (atn_atomic_open(path, &af->file, &err) != ATN_OK) {
        cli_error("%s", err.message);
        return false;
    }
    af->f = atn_atomic_stream(af->file);
    snprintf(af->path, sizeof af->path, "%s", path);
    return true;
}

bool cli_atomic_close(cli_atomic_file *af, bool ok) {
    if (!af->file)
        return false;
    atn_error err = {0};
    atn_status st = atn_atomic_close(af->file, ok && !interrupted, &err);
    if (st == ATN_E_CANCELLED && interrupted)
        ;   /* main says "interrupted"; the old file stays */
    else if (st == ATN_E_CANCELLED)   /* the caller's own writing failed */
        cli_error("%s: write failed; the previous file (if any) is left as it was", af->path);
    else if (st != ATN_OK)
        cli_error("%s; the previous file (if any) is left as it was", err.message);
    memset(af, 0, sizeof *af);
    return st == ATN_OK;
}

bool cli_stdout_flush(void) {
    static bool reported;
    errno = 0;
    int flushed = fflush(stdout);
    int e = errno;
    if (flushed == 0 && !ferror(stdout))
        return true;
    if (!reported) {
        reported = true;
        if (flushed != 0 && e)
            cli_error("standard output: write failed: %s", strerror(e));
        else
            cli_error("standard output: write failed");
    }
    return false;
}

bool cli_stdout_close(void) {
    bool ok = cli_stdout_flush();
    /* a file system that reports a write error only at the close (NFS) */
    if (fclose(stdout) != 0 && errno != EBADF && ok) {
        cli_error("standard output: write failed: %s", strerror(errno));
        ok = false;
    }
    return ok;
}

void cli_json_number(FILE *f, double v) {
    if (v != v || v - v != 0)
        fputs("null", f);
    else
        fprintf(f, "%.9g", v);
}

void cli_json_string(FILE *f, const char *s) {
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(f, "\\%c", *p);
        else if (*p < 0x20)
            fprintf(f, "\\u%04x", *p);
        else
            fputc(*p, f);
    }
    fputc('"', f);
}
