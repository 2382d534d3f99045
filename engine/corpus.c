/* A corpus, one sentence per line, streamed through the encoder: the command line's
 * --corpus and the window's corpus statistics share this loop. */
#include "attnscope.h"

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

atn_status atn_corpus_run(const atn_model *model, FILE *f, double total_bytes, const atn_run_options *run_opts,
                          atn_capture_fn consume, atn_progress_fn progress, void *user_data,
                          atn_corpus_report *report, atn_error *err) {
    memset(report, 0, sizeof *report);
    if (!model || !f || !consume)
        return atn_error_set(err, ATN_E_INVALID, "corpus: no model, file or consumer");
    if (atn_model_kind_of(model) == ATN_MODEL_TOY)
        return atn_error_set(err, ATN_E_INVALID, "model \"%s\" is a toy model with its own tokens; a corpus needs "
                             "a model with a tokenizer", atn_model_name(model));
    atn_run_options opts;
    if (run_opts)
        opts = *run_opts;
    else
        atn_run_options_init(&opts);
    atn_run *run = atn_run_new(model);
    if (!run)
        return atn_error_set(err, ATN_E_NOMEM, "out of memory");
    char *line = malloc(ATN_CORPUS_LINE_MAX + 1);
    if (!line) {
        atn_run_free(run);
        return atn_error_set(err, ATN_E_NOMEM, "out of memory");
    }
    size_t len;
    int64_t whole, nul_at;
    bool runaway;
    double done = 0, shown = -1;
    atn_status st = ATN_OK;
    if (progress && !progress(0, ATN_STAGE_CORPUS, user_data))
        st = atn_error_set(err, ATN_E_CANCELLED, "cancelled before the first sentence");
    while (st == ATN_OK && read_line(f, line, &len, &whole, &nul_at, &runaway)) {
        report->lines++;
        done += (double)whole + 1;
        if (runaway) {
            st = atn_error_set(err, ATN_E_FORMAT, "line %lld has no end after %d MiB: not a file of text lines "
                               "(an endless input such as /dev/zero?)", (long long)report->lines,
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
        if (nul_at >= 0) {   /* a NUL would cut the sentence silently: not text */
            if (report->skipped < 3) {
                report->skip_line[report->skipped] = report->lines;
                snprintf(report->skip_reason[report->skipped], sizeof report->skip_reason[0],
                         "a NUL byte at byte %lld: not text", (long long)nul_at);
            }
            report->skipped++;
        } else if (*p) {
            atn_encoding *enc = NULL;
            atn_error e = {0};
            if (atn_model_encode(model, line, NULL, &enc, &e) != ATN_OK) {
                /* one bad line (invalid UTF-8) should not end a long corpus run */
                if (report->skipped < 3) {
                    report->skip_line[report->skipped] = report->lines;
                    snprintf(report->skip_reason[report->skipped], sizeof report->skip_reason[0], "%.159s", e.message);
                }
                report->skipped++;
            } else {
                report->truncated += enc->truncated;
                st = atn_run_forward(run, enc, &opts, err);
                if (st == ATN_OK)
                    st = consume(atn_run_capture(run), user_data, err);
                if (st == ATN_OK)
                    report->sentences++;
                else if (st != ATN_E_CANCELLED && err) {
                    char why[sizeof err->message];
                    snprintf(why, sizeof why, "%s", err->message);
                    atn_error_set(err, st, "line %lld: %s", (long long)report->lines, why);
                }
            }
            atn_encoding_free(enc);
        }
        double frac = total_bytes > 0 ? done / total_bytes : 0;
        frac = frac > 0.999 ? 0.999 : frac;
        if (st == ATN_OK && progress && (frac - shown >= 0.005 || (report->lines & 63) == 0)) {
            shown = frac;
            if (!progress(frac, ATN_STAGE_CORPUS, user_data))
                st = atn_error_set(err, ATN_E_CANCELLED, "cancelled after %lld sentences",
                                   (long long)report->sentences);
        }
    }
    if (st == ATN_OK && ferror(f))
        st = atn_error_set(err, ATN_E_IO, "read error after line %lld", (long long)report->lines);
    if (st == ATN_OK && progress)
        progress(1.0, ATN_STAGE_CORPUS, user_data);
    free(line);
    atn_run_free(run);
    return st;
}
