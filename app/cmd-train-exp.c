/* attnscope train's experiments over several trained models (cmd-train.h):
 *   --test-lengths L1,L2,...   train short, test long: one model per position scheme, trained
 *                              at --length and evaluated at each length (train-exp.h);
 *   --grad-depths D1,D2,...    Post-LN vs Pre-LN: one model per LayerNorm placement, depth
 *                              and seed (--seeds N), each layer's gradient norm over the first
 *                              --steps steps; the mean over the seeds with its sd. */
#include "cli.h"
#include "cli-figure.h"
#include "cmd-train.h"
#include "render.h"
#include "train-exp.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PROG "attnscope train"

/* The experiments' files go through the engine's atomic writer, not cli_atomic_*: after a
 * Ctrl-C the models finished so far are still written (as train's own log is). */
static FILE *exp_open(const char *path, atn_atomic_file **file) {
    atn_error err = {0};
    if (atn_atomic_open(path, file, &err) != ATN_OK) {
        cli_error("%s: %s", PROG, err.message);
        return NULL;
    }
    return atn_atomic_stream(*file);
}

static bool exp_close(atn_atomic_file *file) {
    atn_error err = {0};
    if (atn_atomic_close(file, true, &err) != ATN_OK) {
        cli_error("%s: %s", PROG, err.message);
        return false;
    }
    return true;
}

/* A figure drawn in memory and written so; CLI_EXIT_OK or CLI_EXIT_USAGE (the message
 * printed). */
static int exp_figure(const char *path, double w, double h, atn_draw_fn draw, void *user) {
    atn_output_format fmt;
    atn_output_format_from_path(path, &fmt);
    atn_error err = {0};
    unsigned char *data = NULL;
    size_t len = 0;
    if (atn_render_to_memory(fmt, w, h, 2.0, draw, user, &data, &len, &err)) {
        atn_error_prefix(&err, "%s", path);
        return cli_fail(&err);
    }
    atn_atomic_file *file = NULL;
    FILE *f = exp_open(path, &file);
    if (f)
        fwrite(data, 1, len, f);
    free(data);
    return f && exp_close(file) ? CLI_EXIT_OK : CLI_EXIT_USAGE;
}

/* Parses "V1,V2,..." of whole numbers lo..hi into out (at most max): their count, or -1
 * with the message naming opt. */
static int parse_ints(const char *opt, const char *text, int32_t lo, int32_t hi, int32_t *out, int max) {
    int n = 0;
    const char *p = text;
    while (*p) {
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p || (*end && *end != ',') || v < lo || v > hi || n == max) {
            cli_error("%s: --%s \"%s\": whole numbers %d..%d separated by commas (at most %d)", PROG, opt, text,
                      (int)lo, (int)hi, max);
            return -1;
        }
        out[n++] = (int32_t)v;
        p = *end ? end + 1 : end;
    }
    if (!n)
        cli_error("%s: --%s: no value", PROG, opt);
    return n ? n : -1;
}

/* Parses "a,b,..." of names (each one of names, NULL-terminated) into their indices in out
 * (at most max): their count, or -1 with the message naming opt ("--opt \"text\": among",
 * or "--opt: no noun" for an empty list). */
static int parse_names(const char *opt, const char *text, const char *const *names, int *out, int max,
                       const char *among, const char *noun) {
    char *buf = strdup(text);
    if (!buf) {
        cli_error("%s: --%s: out of memory", PROG, opt);
        return -1;
    }
    int n = 0;
    char *save = NULL;
    for (char *v = strtok_r(buf, ",", &save); v; v = strtok_r(NULL, ",", &save)) {
        int k = -1;
        for (int i = 0; names[i]; i++)
            if (!strcmp(v, names[i]))
                k = i;
        if (k < 0 || n == max) {
            cli_error("%s: --%s \"%s\": %s", PROG, opt, text, among);
            free(buf);
            return -1;
        }
        out[n++] = k;
    }
    free(buf);
    if (!n)
        cli_error("%s: --%s: no %s", PROG, opt, noun);
    return n ? n : -1;
}

/* Trains o for its steps with a progress line on stderr (label before it); CLI_EXIT_OK,
 * CLI_EXIT_INTERRUPTED (Ctrl-C) or CLI_EXIT_FAIL (the message printed).  *t is the trainer
 * (the caller frees it, also on failure). */
static int train_model(const atn_train_options *o, const char *label, atn_trainer **t, double *seconds) {
    atn_error err = {0};
    *t = atn_trainer_new(o, &err);
    if (!*t) {
        cli_error("%s: %s: %s", PROG, label, err.message);
        return err.status == ATN_E_NOMEM ? CLI_EXIT_FAIL : CLI_EXIT_USAGE;
    }
    bool tty = isatty(2);
    double t0 = train_now_s(), last = -1;
    atn_train_stats st;
    for (int32_t s = 0; s < o->steps; s++) {
        if (cli_interrupted())
            return CLI_EXIT_INTERRUPTED;
        if (atn_trainer_compute(*t, &st, &err) != ATN_OK || atn_trainer_update(*t, &st, &err) != ATN_OK) {
            cli_error("%s: %s: %s", PROG, label, err.message);
            return CLI_EXIT_FAIL;
        }
        double el = train_now_s() - t0;
        if (tty && el - last > 0.2) {
            fprintf(stderr, "\r%s: step %d/%d  loss %.4f   ", label, (int)s + 1, (int)o->steps, (double)st.loss);
            last = el;
        }
    }
    if (tty && last >= 0)
        fputc('\r', stderr);
    *seconds = train_now_s() - t0;
    return CLI_EXIT_OK;
}

static const char *const pos_names[] = {"learned", "sinusoidal", "none", "alibi", "rotary", NULL};

/* ---- --test-lengths ----------------------------------------------------------------------- */

#define TL_EVAL_BATCHES 4
#define TL_EVAL_SEED 1000003u   /* added to the run's seed: batches the training never drew */

typedef struct tl_cell {
    float loss, accuracy;
    int32_t tokens;
    bool refused;
    char why[200];
} tl_cell;

static bool tl_write(const char *path, const train_cli *tc, const int *schemes, int n_schemes,
                     const int32_t *lengths, int n_len, const tl_cell *cells, int done) {
    size_t len = strlen(path);
    bool json = len > 5 && !strcmp(path + len - 5, ".json");
    atn_atomic_file *file = NULL;
    FILE *f = exp_open(path, &file);
    if (!f)
        return false;
    if (json)
        fprintf(f, "{\"task\": \"%s\", \"train_length\": %d, \"steps\": %d, \"eval_batches\": %d, \"runs\": [\n",
                atn_train_task_name(tc->o.task), (int)tc->o.length, (int)tc->o.steps, TL_EVAL_BATCHES);
    else
        fputs("positions,seed,length,tokens,loss,accuracy,refused\n", f);
    int rows = 0;
    for (int r = 0; r < done; r++) {
        int k = r / tc->seeds;
        unsigned long long seed = (unsigned long long)(tc->o.seed + (uint64_t)(r % tc->seeds));
        for (int i = 0; i < n_len; i++) {
            const tl_cell *c = &cells[(size_t)r * n_len + i];
            if (json) {
                fprintf(f, "%s  {\"positions\": \"%s\", \"seed\": %llu, \"length\": %d, ", rows++ ? ",\n" : "",
                        pos_names[schemes[k]], seed, (int)lengths[i]);
                if (c->refused) {
                    fputs("\"refused\": ", f);
                    cli_json_string(f, c->why);
                    fputc('}', f);
                } else {
                    fprintf(f, "\"tokens\": %d, \"loss\": ", (int)c->tokens);
                    cli_json_number(f, c->loss);
                    fprintf(f, ", \"accuracy\": %.6g}", (double)c->accuracy);
                }
            } else if (c->refused) {
                fprintf(f, "%s,%llu,%d,,,,\"%s\"\n", pos_names[schemes[k]], seed, (int)lengths[i], c->why);
            } else {
                fprintf(f, "%s,%llu,%d,%d,%.7g,%.6g,\n", pos_names[schemes[k]], seed, (int)lengths[i],
                        (int)c->tokens, (double)c->loss, (double)c->accuracy);
            }
        }
    }
    if (json)
        fputs("\n]}\n", f);
    (void)n_schemes;
    return exp_close(file);
}

static void draw_lines(cairo_t *cr, double w, double h, void *user) { atn_render_line_chart(cr, user, w, h); }

/* mean[k][i]: scheme k's accuracy at length i over its seeds, NaN where refused. */
static int tl_plot(const char *path, const train_cli *tc, const int *schemes, int n_schemes, const int32_t *lengths,
                   int n_len, const float *mean) {
    atn_output_format fmt;
    atn_output_format_from_path(path, &fmt);
    float x[64];
    for (int i = 0; i < n_len; i++)
        x[i] = (float)lengths[i];
    atn_line_series series[8];
    char names[8][64];
    for (int k = 0; k < n_schemes; k++) {
        /* a scheme refused at some length says so in the legend (its line stops there) */
        int refused = 0;
        for (int i = 0; i < n_len; i++)
            refused += isnan(mean[(size_t)k * n_len + i]);
        if (refused)
            snprintf(names[k], sizeof names[k], "%s (no table past %d)", pos_names[schemes[k]], (int)tc->o.length);
        else
            snprintf(names[k], sizeof names[k], "%s", pos_names[schemes[k]]);
        series[k] = (atn_line_series){.name = names[k], .x = x, .y = mean + (size_t)k * n_len, .n = n_len};
    }
    char title[200];
    snprintf(title, sizeof title, "%s: trained at length %d, accuracy by test length (%d seed%s, mean)",
             atn_train_task_name(tc->o.task), (int)tc->o.length, (int)tc->seeds, tc->seeds == 1 ? "" : "s");
    atn_render_style st;
    atn_render_style_init(&st, false);
    atn_line_chart_spec spec;
    atn_line_chart_spec_init(&spec);
    spec.series = series, spec.n_series = n_schemes, spec.y_percent = true, spec.y_fixed = true;
    spec.y_min = 0, spec.y_max = 1, spec.x_integer = true;
    spec.x_label = "test length (--length)", spec.y_label = "accuracy", spec.title = title, spec.style = &st;
    (void)fmt;
    return exp_figure(path, 640, 420, draw_lines, &spec);
}

int train_test_long(const train_cli *tc) {
    if (tc->o.task == ATN_TASK_MODADD) {
        cli_error("%s: --test-lengths: the modadd task has no length (a + b = c): pick another --task", PROG);
        return CLI_EXIT_USAGE;
    }
    int32_t lengths[64];
    int n_len = parse_ints("test-lengths", tc->test_lengths, 2, 255, lengths + 1, 63);
    if (n_len < 0)
        return CLI_EXIT_USAGE;
    /* the training length first, then the others ascending, each once */
    lengths[0] = tc->o.length;
    n_len++;
    for (int i = 1; i < n_len; i++)
        for (int j = i + 1; j < n_len; j++)
            if (lengths[j] < lengths[i]) {
                int32_t v = lengths[i];
                lengths[i] = lengths[j], lengths[j] = v;
            }
    int m = 1;
    for (int i = 1; i < n_len; i++)
        if (lengths[i] != lengths[0] && lengths[i] != lengths[m - 1])
            lengths[m++] = lengths[i];
    n_len = m;
    int schemes[8], n_schemes = 0;
    if (!tc->schemes) {
        static const int all[] = {ATN_POS_LEARNED, ATN_POS_SINUSOIDAL, ATN_POS_ROTARY, ATN_POS_ALIBI, ATN_POS_NONE};
        memcpy(schemes, all, sizeof all), n_schemes = 5;
    } else if ((n_schemes = parse_names("schemes", tc->schemes, pos_names, schemes, 8,
                                        "position schemes among learned, sinusoidal, rotary, alibi, none, "
                                        "separated by commas", "scheme")) < 0) {
        return CLI_EXIT_USAGE;
    }
    for (int k = 0; k < n_schemes; k++) {   /* each scheme's options checked before any training */
        atn_train_options o = tc->o;
        o.positions = (atn_train_pos)schemes[k];
        atn_error err = {0};
        if (atn_train_options_check(&o, false, &err) != ATN_OK) {
            cli_error("%s: --schemes %s: %s", PROG, pos_names[schemes[k]], err.message);
            return CLI_EXIT_USAGE;
        }
    }
    int runs = n_schemes * tc->seeds;
    tl_cell *cells = calloc((size_t)runs * n_len, sizeof *cells);
    float *mean = calloc((size_t)n_schemes * n_len, sizeof *mean);
    if (!cells || !mean) {
        free(cells), free(mean);
        cli_error("%s: out of memory", PROG);
        return CLI_EXIT_FAIL;
    }
    int rc = CLI_EXIT_OK, done = 0;
    for (int r = 0; r < runs && rc == CLI_EXIT_OK; r++) {
        atn_train_options o = tc->o;
        o.positions = (atn_train_pos)schemes[r / tc->seeds];
        o.seed = tc->o.seed + (uint64_t)(r % tc->seeds);
        char label[64];
        snprintf(label, sizeof label, "positions=%s seed %llu", pos_names[o.positions], (unsigned long long)o.seed);
        atn_trainer *t = NULL;
        double secs = 0;
        rc = train_model(&o, label, &t, &secs);
        if (rc == CLI_EXIT_OK) {
            fprintf(stderr, "%s: %d steps (%.1f s); accuracy", label, (int)o.steps, secs);
            for (int i = 0; i < n_len && rc == CLI_EXIT_OK; i++) {
                if (cli_interrupted()) {
                    rc = CLI_EXIT_INTERRUPTED;
                    break;
                }
                tl_cell *c = &cells[(size_t)r * n_len + i];
                atn_train_eval ev;
                atn_error err = {0};
                atn_status s = atn_trainer_eval_length(t, lengths[i], TL_EVAL_BATCHES, o.seed + TL_EVAL_SEED, &ev, &err);
                if (s == ATN_E_UNSUPPORTED) {
                    c->refused = true;
                    snprintf(c->why, sizeof c->why, "%.190s", err.message);
                    fprintf(stderr, "  %d: refused", (int)lengths[i]);
                } else if (s != ATN_OK) {
                    fputc('\n', stderr);
                    cli_error("%s: %s, length %d: %s", PROG, label, (int)lengths[i], err.message);
                    rc = s == ATN_E_NOMEM ? CLI_EXIT_FAIL : CLI_EXIT_USAGE;
                } else {
                    c->loss = ev.loss, c->accuracy = ev.accuracy, c->tokens = ev.tokens;
                    fprintf(stderr, "  %d: %.1f%%", (int)lengths[i], 100.0 * ev.accuracy);
                }
            }
            fputc('\n', stderr);
            if (rc == CLI_EXIT_OK)
                done++;
        }
        atn_trainer_free(t);
    }
    if (done) {
        /* the table: each scheme's mean accuracy over its seeds per length ("refused" where
           learned positions have no row) */
        printf("trained at --length %d (%d steps, %s task); accuracy %% on %d fresh batches per length\n",
               (int)tc->o.length, (int)tc->o.steps, atn_train_task_name(tc->o.task), TL_EVAL_BATCHES);
        printf("%-11s", "positions");
        for (int i = 0; i < n_len; i++)
            printf(" %8d", (int)lengths[i]);
        putchar('\n');
        for (int k = 0; k < n_schemes && k * tc->seeds < done; k++) {
            printf("%-11s", pos_names[schemes[k]]);
            for (int i = 0; i < n_len; i++) {
                double sum = 0;
                int cnt = 0;
                bool refused = false;
                for (int s = 0; s < tc->seeds && k * tc->seeds + s < done; s++) {
                    const tl_cell *c = &cells[(size_t)(k * tc->seeds + s) * n_len + i];
                    refused |= c->refused;
                    sum += c->accuracy, cnt++;
                }
                mean[(size_t)k * n_len + i] = refused || !cnt ? NAN : (float)(sum / cnt);
                if (refused || !cnt)
                    printf(" %8s", "refused");
                else
                    printf(" %8.2f", 100 * sum / cnt);
            }
            putchar('\n');
        }
        int n_shown = (done + tc->seeds - 1) / tc->seeds;
        /* written also after a Ctrl-C (rc 130 kept) or a failed model: the finished ones */
        if (tc->log_path && !tl_write(tc->log_path, tc, schemes, n_schemes, lengths, n_len, cells, done))
            rc = CLI_EXIT_FAIL;
        int prc = CLI_EXIT_OK;
        for (int i = 0; i < tc->n_plots && rc != CLI_EXIT_FAIL && prc == CLI_EXIT_OK; i++)
            prc = tl_plot(tc->plots[i], tc, schemes, n_shown, lengths, n_len, mean);
        rc = prc != CLI_EXIT_OK ? prc : rc;
    }
    free(cells), free(mean);
    return rc;
}

/* ---- --grad-depths ------------------------------------------------------------------------ */

static const char *const norm_names[] = {"post", "pre", "none", NULL};

typedef struct gd_run {
    int norm;
    int32_t depth, steps;   /* steps recorded */
    uint64_t seed;
    float *norms;           /* [steps][depth]: each layer's gradient norm, before clipping */
    float *mean;            /* [depth] over the steps */
} gd_run;

static bool gd_write(const char *path, const train_cli *tc, const gd_run *runs, int n) {
    size_t len = strlen(path);
    bool json = len > 5 && !strcmp(path + len - 5, ".json");
    atn_atomic_file *file = NULL;
    FILE *f = exp_open(path, &file);
    if (!f)
        return false;
    if (json)
        fprintf(f, "{\"task\": \"%s\", \"steps\": %d, \"seed\": %llu, \"seeds\": %d, \"runs\": [\n",
                atn_train_task_name(tc->o.task), (int)tc->o.steps, (unsigned long long)tc->o.seed, (int)tc->seeds);
    else
        fputs("norm,depth,seed,step,layer,grad_norm\n", f);
    for (int r = 0; r < n; r++) {
        const gd_run *g = &runs[r];
        if (json) {
            fprintf(f, "  {\"norm\": \"%s\", \"depth\": %d, \"seed\": %llu, \"mean\": [", norm_names[g->norm],
                    (int)g->depth, (unsigned long long)g->seed);
            for (int32_t k = 0; k < g->depth; k++) {
                fputs(k ? ", " : "", f);
                cli_json_number(f, g->mean[k]);
            }
            fputs("], \"per_step\": [", f);
            for (int32_t s = 0; s < g->steps; s++) {
                fputs(s ? ", [" : "[", f);
                for (int32_t k = 0; k < g->depth; k++) {
                    fputs(k ? ", " : "", f);
                    cli_json_number(f, g->norms[(size_t)s * g->depth + k]);
                }
                fputc(']', f);
            }
            fprintf(f, "]}%s\n", r + 1 < n ? "," : "");
        } else {
            for (int32_t s = 0; s < g->steps; s++)
                for (int32_t k = 0; k < g->depth; k++)
                    fprintf(f, "%s,%d,%llu,%d,%d,%.7g\n", norm_names[g->norm], (int)g->depth,
                            (unsigned long long)g->seed, (int)s + 1, (int)k, (double)g->norms[(size_t)s * g->depth + k]);
        }
    }
    if (json)
        fputs("]}\n", f);
    return exp_close(file);
}

/* A placement and depth over its finished seeds: each layer's step-1 norm and per-run mean
 * (over the steps) averaged over the seeds, and the per-run means' sd over the seeds (0 for
 * one seed). */
typedef struct gd_group {
    int norm;
    int32_t depth, seeds;
    float step1[12], mean[12], sd[12];
} gd_group;

/* Groups the finished runs (consecutive runs of one placement and depth, one per seed): their
 * count. */
static int gd_groups(const gd_run *runs, int done, gd_group *out) {
    int n = 0;
    for (int r = 0; r < done;) {
        int e = r;
        while (e < done && runs[e].norm == runs[r].norm && runs[e].depth == runs[r].depth)
            e++;
        gd_group *g = &out[n++];
        g->norm = runs[r].norm, g->depth = runs[r].depth, g->seeds = e - r;
        for (int32_t k = 0; k < g->depth; k++) {
            double s1 = 0, m = 0, v = 0;
            for (int i = r; i < e; i++)
                s1 += runs[i].norms[k], m += runs[i].mean[k];
            m /= g->seeds;
            for (int i = r; i < e; i++)
                v += (runs[i].mean[k] - m) * (runs[i].mean[k] - m);
            g->step1[k] = (float)(s1 / g->seeds), g->mean[k] = (float)m;
            g->sd[k] = g->seeds > 1 ? (float)sqrt(v / (g->seeds - 1)) : 0.0f;
        }
        r = e;
    }
    return n;
}

/* The colour of group r: one per depth (its depth's place among the depths in order of first
 * appearance), the placement drawn dashed (post) or solid. */
static int32_t depth_color(const gd_group *groups, int r) {
    int first = 0;
    while (groups[first].depth != groups[r].depth)
        first++;
    int32_t idx = 0;
    for (int i = 0; i < first; i++) {
        bool seen = false;
        for (int j = 0; j < i; j++)
            seen |= groups[j].depth == groups[i].depth;
        idx += !seen;
    }
    return idx;
}

static int gd_plot(const char *path, const train_cli *tc, const gd_group *groups, int n) {
    atn_output_format fmt;
    atn_output_format_from_path(path, &fmt);
    atn_line_series *series = calloc((size_t)n, sizeof *series);
    char (*names)[48] = calloc((size_t)n, sizeof *names);
    float *x = calloc(12, sizeof *x);
    if (!series || !names || !x) {
        free(series), free(names), free(x);
        cli_error("%s: out of memory", PROG);
        return CLI_EXIT_FAIL;
    }
    for (int k = 0; k < 12; k++)
        x[k] = (float)k;
    for (int r = 0; r < n; r++) {
        snprintf(names[r], sizeof names[r], "%s-LN, %d layer%s", norm_names[groups[r].norm], (int)groups[r].depth,
                 groups[r].depth == 1 ? "" : "s");
        series[r] = (atn_line_series){.name = names[r], .x = x, .y = groups[r].mean, .n = groups[r].depth,
                                      .dashed = groups[r].norm == ATN_TRAIN_POST_LN, .own_color = true,
                                      .color = depth_color(groups, r), .err = tc->seeds > 1 ? groups[r].sd : NULL};
    }
    char title[200];
    if (tc->seeds > 1)
        snprintf(title, sizeof title,
                 "Gradient norm per layer over the first %d step%s (%s, %d seeds: mean \xc2\xb1 sd)", (int)tc->o.steps,
                 tc->o.steps == 1 ? "" : "s", atn_train_task_name(tc->o.task), (int)tc->seeds);
    else
        snprintf(title, sizeof title, "Gradient norm per layer, mean over the first %d step%s (%s task, seed %llu)",
                 (int)tc->o.steps, tc->o.steps == 1 ? "" : "s", atn_train_task_name(tc->o.task),
                 (unsigned long long)tc->o.seed);
    atn_render_style st;
    atn_render_style_init(&st, false);
    atn_line_chart_spec spec;
    atn_line_chart_spec_init(&spec);
    spec.series = series, spec.n_series = n, spec.y_log = true, spec.x_integer = true;
    spec.x_label = "layer (0: next to the embeddings)", spec.y_label = "gradient norm (before clipping)";
    spec.title = title, spec.style = &st;
    (void)fmt;
    int rc = exp_figure(path, 640, 420, draw_lines, &spec);
    free(series), free(names), free(x);
    return rc;
}

int train_grad_depths(const train_cli *tc) {
    int32_t depths[12];
    int n_depths = parse_ints("grad-depths", tc->grad_depths, 1, 12, depths, 12);
    if (n_depths < 0)
        return CLI_EXIT_USAGE;
    int placements[3], n_pl = 0;
    if (!tc->placements) {
        placements[0] = ATN_TRAIN_POST_LN, placements[1] = ATN_TRAIN_PRE_LN, n_pl = 2;
    } else if ((n_pl = parse_names("placements", tc->placements, norm_names, placements, 3,
                                   "LayerNorm placements among post, pre and none, separated by commas",
                                   "placement")) < 0) {
        return CLI_EXIT_USAGE;
    }
    if (tc->o.steps < 1) {
        cli_error("%s: --grad-depths records the first --steps steps: --steps must be 1 or more", PROG);
        return CLI_EXIT_USAGE;
    }
    int n_runs = n_pl * n_depths * tc->seeds;   /* run r: placement, depth, then seed */
    for (int r = 0; r < n_pl * n_depths; r++) {   /* every model's options checked before any training */
        atn_train_options o = tc->o;
        o.norm = (atn_train_norm)placements[r / n_depths], o.layers = depths[r % n_depths];
        atn_error err = {0};
        if (atn_train_options_check(&o, false, &err) != ATN_OK) {
            cli_error("%s: --placements %s, depth %d: %s", PROG, norm_names[o.norm], (int)o.layers, err.message);
            return CLI_EXIT_USAGE;
        }
    }
    gd_run *runs = calloc((size_t)n_runs, sizeof *runs);
    gd_group *groups = calloc((size_t)n_runs, sizeof *groups);
    if (!runs || !groups) {
        free(runs), free(groups);
        cli_error("%s: out of memory", PROG);
        return CLI_EXIT_FAIL;
    }
    int rc = CLI_EXIT_OK, done = 0;
    bool tty = isatty(2);
    for (int r = 0; r < n_runs && rc == CLI_EXIT_OK; r++) {
        atn_train_options o = tc->o;
        int group = r / tc->seeds;
        o.norm = (atn_train_norm)placements[group / n_depths], o.layers = depths[group % n_depths];
        o.seed = tc->o.seed + (uint64_t)(r % tc->seeds);
        gd_run *g = &runs[r];
        g->norm = o.norm, g->depth = o.layers, g->seed = o.seed;
        g->norms = calloc((size_t)o.steps * o.layers, sizeof *g->norms);
        g->mean = calloc((size_t)o.layers, sizeof *g->mean);
        char label[80];
        int ll = snprintf(label, sizeof label, "%s-LN, %d layer%s", norm_names[o.norm], (int)o.layers,
                          o.layers == 1 ? "" : "s");
        if (tc->seeds > 1)
            snprintf(label + ll, sizeof label - (size_t)ll, ", seed %llu", (unsigned long long)o.seed);
        atn_error err = {0};
        atn_trainer *t = g->norms && g->mean ? atn_trainer_new(&o, &err) : NULL;
        if (!t) {
            cli_error("%s: %s: %s", PROG, label, g->norms && g->mean ? err.message : "out of memory");
            rc = CLI_EXIT_FAIL;
            break;
        }
        double t0 = train_now_s(), last = -1;
        atn_train_stats st;
        for (int32_t s = 0; s < o.steps && rc == CLI_EXIT_OK; s++) {
            if (cli_interrupted()) {
                rc = CLI_EXIT_INTERRUPTED;
                break;
            }
            if (atn_trainer_compute(t, &st, &err) != ATN_OK) {   /* a diverged run stops here */
                cli_error("%s: %s: %s", PROG, label, err.message);
                rc = CLI_EXIT_FAIL;
                break;
            }
            for (int32_t k = 0; k < o.layers; k++)
                g->norms[(size_t)s * o.layers + k] = atn_trainer_layer_grad_norm(t, k);
            atn_trainer_update(t, &st, &err);
            g->steps = s + 1;
            double el = train_now_s() - t0;
            if (tty && el - last > 0.2) {
                fprintf(stderr, "\r%s: step %d/%d  loss %.4f   ", label, (int)s + 1, (int)o.steps, (double)st.loss);
                last = el;
            }
        }
        for (int32_t k = 0; k < o.layers; k++) {
            double sum = 0;
            for (int32_t s = 0; s < g->steps; s++)
                sum += g->norms[(size_t)s * o.layers + k];
            g->mean[k] = g->steps ? (float)(sum / g->steps) : NAN;
        }
        if (g->steps)
            fprintf(stderr, "%s%s: %d steps (%.1f s), loss %.4f; layer 0 %.4g, layer %d %.4g (mean)\n",
                    tty && last >= 0 ? "\r" : "", label, (int)g->steps, train_now_s() - t0, (double)st.loss,
                    (double)g->mean[0], (int)o.layers - 1, (double)g->mean[o.layers - 1]);
        atn_trainer_free(t);
        if (rc == CLI_EXIT_OK)
            done++;
    }
    if (done) {
        int n_groups = gd_groups(runs, done, groups);
        if (tc->seeds > 1)
            printf("gradient norm of each layer's parameters before clipping (%s task, seeds %llu..%llu):\n"
                   "at step 1, and the mean over the first %d steps, each the mean over the seeds; sd: the\n"
                   "seeds' means' standard deviation\n",
                   atn_train_task_name(tc->o.task), (unsigned long long)tc->o.seed,
                   (unsigned long long)(tc->o.seed + (uint64_t)tc->seeds - 1), (int)tc->o.steps);
        else
            printf("gradient norm of each layer's parameters before clipping (%s task, seed %llu):\n"
                   "at step 1, and the mean over the first %d steps\n",
                   atn_train_task_name(tc->o.task), (unsigned long long)tc->o.seed, (int)tc->o.steps);
        int32_t maxd = 0;
        for (int r = 0; r < n_groups; r++)
            maxd = groups[r].depth > maxd ? groups[r].depth : maxd;
        printf("%-5s %5s %-6s", "norm", "depth", "");
        for (int32_t k = 0; k < maxd; k++) {
            char head[24];
            snprintf(head, sizeof head, "layer %d", (int)k);
            printf(" %11s", head);
        }
        putchar('\n');
        for (int r = 0; r < n_groups; r++) {
            const gd_group *g = &groups[r];
            for (int row = 0; row < (tc->seeds > 1 ? 3 : 2); row++) {
                printf("%-5s %5d %-6s", norm_names[g->norm], (int)g->depth, row == 2 ? "sd" : row ? "mean" : "step 1");
                for (int32_t k = 0; k < g->depth; k++)
                    printf(" %11.4g", (double)(row == 2 ? g->sd[k] : row ? g->mean[k] : g->step1[k]));
                putchar('\n');
            }
        }
        /* written also after a Ctrl-C (rc 130 kept) or a diverged model: the finished ones */
        if (tc->log_path && !gd_write(tc->log_path, tc, runs, done))
            rc = CLI_EXIT_FAIL;
        int prc = CLI_EXIT_OK;
        for (int i = 0; i < tc->n_plots && rc != CLI_EXIT_FAIL && prc == CLI_EXIT_OK; i++)
            prc = gd_plot(tc->plots[i], tc, groups, n_groups);
        rc = prc != CLI_EXIT_OK ? prc : rc;
    }
    for (int r = 0; r < n_runs; r++)
        free(runs[r].norms), free(runs[r].mean);
    free(runs), free(groups);
    return rc;
}
