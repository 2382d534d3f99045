/* A corpus, one sentence per line, streamed through the encoder: the command line's
 * --corpus and the window's corpus statistics share this loop. */
#include "attnscope.h"
#include "core/cancel.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

/* Reads one line ('\n' excluded) into buf (ATN_CORPUS_LINE_MAX + 1 bytes): at most
 * ATN_CORPUS_LINE_MAX bytes kept, ending at a UTF-8 character boundary; the rest of the line
 * is read and dropped.  Returns false at the end of the input (nothing read).  *whole: the
 * line's length in the input (without its '\n'); *nul_at: the first NUL byte's offset, or -1; *runaway: no end
 * within ATN_CORPUS_RUNAWAY bytes (reading stopped there). */
static bool read_line(FILE *f, char *buf, size_t *kept, int64_t *whole, int64_t *nul_at, bool *runaway) {
    size_t n = 0;
    int64_t all = 0;
    int c = EOF;
    *nul_at = -1;
    *runaway = false;
    flockfile(f);
    while ((c = getc_unlocked(f)) != EOF && c != '\n') {
        if (c == 0 && *nul_at < 0)
            *nul_at = all;
        all++;
        if (n < ATN_CORPUS_LINE_MAX)
            buf[n++] = (char)c;
        else if (all >= ATN_CORPUS_RUNAWAY) {
            *runaway = true;
            break;
        }
    }
    funlockfile(f);
    if (c == EOF && all == 0)
        return false;
    if ((int64_t)n < all) {   /* cut: do not end inside a multi-byte character */
        size_t start = n;
        while (start > 0 && n - start < 4 && ((unsigned char)buf[start - 1] & 0xC0) == 0x80)
            start--;
        if (start > 0) {
            unsigned char lead = (unsigned char)buf[start - 1];
            size_t need = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1;
            if (start - 1 + need > n)
                n = start - 1;
        }
    }
    buf[n] = 0;
    *kept = n;
    *whole = all;
    return true;
}

/* Lines read but not yet handed on: the sentences wait for their stack (atn_batch_forward);
 * every line's progress step runs after the lines before it have been consumed, so
 * consume and progress see the same order as one forward per line would give. */
typedef struct pending {
    int64_t line;   /* 1-based */
    double done;    /* bytes read up to and including it */
} pending;

typedef struct corpus_pass {
    atn_batch *batch;
    atn_run_options opts;
    atn_capture_fn consume;
    atn_progress_fn progress;
    void *user_data;
    atn_corpus_report *report;
    double total_bytes, shown;
    pending *lines;          /* lines since the last flush */
    int32_t n_lines, next;   /* next: the first whose progress step has not run */
    atn_encoding **encs;     /* the sentences among them */
    int32_t *line_of;        /* encs[k] is lines[line_of[k]] */
    int32_t n_encs, rows;
} corpus_pass;

enum { PENDING_MAX = 1024, PENDING_ROWS = 4 * ATN_BATCH_ROWS };

/* The progress step after line p (the loop's every few lines). */
static atn_status line_done(corpus_pass *ps, const pending *p, atn_error *err) {
    double frac = ps->total_bytes > 0 ? p->done / ps->total_bytes : 0;
    frac = frac > 0.999 ? 0.999 : frac;
    if (ps->progress && (frac - ps->shown >= 0.005 || (p->line & 63) == 0)) {
        ps->shown = frac;
        if (!ps->progress(frac, ATN_STAGE_CORPUS, ps->user_data))
            return atn_error_set(err, ATN_E_CANCELLED, "cancelled after %lld sentences",
                                 (long long)ps->report->sentences);
    }
    return ATN_OK;
}

static atn_status steps_before(corpus_pass *ps, int32_t upto, atn_error *err) {
    atn_status st = ATN_OK;
    while (st == ATN_OK && ps->next < upto)
        st = line_done(ps, &ps->lines[ps->next++], err);
    return st;
}

static atn_status each_sentence(int32_t k, const atn_capture *cap, void *user, atn_error *err) {
    corpus_pass *ps = user;
    int32_t at = ps->line_of[k];
    atn_status st = steps_before(ps, at, err);
    ps->report->current_line = ps->lines[at].line;
    if (st == ATN_OK)
        st = ps->consume(cap, ps->user_data, err);
    if (st == ATN_OK) {
        ps->report->sentences++;
        ps->next = at + 1;
        st = line_done(ps, &ps->lines[at], err);
    }
    return st;
}

/* Runs the pending sentences and the pending lines' progress steps. */
static atn_status flush(corpus_pass *ps, atn_error *err) {
    atn_status st = ATN_OK;
    if (ps->n_encs > 0) {
        int32_t failed = -1;
        st = atn_batch_forward(ps->batch, ps->encs, ps->n_encs, &ps->opts, each_sentence, ps, &failed, err);
        if (st != ATN_OK && st != ATN_E_CANCELLED && err && failed >= 0) {
            char why[sizeof err->message];
            snprintf(why, sizeof why, "%s", err->message);
            atn_error_set(err, st, "line %lld: %s", (long long)ps->lines[ps->line_of[failed]].line, why);
        }
    }
    if (st == ATN_OK)
        st = steps_before(ps, ps->n_lines, err);
    for (int32_t k = 0; k < ps->n_encs; k++)
        atn_encoding_free(ps->encs[k]);
    ps->n_encs = ps->n_lines = ps->next = ps->rows = 0;
    return st;
}

void atn_corpus_options_init(atn_corpus_options *o) {
    o->rows = 0;
    o->exact = true;
    o->first_line = 1;
    o->max_lines = 0;
}

atn_status atn_corpus_run(const atn_model *model, FILE *f, double total_bytes, const atn_run_options *run_opts,
                          atn_capture_fn consume, atn_progress_fn progress, void *user_data,
                          atn_corpus_report *report, atn_error *err) {
    return atn_corpus_run_ex(model, f, total_bytes, run_opts, NULL, consume, progress, user_data, report, err);
}

atn_status atn_corpus_run_ex(const atn_model *model, FILE *f, double total_bytes, const atn_run_options *run_opts,
                             const atn_corpus_options *copts, atn_capture_fn consume, atn_progress_fn progress,
                             void *user_data, atn_corpus_report *report, atn_error *err) {
    memset(report, 0, sizeof *report);
    if (!model || !f || !consume)
        return atn_error_set(err, ATN_E_INVALID, "corpus: no model, file or consumer");
    if (atn_model_kind_of(model) == ATN_MODEL_TOY)
        return atn_error_set(err, ATN_E_INVALID, "model \"%s\" is a toy model with its own tokens; a corpus needs "
                             "a model with a tokenizer", atn_model_name(model));
    corpus_pass ps;
    memset(&ps, 0, sizeof ps);
    if (run_opts)
        ps.opts = *run_opts;
    else
        atn_run_options_init(&ps.opts);
    ps.consume = consume, ps.progress = progress, ps.user_data = user_data, ps.report = report;
    ps.total_bytes = total_bytes, ps.shown = -1;
    ps.batch = atn_batch_new(model);
    ps.lines = malloc(PENDING_MAX * sizeof *ps.lines);
    ps.encs = malloc(PENDING_MAX * sizeof *ps.encs);
    ps.line_of = malloc(PENDING_MAX * sizeof *ps.line_of);
    char *line = malloc(ATN_CORPUS_LINE_MAX + 1);
    if (ps.batch && copts) {
        atn_batch_set_rows(ps.batch, copts->rows);
        atn_batch_set_exact(ps.batch, copts->exact);
    }
    if (!ps.batch || !ps.lines || !ps.encs || !ps.line_of || !line) {
        atn_batch_free(ps.batch);
        free(ps.lines), free(ps.encs), free(ps.line_of), free(line);
        return atn_error_set(err, ATN_E_NOMEM, "out of memory");
    }
    int32_t pending_rows = PENDING_ROWS;
    if (copts && copts->rows > ATN_BATCH_ROWS)
        pending_rows = 4 * copts->rows;
    size_t len;
    int64_t whole, nul_at;
    bool runaway;
    double done = 0;
    int64_t first_line = copts && copts->first_line > 1 ? copts->first_line : 1;
    int64_t max_lines = copts && copts->max_lines > 0 ? copts->max_lines : INT64_MAX;
    atn_status st = ATN_OK;
    if (progress && !progress(0, ATN_STAGE_CORPUS, user_data))
        st = atn_error_set(err, ATN_E_CANCELLED, "cancelled before the first sentence");
    while (st == ATN_OK && report->lines < max_lines && read_line(f, line, &len, &whole, &nul_at, &runaway)) {
        report->lines++;
        done += (double)whole + 1;
        if (runaway) {
            st = flush(&ps, err);
            if (st == ATN_OK)
                st = atn_error_set(err, ATN_E_FORMAT, "line %lld has no end after %d MiB: not a file of text "
                                   "lines (an endless input such as /dev/zero?)", (long long)(report->lines + first_line - 1),
                                   ATN_CORPUS_RUNAWAY >> 20);
            break;
        }
        if ((int64_t)len < whole && nul_at < 0)
            report->cut++;
        while (len > 0 && line[len - 1] == '\r')
            line[--len] = 0;
        const char *p = line;
        while (*p == ' ' || *p == '\t')
            p++;
        atn_encoding *enc = NULL;
        if (nul_at >= 0) {   /* a NUL would cut the sentence silently: not text */
            if (report->skipped < 3) {
                report->skip_line[report->skipped] = report->lines + first_line - 1;
                snprintf(report->skip_reason[report->skipped], sizeof report->skip_reason[0],
                         "a NUL byte at byte %lld: not text", (long long)nul_at);
            }
            report->skipped++;
        } else if (*p) {
            atn_error e = {0};
            /* a long line's tokenizing asks progress too (core/cancel.h), at the fraction shown */
            atn_cancel_scope scope;
            atn_cancel_enter(&scope, progress, user_data, ps.shown > 0 ? ps.shown : 0.0, ATN_STAGE_CORPUS);
            atn_status es = atn_model_encode(model, line, NULL, &enc, &e);
            atn_cancel_leave(&scope);
            if (es == ATN_E_CANCELLED) {
                st = atn_error_set(err, ATN_E_CANCELLED, "cancelled while tokenizing line %lld",
                                   (long long)(report->lines + first_line - 1));
                break;
            }
            if (es != ATN_OK) {
                /* one bad line (invalid UTF-8) should not end a long corpus run */
                if (report->skipped < 3) {
                    report->skip_line[report->skipped] = report->lines + first_line - 1;
                    snprintf(report->skip_reason[report->skipped], sizeof report->skip_reason[0], "%.159s", e.message);
                }
                report->skipped++;
                atn_encoding_free(enc);
                enc = NULL;
            } else {
                report->truncated += enc->truncated;
            }
        }
        pending pl = {report->lines + first_line - 1, done};
        if (!enc && ps.n_lines == 0) {   /* nothing waits: its progress step now */
            st = line_done(&ps, &pl, err);
            continue;
        }
        ps.lines[ps.n_lines] = pl;
        if (enc) {
            ps.line_of[ps.n_encs] = ps.n_lines;
            ps.encs[ps.n_encs++] = enc;
            ps.rows += enc->n;
        }
        ps.n_lines++;
        if (ps.n_lines == PENDING_MAX || ps.rows >= pending_rows)
            st = flush(&ps, err);
    }
    if (st == ATN_OK)
        st = flush(&ps, err);
    else
        for (int32_t k = 0; k < ps.n_encs; k++)
            atn_encoding_free(ps.encs[k]);
    if (st == ATN_OK && ferror(f))
        st = atn_error_set(err, ATN_E_IO, "read error after line %lld", (long long)(report->lines + first_line - 1));
    if (st == ATN_OK && progress)
        progress(1.0, ATN_STAGE_CORPUS, user_data);
    free(line);
    free(ps.lines), free(ps.encs), free(ps.line_of);
    atn_batch_free(ps.batch);
    return st;
}
