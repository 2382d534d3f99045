/* attnscope train: trains a small transformer on the CPU (engine/train/, train.h) on a toy
 * task or a text file, with a progress line on stderr, a CSV or JSON log, and the model
 * saved as a Hugging Face folder every other command opens (-o DIR).  Ctrl-C saves the
 * last step's model and exits with 130. */
#include "cli.h"
#include "train.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void usage(void) {
    printf("Usage: attnscope train [--task copy|reverse|sort|induction|brackets|modadd|text] [--text FILE]\n"
           "  [--encoder|--decoder] [--layers 2] [--d-model 64] [--heads 4] [--d-ffn 4*d]\n"
           "  [--norm pre|post|none] [--init normal|xavier|orthogonal] [--init-std 0.02]\n"
           "  [--positions learned|sinusoidal|none|alibi|rotary] [--attention full|causal|window]\n"
           "  [--window 4]\n"
           "  [--dropout P | --dropout-attn P --dropout-hidden P] [--seed 1]\n"
           "  [--optim adamw|sgd] [--lr 1e-3] [--beta1 0.9] [--beta2 0.999] [--eps 1e-8]\n"
           "  [--weight-decay 0.01] [--momentum 0] [--warmup 0] [--clip 1]\n"
           "  [--batch 32] [--steps 1000] [--length 16] [--symbols 10] [--mask-prob 0.15]\n"
           "  [-o DIR] [--log FILE.csv|FILE.json] [--log-every N] [--dump-grads FILE.npz]\n\n"
           "Trains a decoder (next token, causal attention; saved as GPT-2, pre-LN) or an encoder\n"
           "(masked-LM; saved as BERT, post-LN) on a task: copy, reverse or sort --length symbols,\n"
           "induction (a random run repeated), brackets (balanced or not), modadd (a + b mod --symbols),\n"
           "or next-token / masked-LM on a text file (one token per character, whitespace left out).\n"
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
           "or --causal.  A post-LN decoder, a pre-LN encoder, --norm none and rotary positions train\n"
           "without -o.\n");
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
        fputs("{\"steps\": [\n", f);
    } else {
        fputs("step,loss,accuracy,grad_norm,lr,seconds", f);
        for (int32_t k = 0; k < l->layers; k++)
            fprintf(f, ",grad_norm_layer%d", (int)k);
        fputc('\n', f);
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
            fprintf(f, "]}%s\n", i + 1 < l->n ? "," : "");
        } else {
            fprintf(f, "%d,%.7g,%.6g,%.7g,%.6g,%.4f", (int)s->step + 1, (double)s->loss, (double)s->accuracy,
                    (double)s->grad_norm, (double)s->lr, l->seconds[i]);
            for (int32_t k = 0; k < l->layers; k++)
                fprintf(f, ",%.7g", (double)l->layer_norms[(size_t)i * l->layers + k]);
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

int cmd_train(int argc, char **argv) {
    static const char *const flags[] = {"help", "encoder", "decoder", NULL};
    cli_args a;
    if (!cli_parse(&a, "attnscope train", argc, argv, flags))
        return CLI_EXIT_USAGE;
    if (cli_flag(&a, "help")) {
        usage();
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
    static const char *const norms[] = {"post", "pre", "none", NULL};
    static const char *const inits[] = {"normal", "xavier", "orthogonal", NULL};
    static const char *const poss[] = {"learned", "sinusoidal", "none", "alibi", "rotary", NULL};
    static const char *const attns[] = {"full", "causal", "window", NULL};
    static const char *const optims[] = {"adamw", "sgd", NULL};
    int task = pick(prog, "task", cli_get(&a, "task"), tasks, ATN_TASK_COPY);
    int norm = pick(prog, "norm", cli_get(&a, "norm"), norms, o.decoder ? ATN_TRAIN_PRE_LN : ATN_TRAIN_POST_LN);
    int init = pick(prog, "init", cli_get(&a, "init"), inits, ATN_INIT_NORMAL);
    int pos = pick(prog, "positions", cli_get(&a, "positions"), poss, ATN_POS_LEARNED);
    const char *attn_given = cli_get(&a, "attention");
    int attn = pick(prog, "attention", attn_given, attns, o.decoder ? ATN_ATTN_CAUSAL : ATN_ATTN_FULL);
    int optim = pick(prog, "optim", cli_get(&a, "optim"), optims, ATN_OPTIM_ADAMW);
    if (task < 0 || norm < 0 || init < 0 || pos < 0 || attn < 0 || optim < 0)
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
    o.init_std = (float)cli_get_double(&a, "init-std", o.init_std, 1e-6, 10, &ok);
    o.window = (int32_t)cli_get_int(&a, "window", o.window, 0, 1024, &ok);
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
    int32_t log_every = (int32_t)cli_get_int(&a, "log-every", 0, 1, 100000000, &ok);
    const char *out_dir = cli_get(&a, "output");   /* -o */
    const char *log_path = cli_get(&a, "log"), *dump = cli_get(&a, "dump-grads");
    if (!ok || !cli_check_unused(&a))
        return CLI_EXIT_USAGE;
    if (dump && !out_dir) {
        cli_error("%s: --dump-grads needs -o DIR (DIR/step-0 gets the initial weights)", prog);
        return CLI_EXIT_USAGE;
    }
    if (o.task != ATN_TASK_TEXT && o.text_path) {
        cli_error("%s: --text goes with --task text", prog);
        return CLI_EXIT_USAGE;
    }
    atn_error err = {0};
    if (atn_train_options_check(&o, out_dir != NULL, &err) != ATN_OK) {
        cli_error("%s: %s", prog, err.message);
        return CLI_EXIT_USAGE;
    }
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

    int rc = CLI_EXIT_OK;
    log_rows log = {.layers = o.layers};
    atn_train_stats st = {0};
    double t0 = now_s(), last_print = 0;
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
        double el = now_s() - t0;
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
    double el = now_s() - t0;
    int32_t done = atn_trainer_steps_done(t);
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
