/* attnscope train: trains a small transformer on the CPU (engine/train/, train.h) on a toy
 * task or a text file, with a progress line on stderr, a CSV or JSON log, and the model
 * saved as a Hugging Face folder every other command opens (-o DIR).  Ctrl-C saves the
 * last step's model and exits with 130. */
#include "cli.h"
#include "cmd-train.h"
#include "cli-figure.h"
#include "render.h"
#include "train.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

double train_now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void usage(void) {
    printf("Usage: attnscope train [--task copy|reverse|sort|induction|brackets|modadd|text] [--text FILE]\n"
           "  [--encoder|--decoder] [--layers 2] [--d-model 64] [--heads 4] [--d-ffn 4*d] [--attention-only]\n"
           "  [--rms-norm]\n"
           "  [--norm pre|post|none] [--init normal|xavier|orthogonal] [--init-std 0.02]\n"
           "  [--positions learned|sinusoidal|none|alibi|rotary]\n"
           "  [--attention full|causal|window|longformer|chunked|linformer] [--window 4]\n"
           "  [--globals first:1|P1,P2,...] [--chunk 4] [--linformer-k 4]\n"
           "  [--dropout P | --dropout-attn P --dropout-hidden P] [--seed 1]\n"
           "  [--optim adamw|sgd] [--lr 1e-3] [--beta1 0.9] [--beta2 0.999] [--eps 1e-8]\n"
           "  [--weight-decay 0.01] [--momentum 0] [--warmup 0] [--clip 1]\n"
           "  [--batch 32] [--steps 1000] [--length 16] [--symbols 10] [--mask-prob 0.15]\n"
           "  [--precision fp32|bf16|fp16] [--checkpoint]\n"
           "  [-o DIR] [--log FILE.csv|FILE.json] [--log-every N] [--dump-grads FILE.npz]\n"
           "  [--sweep KNOB=V1,V2,... [--seeds N] [--log FILE.csv|FILE.json] [--plot FILE.png|.svg|.pdf]]\n"
           "  [--test-lengths L1,L2,... [--schemes learned,sinusoidal,rotary,alibi,none] [--seeds N]\n"
           "   [--log FILE.csv|FILE.json] [--plot FILE.png|.svg|.pdf]]\n"
           "  [--grad-depths D1,D2,... [--placements post,pre,none] [--seeds N] [--log FILE.csv|FILE.json]\n"
           "   [--plot FILE.png|.svg|.pdf]]\n\n"
           "Trains a decoder (next token, causal attention; saved as GPT-2, pre-LN) or an encoder\n"
           "(masked-LM; saved as BERT, post-LN) on a task: copy, reverse or sort --length symbols,\n"
           "induction (a random run repeated), brackets (balanced or not), modadd (a + b mod --symbols),\n"
           "or next-token / masked-LM on a text file (one token per character, whitespace left out).\n"
           "--attention-only leaves the MLPs out (saved as an MLP one unit wide whose weights are 0).\n"
           "--rms-norm uses Llama's RMSNorm; --positions rotary --rms-norm --attention-only (pre-LN)\n"
           "is saved as a Llama folder.\n"
           "--precision bf16|fp16 trains as torch.autocast does: every matrix product's operands (forward\n"
           "and backward) rounded to the format, FP32 sums, loss and master weights; fp16 with GradScaler's\n"
           "dynamic loss scale (a step whose gradients overflow is skipped and counted).  --checkpoint\n"
           "recomputes each layer's activations in the backward (the same gradients, less memory); the\n"
           "activation memory is printed at the start and kept in a JSON log.\n"
           "Attention: --window W keeps keys within W of the query; longformer is that window plus\n"
           "global positions (--globals first:K, the first K tokens, default [CLS], or a list such as\n"
           "0,5) that see every key and are seen by every query; chunked keeps keys in the query's\n"
           "block of --chunk B tokens; a decoder stays causal in each.  linformer (an encoder only)\n"
           "projects keys and values along the sequence to --linformer-k K rows by learned E and F\n"
           "per layer; it trains and logs but cannot be saved (no -o).  Each knob goes with its\n"
           "attention (given with another it would change nothing, and is refused).\n"
           "Each batch is fresh, so the accuracy printed is on unseen sequences.  The log has each\n"
           "step's loss, accuracy, gradient norm (before clipping) and each layer's.  -o DIR writes a\n"
           "Hugging Face folder (config.json, model.safetensors, vocab.txt, training.json) that every\n"
           "command opens (attnscope run --model DIR --ids ...) and a log (DIR/train-log.csv unless\n"
           "--log).  --dump-grads FILE.npz (with -o) writes DIR/step-0 (the initial weights) and, in\n"
           "FILE.npz, the first batch (input_ids, labels, attention_mask), the loss and every\n"
           "parameter's gradient under its Hugging Face name.  Ctrl-C saves the last step and exits\n"
           "with 130.  The same options and seed give the same numbers for a given thread count\n"
           "(OPENBLAS_NUM_THREADS).  What the folder's config cannot say is a what-if option when it\n"
           "runs: --positions alibi needs --alibi, an encoder's window or causal attention --window W\n"
           "or --causal.  A post-LN decoder, a pre-LN encoder, --norm none and rotary positions (but as Llama) train\n"
           "without -o.\n\n"
           "--sweep KNOB=V1,V2,... trains one model per value and seed (--seeds N: seed, seed+1, ...)\n"
           "and prints, per value, the loss and accuracy on four fresh batches after training (mean ±\n"
           "standard deviation over the seeds); --log FILE.csv|.json gets every run, --plot FILE.png|.svg|.pdf\n"
           "draws them (loss and accuracy by value, error bars of one standard deviation).  KNOB is one of\n"
           "heads, layers, d-model, d-ffn, norm, init, init-std, positions, attention, window, chunk,\n"
           "linformer-k, dropout, dropout-attn, dropout-hidden, optim, lr, warmup, clip, weight-decay,\n"
           "batch, length, symbols, precision.\n\n"
           "--test-lengths L1,L2,... (train short, test long) trains one model per position scheme (--schemes,\n"
           "all five by default) and seed at --length and prints each one's accuracy on 4 fresh batches\n"
           "at --length and at each Li.  Learned positions have one row per trained token: a longer\n"
           "length is reported as refused, not extrapolated.  --log and --plot (accuracy by length, one\n"
           "line per scheme) as for --sweep.\n\n"
           "--grad-depths D1,D2,... (Post-LN vs Pre-LN) trains one model per LayerNorm placement\n"
           "(--placements, post and pre by default), depth and seed (--seeds N: seed, seed+1, ...) for\n"
           "--steps steps and prints each layer's gradient norm (before clipping) at the first step and\n"
           "its mean over the steps (with --seeds, each averaged over the seeds, and the sd of the\n"
           "seeds' means); --log FILE.csv has every seed, step and layer, FILE.json the same per run;\n"
           "--plot draws the mean by layer, one line per placement and depth (error bars: one sd over\n"
           "the seeds).\n\n"
           "Each experiment's --plot may be given up to three times (FILE.png, FILE.svg, FILE.pdf): the\n"
           "figure is written to each.\n");
}

/* The index of value in names (NULL-terminated), dflt when absent, -1 with the message
 * "PROG: --OPT must be a, b or c, not "VALUE"" when unknown. */
static int pick(const char *prog, const char *opt, const char *value, const char *const *names, int dflt) {
    if (!value)
        return dflt;
    char list[256] = "";
    size_t off = 0;
    for (int i = 0; names[i]; i++) {
        if (!strcmp(value, names[i]))
            return i;
        off += (size_t)snprintf(list + off, sizeof list - off, "%s%s", i == 0 ? "" : names[i + 1] ? ", " : " or ",
                                names[i]);
    }
    cli_error("%s: --%s must be %s, not \"%s\"", prog, opt, list, value);
    return -1;
}

/* The log in memory: one row per step, with each layer's gradient norm (the Post-LN vs
 * Pre-LN question reads them). */
typedef struct log_rows {
    atn_train_stats *rows;
    double *seconds;
    float *layer_norms;   /* [cap][layers] */
    int32_t n, cap, layers;
    bool scaled;          /* FP16: each row's loss scale and overflow too */
    char head[512];       /* the JSON log's fields before "steps" ("" or ending in ", ") */
} log_rows;

static bool log_add(log_rows *l, const atn_train_stats *s, double seconds, const atn_trainer *t) {
    if (l->n == l->cap) {
        int32_t cap = l->cap ? 2 * l->cap : 1024;
        atn_train_stats *r = realloc(l->rows, (size_t)cap * sizeof *r);
        if (!r)
            return false;
        l->rows = r;
        double *sec = realloc(l->seconds, (size_t)cap * sizeof *sec);
        if (!sec)
            return false;
        l->seconds = sec;
        float *ln = realloc(l->layer_norms, (size_t)cap * (size_t)l->layers * sizeof *ln);
        if (!ln)
            return false;
        l->layer_norms = ln, l->cap = cap;
    }
    for (int32_t k = 0; k < l->layers; k++)
        l->layer_norms[(size_t)l->n * l->layers + k] = atn_trainer_layer_grad_norm(t, k);
    l->rows[l->n] = *s, l->seconds[l->n++] = seconds;
    return true;
}

static bool log_write(const log_rows *l, const char *path) {
    size_t len = strlen(path);
    bool json = len > 5 && !strcmp(path + len - 5, ".json");
    /* the engine's atomic writer, not cli_atomic_*: after Ctrl-C the log is still kept */
    atn_error err = {0};
    atn_atomic_file *file = NULL;
    if (atn_atomic_open(path, &file, &err) != ATN_OK) {
        cli_error("attnscope train: %s", err.message);
        return false;
    }
    FILE *f = atn_atomic_stream(file);
    if (json) {
        fprintf(f, "{%s\"steps\": [\n", l->head);
    } else {
        fputs("step,loss,accuracy,grad_norm,lr,seconds", f);
        for (int32_t k = 0; k < l->layers; k++)
            fprintf(f, ",grad_norm_layer%d", (int)k);
        fputs(l->scaled ? ",loss_scale,overflow\n" : "\n", f);
    }
    for (int32_t i = 0; i < l->n; i++) {
        const atn_train_stats *s = &l->rows[i];
        if (json) {
            fprintf(f, "  {\"step\": %d, \"loss\": ", (int)s->step + 1);
            cli_json_number(f, s->loss);
            fprintf(f, ", \"accuracy\": %.6g, \"grad_norm\": ", (double)s->accuracy);
            cli_json_number(f, s->grad_norm);
            fprintf(f, ", \"lr\": %.6g, \"seconds\": %.4f, \"layer_grad_norms\": [", (double)s->lr, l->seconds[i]);
            for (int32_t k = 0; k < l->layers; k++) {
                fputs(k ? ", " : "", f);
                cli_json_number(f, l->layer_norms[(size_t)i * l->layers + k]);
            }
            if (l->scaled)
                fprintf(f, "], \"loss_scale\": %.9g, \"overflow\": %s", (double)s->loss_scale,
                        s->overflow ? "true" : "false");
            else
                fputc(']', f);
            fprintf(f, "}%s\n", i + 1 < l->n ? "," : "");
        } else {
            fprintf(f, "%d,%.7g,%.6g,%.7g,%.6g,%.4f", (int)s->step + 1, (double)s->loss, (double)s->accuracy,
                    (double)s->grad_norm, (double)s->lr, l->seconds[i]);
            for (int32_t k = 0; k < l->layers; k++)
                fprintf(f, ",%.7g", (double)l->layer_norms[(size_t)i * l->layers + k]);
            if (l->scaled)
                fprintf(f, ",%.9g,%d", (double)s->loss_scale, (int)s->overflow);
            fputc('\n', f);
        }
    }
    if (json)
        fputs("]}\n", f);
    if (atn_atomic_close(file, true, &err) != ATN_OK) {
        cli_error("attnscope train: %s", err.message);
        return false;
    }
    return true;
}

static bool save_model(const atn_trainer *t, const char *dir) {
    atn_error err = {0};
    if (atn_trainer_save(t, dir, &err) != ATN_OK) {
        cli_error("attnscope train: %s", err.message);
        return false;
    }
    return true;
}

/* --globals first:K (the first K tokens) or P1,P2,... (positions) into o; false with the
 * message printed. */
static bool read_globals(const char *prog, const char *s, atn_train_options *o) {
    if (!s)
        return true;
    if (!strncmp(s, "first:", 6)) {
        char *end;
        long k = strtol(s + 6, &end, 10);
        if (end == s + 6 || *end || k < 0 || k > 1024) {
            cli_error("%s: --globals %s: first:K with K a number of tokens from 0 to 1024", prog, s);
            return false;
        }
        o->global_first = (int32_t)k, o->n_globals = 0;
        return true;
    }
    int32_t *v = NULL;
    int n = cli_parse_int_list(s, "--globals", &v);
    if (n < 0)
        return false;
    if (n > ATN_TRAIN_MAX_GLOBALS) {
        cli_error("%s: --globals: %d positions, at most %d (first:K takes the first K)", prog, n,
                  ATN_TRAIN_MAX_GLOBALS);
        free(v);
        return false;
    }
    for (int i = 0; i < n; i++)
        if (v[i] < 0) {
            cli_error("%s: --globals: position %d is negative", prog, (int)v[i]);
            free(v);
            return false;
        }
    o->global_first = 0, o->n_globals = n;
    memcpy(o->globals, v, (size_t)n * sizeof *v);
    free(v);
    return true;
}

static const char *const norms[] = {"post", "pre", "none", NULL};
/* in atn_precision's order */
static const char *const precisions[] = {"fp32", "fp16", "bf16", NULL};

/* Parses argv into tc (strings borrowed from argv).  CLI_EXIT_OK or CLI_EXIT_USAGE (the
 * message printed). */
static int read_options(int argc, char **argv, train_cli *tc) {
    static const char *const flags[] = {"help", "encoder", "decoder", "attention-only", "rms-norm", "checkpoint", NULL};
    cli_args a;
    memset(tc, 0, sizeof *tc);
    if (!cli_parse(&a, "attnscope train", argc, argv, flags))
        return CLI_EXIT_USAGE;
    if (cli_flag(&a, "help")) {
        tc->help = true;
        return CLI_EXIT_OK;
    }
    const char *prog = "attnscope train";
    atn_train_options o;
    atn_train_options_init(&o);
    bool ok = true;
    bool encoder = cli_flag(&a, "encoder"), decoder = cli_flag(&a, "decoder");
    if (encoder && decoder) {
        cli_error("%s: --encoder or --decoder, not both", prog);
        return CLI_EXIT_USAGE;
    }
    o.decoder = !encoder;
    static const char *const tasks[] = {"copy", "reverse", "sort", "induction", "brackets", "modadd", "text", NULL};
    static const char *const inits[] = {"normal", "xavier", "orthogonal", NULL};
    static const char *const poss[] = {"learned", "sinusoidal", "none", "alibi", "rotary", NULL};
    static const char *const attns[] = {"full", "causal", "window", "longformer", "chunked", "linformer", NULL};
    static const char *const optims[] = {"adamw", "sgd", NULL};
    int task = pick(prog, "task", cli_get(&a, "task"), tasks, ATN_TASK_COPY);
    int norm = pick(prog, "norm", cli_get(&a, "norm"), norms, o.decoder ? ATN_TRAIN_PRE_LN : ATN_TRAIN_POST_LN);
    int init = pick(prog, "init", cli_get(&a, "init"), inits, ATN_INIT_NORMAL);
    int pos = pick(prog, "positions", cli_get(&a, "positions"), poss, ATN_POS_LEARNED);
    const char *attn_given = cli_get(&a, "attention");
    int attn = pick(prog, "attention", attn_given, attns, o.decoder ? ATN_ATTN_CAUSAL : ATN_ATTN_FULL);
    int optim = pick(prog, "optim", cli_get(&a, "optim"), optims, ATN_OPTIM_ADAMW);
    int prec = pick(prog, "precision", cli_get(&a, "precision"), precisions, ATN_PRECISION_FP32);
    if (task < 0 || norm < 0 || init < 0 || pos < 0 || attn < 0 || optim < 0 || prec < 0)
        return CLI_EXIT_USAGE;
    if (o.decoder && attn == ATN_ATTN_FULL) {
        cli_error("%s: --attention full: a decoder's attention is causal (use --encoder, or causal / window)", prog);
        return CLI_EXIT_USAGE;
    }
    o.task = (atn_train_task)task, o.norm = (atn_train_norm)norm, o.init = (atn_train_init)init;
    o.positions = (atn_train_pos)pos, o.attention = (atn_train_attn)attn, o.optim = (atn_train_optim)optim;
    o.text_path = cli_get(&a, "text");
    o.layers = (int32_t)cli_get_int(&a, "layers", o.layers, 1, 12, &ok);
    o.d_model = (int32_t)cli_get_int(&a, "d-model", o.d_model, 2, 1024, &ok);
    o.heads = (int32_t)cli_get_int(&a, "heads", o.heads, 1, 64, &ok);
    o.d_ffn = (int32_t)cli_get_int(&a, "d-ffn", 0, 1, 8192, &ok);
    o.attention_only = cli_flag(&a, "attention-only");
    o.precision = (atn_precision)prec, o.checkpoint = cli_flag(&a, "checkpoint");
    o.rms_norm = cli_flag(&a, "rms-norm");
    o.init_std = (float)cli_get_double(&a, "init-std", o.init_std, 1e-6, 10, &ok);
    o.window = (int32_t)cli_get_int(&a, "window", o.window, 0, 1024, &ok);
    o.chunk = (int32_t)cli_get_int(&a, "chunk", o.chunk, 1, 1024, &ok);
    o.linformer_k = (int32_t)cli_get_int(&a, "linformer-k", o.linformer_k, 1, 1024, &ok);
    if (!read_globals(prog, cli_get(&a, "globals"), &o))
        ok = false;
    float dropout = (float)cli_get_double(&a, "dropout", 0, 0, 0.95, &ok);
    o.dropout_attn = (float)cli_get_double(&a, "dropout-attn", dropout, 0, 0.95, &ok);
    o.dropout_hidden = (float)cli_get_double(&a, "dropout-hidden", dropout, 0, 0.95, &ok);
    o.seed = (uint64_t)cli_get_int(&a, "seed", 1, 0, 0x7fffffffL, &ok);
    o.lr = (float)cli_get_double(&a, "lr", o.lr, 1e-9, 100, &ok);
    o.beta1 = (float)cli_get_double(&a, "beta1", o.beta1, 0, 0.999999, &ok);
    o.beta2 = (float)cli_get_double(&a, "beta2", o.beta2, 0, 0.999999, &ok);
    o.adam_eps = (float)cli_get_double(&a, "eps", o.adam_eps, 1e-12, 1, &ok);
    o.weight_decay = (float)cli_get_double(&a, "weight-decay", o.weight_decay, 0, 10, &ok);
    o.momentum = (float)cli_get_double(&a, "momentum", 0, 0, 0.999999, &ok);
    o.warmup = (int32_t)cli_get_int(&a, "warmup", 0, 0, 100000000, &ok);
    o.clip = (float)cli_get_double(&a, "clip", o.clip, 0, 1e6, &ok);
    o.batch = (int32_t)cli_get_int(&a, "batch", o.batch, 1, 256, &ok);
    o.steps = (int32_t)cli_get_int(&a, "steps", o.steps, 0, 100000000, &ok);
    o.length = (int32_t)cli_get_int(&a, "length", o.length, 2, 255, &ok);
    o.symbols = (int32_t)cli_get_int(&a, "symbols", o.symbols, 2, 62, &ok);
    o.mask_prob = (float)cli_get_double(&a, "mask-prob", o.mask_prob, 0.01, 1, &ok);
    tc->log_every = (int32_t)cli_get_int(&a, "log-every", 0, 1, 100000000, &ok);
    tc->seeds = (int32_t)cli_get_int(&a, "seeds", 1, 1, 1000, &ok);
    tc->out_dir = cli_get(&a, "output");   /* -o */
    tc->log_path = cli_get(&a, "log"), tc->dump = cli_get(&a, "dump-grads"), tc->sweep = cli_get(&a, "sweep");
    int plots_given = cli_get_all(&a, "plot", tc->plots, 3);
    tc->n_plots = plots_given < 3 ? plots_given : 3;
    tc->plot = tc->n_plots ? tc->plots[0] : NULL;
    tc->test_lengths = cli_get(&a, "test-lengths"), tc->schemes = cli_get(&a, "schemes");
    tc->grad_depths = cli_get(&a, "grad-depths"), tc->placements = cli_get(&a, "placements");
    tc->positions_given = cli_get(&a, "positions") != NULL, tc->norm_given = cli_get(&a, "norm") != NULL;
    tc->layers_given = cli_get(&a, "layers") != NULL;
    const char *out_dir = tc->out_dir, *dump = tc->dump;
    if (!ok || !cli_check_unused(&a))
        return CLI_EXIT_USAGE;
    atn_output_format plot_fmt;
    int experiments = (tc->sweep != NULL) + (tc->test_lengths != NULL) + (tc->grad_depths != NULL);
    if (experiments > 1) {
        cli_error("%s: --sweep, --test-lengths and --grad-depths are experiments of their own: one at a time", prog);
        return CLI_EXIT_USAGE;
    }
    if (tc->schemes && !tc->test_lengths) {
        cli_error("%s: --schemes goes with --test-lengths L1,L2,...", prog);
        return CLI_EXIT_USAGE;
    }
    if (tc->placements && !tc->grad_depths) {
        cli_error("%s: --placements goes with --grad-depths D1,D2,...", prog);
        return CLI_EXIT_USAGE;
    }
    if (tc->test_lengths && tc->positions_given) {
        cli_error("%s: --test-lengths trains one model per position scheme: --schemes P1,P2,... "
                  "in place of --positions", prog);
        return CLI_EXIT_USAGE;
    }
    if (tc->grad_depths && (tc->norm_given || tc->layers_given)) {
        cli_error("%s: --grad-depths trains one model per placement and depth: --placements post,pre "
                  "in place of --norm, the depths in place of --layers", prog);
        return CLI_EXIT_USAGE;
    }
    if (tc->plot && !experiments) {
        cli_error("%s: --plot FILE draws an experiment's results: it goes with --sweep, --test-lengths or "
                  "--grad-depths", prog);
        return CLI_EXIT_USAGE;
    }
    for (int i = 0; i < tc->n_plots; i++)
        if (!atn_output_format_from_path(tc->plots[i], &plot_fmt)) {
            cli_error("%s: --plot %s: the file name must end in .png, .svg or .pdf", prog, tc->plots[i]);
            return CLI_EXIT_USAGE;
        }
    if (plots_given > 3) {
        cli_error("%s: --plot: at most three files (one per format)", prog);
        return CLI_EXIT_USAGE;
    }
    if (experiments && (out_dir || dump)) {
        cli_error("%s: %s trains many models and saves none: no -o or --dump-grads (--log FILE takes "
                  "the results)", prog, tc->sweep ? "--sweep" : tc->test_lengths ? "--test-lengths" : "--grad-depths");
        return CLI_EXIT_USAGE;
    }
    if (dump && !out_dir) {
        cli_error("%s: --dump-grads needs -o DIR (DIR/step-0 gets the initial weights)", prog);
        return CLI_EXIT_USAGE;
    }
    if (o.task != ATN_TASK_TEXT && o.text_path) {
        cli_error("%s: --text goes with --task text", prog);
        return CLI_EXIT_USAGE;
    }
    /* an attention knob the attention does not read would change nothing (a sweep over it
       would give one result per value): refused, unless the sweep varies the attention */
    bool attn_swept = tc->sweep && !strncmp(tc->sweep, "attention=", 10);
    static const struct {
        const char *opt;
        atn_train_attn a, b;
    } knobs[] = {{"window", ATN_ATTN_WINDOW, ATN_ATTN_LONGFORMER},
                 {"globals", ATN_ATTN_LONGFORMER, ATN_ATTN_LONGFORMER},
                 {"chunk", ATN_ATTN_CHUNKED, ATN_ATTN_CHUNKED},
                 {"linformer-k", ATN_ATTN_LINFORMER, ATN_ATTN_LINFORMER}};
    for (size_t i = 0; i < sizeof knobs / sizeof *knobs && !attn_swept; i++) {
        bool given = cli_get(&a, knobs[i].opt) ||
                     (tc->sweep && !strncmp(tc->sweep, knobs[i].opt, strlen(knobs[i].opt)) &&
                      tc->sweep[strlen(knobs[i].opt)] == '=');
        if (given && o.attention != knobs[i].a && o.attention != knobs[i].b) {
            cli_error("%s: --%s changes nothing under --attention %s: it goes with --attention %s%s", prog,
                      knobs[i].opt, attns[o.attention], attns[knobs[i].a],
                      knobs[i].a != knobs[i].b ? " or longformer" : "");
            return CLI_EXIT_USAGE;
        }
    }
    atn_error err = {0};
    if (atn_train_options_check(&o, out_dir != NULL, &err) != ATN_OK) {
        cli_error("%s: %s", prog, err.message);
        return CLI_EXIT_USAGE;
    }
    tc->o = o;
    return CLI_EXIT_OK;
}

/* ---- --sweep KNOB=V1,V2,...: one knob, several seeds --------------------------------------- */

/* The knobs a sweep may vary: each is the option of the same name. */
static const char *const sweep_knobs[] = {
    "heads", "layers", "d-model", "d-ffn", "norm", "init", "init-std", "positions", "attention", "window",
    "chunk", "linformer-k", "dropout", "dropout-attn", "dropout-hidden", "optim", "lr", "warmup", "clip",
    "weight-decay", "batch", "length", "symbols", "precision", NULL,
};

typedef struct sweep_row {
    char value[64];
    uint64_t seed;
    float loss, accuracy;
    double seconds;
} sweep_row;

/* Trains o for its steps (no output), then scores four fresh batches without an update. */
static int sweep_one(const atn_train_options *o, sweep_row *row) {
    atn_error err = {0};
    atn_trainer *t = atn_trainer_new(o, &err);
    if (!t) {
        cli_error("attnscope train: %s", err.message);
        return err.status == ATN_E_NOMEM ? CLI_EXIT_FAIL : CLI_EXIT_USAGE;
    }
    double t0 = train_now_s();
    atn_train_stats st;
    int rc = CLI_EXIT_OK;
    for (int32_t s = 0; s < o->steps && rc == CLI_EXIT_OK; s++) {
        if (cli_interrupted())
            rc = CLI_EXIT_INTERRUPTED;
        else if (atn_trainer_compute(t, &st, &err) != ATN_OK || atn_trainer_update(t, &st, &err) != ATN_OK)
            rc = CLI_EXIT_FAIL;
    }
    row->loss = row->accuracy = 0;
    for (int k = 0; k < 4 && rc == CLI_EXIT_OK; k++) {
        if (atn_trainer_compute(t, &st, &err) != ATN_OK)
            rc = CLI_EXIT_FAIL;
        row->loss += st.loss / 4.0f, row->accuracy += st.accuracy / 4.0f;
    }
    if (rc == CLI_EXIT_FAIL)
        cli_error("attnscope train: %s", err.message);
    row->seconds = train_now_s() - t0;
    atn_trainer_free(t);
    return rc;
}

static void mean_sd(const sweep_row *rows, int32_t n, bool acc, double *mean, double *sd) {
    double m = 0, v = 0;
    for (int32_t i = 0; i < n; i++)
        m += acc ? rows[i].accuracy : rows[i].loss;
    m /= n;
    for (int32_t i = 0; i < n; i++) {
        double x = (acc ? rows[i].accuracy : rows[i].loss) - m;
        v += x * x;
    }
    *mean = m, *sd = n > 1 ? sqrt(v / (n - 1)) : 0.0;
}

static bool sweep_write(const char *path, const char *knob, const sweep_row *rows, int32_t n) {
    size_t len = strlen(path);
    bool json = len > 5 && !strcmp(path + len - 5, ".json");
    cli_atomic_file af;
    if (!cli_atomic_open(&af, path))
        return false;
    if (json)
        fprintf(af.f, "{\"knob\": \"%s\", \"runs\": [\n", knob);
    else
        fprintf(af.f, "%s,seed,loss,accuracy,seconds\n", knob);
    for (int32_t i = 0; i < n; i++) {
        const sweep_row *r = &rows[i];
        if (json) {
            fputs("  {\"value\": ", af.f);
            cli_json_string(af.f, r->value);
            fprintf(af.f, ", \"seed\": %llu, \"loss\": ", (unsigned long long)r->seed);
            cli_json_number(af.f, r->loss);
            fprintf(af.f, ", \"accuracy\": %.6g, \"seconds\": %.3f}%s\n", (double)r->accuracy, r->seconds,
                    i + 1 < n ? "," : "");
        } else {
            fprintf(af.f, "%s,%llu,%.7g,%.6g,%.3f\n", r->value, (unsigned long long)r->seed, (double)r->loss,
                    (double)r->accuracy, r->seconds);
        }
    }
    if (json)
        fputs("]}\n", af.f);
    return cli_atomic_close(&af, true);
}

static void draw_sweep(cairo_t *cr, double w, double h, void *user) { atn_render_train_curve(cr, user, w, h); }

/* The sweep as a figure: per value the mean loss (log scale) and accuracy over its seeds,
 * each with a bar of one standard deviation. */
static int sweep_plot(const char *path, const char *knob, const sweep_row *rows, int32_t n, int32_t seeds) {
    atn_output_format fmt;
    atn_output_format_from_path(path, &fmt);
    float *v = calloc((size_t)n * 4, sizeof *v);
    const char **names = calloc((size_t)n, sizeof *names);
    if (!v || !names) {
        free(v), free(names);
        cli_error("attnscope train: out of memory");
        return CLI_EXIT_FAIL;
    }
    float *loss = v, *loss_sd = v + n, *acc = v + 2 * n, *acc_sd = v + 3 * n;
    int32_t k = 0;
    for (int32_t i = 0; i < n;) {
        int32_t j = i;
        while (j < n && !strcmp(rows[j].value, rows[i].value))
            j++;
        double lm, ls, am, as;
        mean_sd(rows + i, j - i, false, &lm, &ls);
        mean_sd(rows + i, j - i, true, &am, &as);
        loss[k] = (float)lm, loss_sd[k] = (float)ls, acc[k] = (float)am, acc_sd[k] = (float)as;
        names[k++] = rows[i].value;
        i = j;
    }
    char title[160];
    snprintf(title, sizeof title, "Loss and accuracy by %s (%d seed%s each, mean \xc2\xb1 sd)", knob,
             (int)seeds, seeds == 1 ? "" : "s");
    atn_render_style st;
    atn_render_style_init(&st, false);
    atn_train_curve_spec spec;
    atn_train_curve_spec_init(&spec);
    spec.loss = loss, spec.loss_sd = loss_sd, spec.accuracy = acc, spec.accuracy_sd = acc_sd;
    spec.n = k, spec.x_names = names, spec.x_label = knob, spec.title = title, spec.style = &st;
    double w = 200 + 90 * (k < 5 ? 5 : k), h = 420;
    int rc = cli_write_figure(path, fmt, w, h, 2.0, draw_sweep, &spec, NULL);
    free(v), free(names);
    return rc;
}

/* Each value of the knob with --seeds seeds (seed, seed + 1, ...): the options are read again
 * from the command line with "--KNOB VALUE --seed S" after it (the last one given wins), so
 * every value is checked as the option itself is. */
static int train_sweep(int argc, char **argv, const train_cli *tc) {
    const char *prog = "attnscope train";
    const char *eq = strchr(tc->sweep, '=');
    char knob[32] = "";
    if (eq && (size_t)(eq - tc->sweep) < sizeof knob)
        memcpy(knob, tc->sweep, (size_t)(eq - tc->sweep));
    bool known = false;
    for (int i = 0; sweep_knobs[i]; i++)
        known |= !strcmp(knob, sweep_knobs[i]);
    if (!eq || !known || !eq[1]) {
        char list[512] = "";
        size_t off = 0;
        for (int i = 0; sweep_knobs[i]; i++)
            off += (size_t)snprintf(list + off, sizeof list - off, "%s%s", i ? ", " : "", sweep_knobs[i]);
        cli_error("%s: --sweep \"%s\": KNOB=V1,V2,... with KNOB one of %s", prog, tc->sweep, list);
        return CLI_EXIT_USAGE;
    }
    char values[1024];
    snprintf(values, sizeof values, "%s", eq + 1);
    int32_t n_values = 1;
    for (const char *c = values; *c; c++)
        n_values += *c == ',';
    int32_t total = n_values * tc->seeds;
    sweep_row *rows = calloc((size_t)total, sizeof *rows);
    char **argv2 = calloc((size_t)argc + 5, sizeof *argv2);
    if (!rows || !argv2) {
        free(rows), free(argv2);
        cli_error("%s: out of memory", prog);
        return CLI_EXIT_FAIL;
    }
    memcpy(argv2, argv, (size_t)argc * sizeof *argv2);
    char opt[40], seed_text[32];
    snprintf(opt, sizeof opt, "--%s", knob);
    /* every value's options are read once before any training: a bad value stops the sweep
       at once (exit 2) */
    int rc = CLI_EXIT_OK;
    int32_t done = 0;
    char *save = NULL, checked[1024];
    snprintf(checked, sizeof checked, "%s", values);
    for (char *v = strtok_r(checked, ",", &save); v && rc == CLI_EXIT_OK; v = strtok_r(NULL, ",", &save)) {
        argv2[argc] = opt, argv2[argc + 1] = v;
        train_cli one;
        rc = read_options(argc + 2, argv2, &one);
    }
    save = NULL;
    for (char *v = strtok_r(values, ",", &save); v && rc == CLI_EXIT_OK; v = strtok_r(NULL, ",", &save)) {
        for (int32_t k = 0; k < tc->seeds && rc == CLI_EXIT_OK; k++) {
            snprintf(seed_text, sizeof seed_text, "%llu", (unsigned long long)(tc->o.seed + (uint64_t)k));
            argv2[argc] = opt, argv2[argc + 1] = v, argv2[argc + 2] = "--seed", argv2[argc + 3] = seed_text;
            train_cli one;
            if ((rc = read_options(argc + 4, argv2, &one)) != CLI_EXIT_OK)
                break;
            sweep_row *r = &rows[done];
            snprintf(r->value, sizeof r->value, "%s", v);
            r->seed = one.o.seed;
            rc = sweep_one(&one.o, r);
            if (rc != CLI_EXIT_OK)
                break;
            done++;
            fprintf(stderr, "%s=%s seed %llu: loss %.4f, accuracy %.2f%% (%.1f s)\n", knob, v,
                    (unsigned long long)r->seed, (double)r->loss, 100.0 * r->accuracy, r->seconds);
        }
    }
    if (done && rc != CLI_EXIT_FAIL && rc != CLI_EXIT_USAGE) {
        printf("%-12s %5s  %-19s  %s\n", knob, "runs", "loss (mean ± sd)", "accuracy % (mean ± sd)");
        for (int32_t i = 0; i < done;) {
            int32_t j = i;
            while (j < done && !strcmp(rows[j].value, rows[i].value))
                j++;
            double lm, ls, am, as;
            mean_sd(rows + i, j - i, false, &lm, &ls);
            mean_sd(rows + i, j - i, true, &am, &as);
            printf("%-12s %5d  %8.4f ± %-8.4f  %6.2f ± %.2f\n", rows[i].value, (int)(j - i), lm, ls, 100 * am, 100 * as);
            i = j;
        }
        if (tc->log_path && !sweep_write(tc->log_path, knob, rows, done) && rc == CLI_EXIT_OK)
            rc = CLI_EXIT_FAIL;
        for (int i = 0; i < tc->n_plots && rc == CLI_EXIT_OK; i++)
            rc = sweep_plot(tc->plots[i], knob, rows, done, tc->seeds);
    }
    free(rows), free(argv2);
    return rc;
}

int cmd_train(int argc, char **argv) {
    const char *prog = "attnscope train";
    train_cli tc;
    int rc = read_options(argc, argv, &tc);
    if (rc != CLI_EXIT_OK)
        return rc;
    if (tc.help) {
        usage();
        return CLI_EXIT_OK;
    }
    if (tc.sweep)
        return train_sweep(argc, argv, &tc);
    if (tc.test_lengths)
        return train_test_long(&tc);
    if (tc.grad_depths)
        return train_grad_depths(&tc);

    atn_train_options o = tc.o;
    const char *out_dir = tc.out_dir, *log_path = tc.log_path, *dump = tc.dump;
    int32_t log_every = tc.log_every;
    atn_error err = {0};
    atn_trainer *t = atn_trainer_new(&o, &err);
    if (!t) {
        cli_error("%s: %s", prog, err.message);
        return err.status == ATN_E_NOMEM ? CLI_EXIT_FAIL : CLI_EXIT_USAGE;
    }
    char log_default[4096];
    if (!log_path && out_dir) {
        snprintf(log_default, sizeof log_default, "%s/train-log.csv", out_dir);
        log_path = log_default;
    }
    if (!log_every)
        log_every = o.steps >= 20 ? o.steps / 20 : 1;
    bool tty = isatty(2);
    fprintf(stderr, "training %s: %d layers, d_model %d, %d heads, %s, %s task, %d tokens, vocabulary %d\n",
            o.decoder ? "a decoder" : "an encoder", (int)o.layers, (int)o.d_model, (int)o.heads, norms[o.norm],
            atn_train_task_name(o.task), (int)atn_trainer_tokens(t), (int)atn_trainer_vocab_size(t));

    size_t act_layers = 0, act = atn_trainer_activation_bytes(t, &act_layers);
    fprintf(stderr, "activation memory: %.2f MiB (%zu bytes; the layers' %zu bytes%s), precision %s\n",
            (double)act / 1048576.0, act, act_layers, o.checkpoint ? ", checkpointed" : "",
            atn_precision_name(o.precision));

    rc = CLI_EXIT_OK;
    log_rows log = {.layers = o.layers, .scaled = o.precision == ATN_PRECISION_FP16};
    atn_train_stats st = {0};
    double t0 = train_now_s(), last_print = 0;
    for (int32_t s = 0; s < o.steps; s++) {
        if (cli_interrupted()) {
            rc = CLI_EXIT_INTERRUPTED;
            break;
        }
        if (atn_trainer_compute(t, &st, &err) != ATN_OK) {
            cli_error("%s: %s", prog, err.message);
            rc = CLI_EXIT_FAIL;
            break;
        }
        if (s == 0 && dump) {
            char step0[4096];
            snprintf(step0, sizeof step0, "%s/step-0", out_dir);
            if (!save_model(t, out_dir) || !save_model(t, step0)) {
                rc = CLI_EXIT_FAIL;
                break;
            }
            if (atn_trainer_dump_grads(t, dump, &err) != ATN_OK) {
                cli_error("%s: %s", prog, err.message);
                rc = CLI_EXIT_FAIL;
                break;
            }
        }
        atn_trainer_update(t, &st, &err);
        double el = train_now_s() - t0;
        if (!log_add(&log, &st, el, t)) {
            cli_error("%s: out of memory for the log", prog);
            rc = CLI_EXIT_FAIL;
            break;
        }
        bool last = s + 1 == o.steps;
        if (tty && (el - last_print > 0.1 || last)) {
            fprintf(stderr, "\rstep %d/%d  loss %.4f  accuracy %5.1f%%  %.1f steps/s   ", (int)s + 1, (int)o.steps,
                    (double)st.loss, 100.0 * st.accuracy, (s + 1) / (el > 0 ? el : 1e-9));
            last_print = el;
        } else if (!tty && ((s + 1) % log_every == 0 || last)) {
            fprintf(stderr, "step %d/%d  loss %.4f  accuracy %5.1f%%  %.1f steps/s\n", (int)s + 1, (int)o.steps,
                    (double)st.loss, 100.0 * st.accuracy, (s + 1) / (el > 0 ? el : 1e-9));
        }
    }
    if (tty)
        fputc('\n', stderr);
    double el = train_now_s() - t0;
    int32_t done = atn_trainer_steps_done(t);
    snprintf(log.head, sizeof log.head,
             "\"precision\": \"%s\", \"checkpoint\": %s, \"activation_bytes\": %zu, "
             "\"activation_layer_bytes\": %zu, \"overflow_steps\": %d, ",
             atn_precision_name(o.precision), o.checkpoint ? "true" : "false", act, act_layers, (int)st.skipped_steps);
    if (o.precision == ATN_PRECISION_FP16)
        fprintf(stderr, "fp16: %d of %d steps skipped for overflowing gradients; the last step's loss scale %g\n",
                (int)st.skipped_steps, (int)done, (double)(log.n ? log.rows[log.n - 1].loss_scale : 65536.0f));
    if (out_dir && rc != CLI_EXIT_FAIL && !save_model(t, out_dir))
        rc = CLI_EXIT_FAIL;
    if (log_path && rc != CLI_EXIT_FAIL && !log_write(&log, log_path))
        rc = CLI_EXIT_FAIL;
    if (rc == CLI_EXIT_INTERRUPTED)
        fprintf(stderr, "interrupted after %d steps%s%s\n", (int)done, out_dir ? ": saved to " : "",
                out_dir ? out_dir : "");
    if (rc != CLI_EXIT_FAIL)
        printf("%d steps in %.2f s (%.1f steps/s): loss %.4f, accuracy %.2f%%\n", (int)done, el,
               el > 0 ? done / el : 0.0, (double)st.loss, 100.0 * st.accuracy);
    free(log.rows), free(log.seconds), free(log.layer_norms);
    atn_trainer_free(t);
    return rc;
}
