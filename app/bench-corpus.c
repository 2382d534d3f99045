/* attnscope bench --corpus N: a corpus pass's throughput, N sentences of random lengths
 * (--corpus-lengths LO,HI, default 8,40 tokens) through one forward per sentence and through
 * stacked forwards (atn_batch_forward), in the same process, with what the corpus pass keeps
 * (attention, no trace inputs).  bench/peer_torch.py --corpus runs the same sentences in
 * torch, padded in batches of 32 (tools/bench.sh runs both). */
#include "bench-corpus.h"
#include "cli.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static uint64_t mix64(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Sentence i: [CLS] words [SEP], its length lo..hi from the seed. */
static atn_status make_sentence(const atn_model *m, uint64_t seed, int64_t i, int32_t lo, int32_t hi,
                                atn_encoding **enc, atn_error *err) {
    const atn_config *c = atn_model_config(m);
    int32_t n = lo + (int32_t)(mix64(seed * 0x9E3779B97F4A7C15ull + (uint64_t)i) % (uint64_t)(hi - lo + 1));
    int32_t ids[512];
    int32_t V = c->vocab_size;
    for (int32_t t = 0; t < n; t++) {
        uint64_t x = mix64((seed << 32) ^ ((uint64_t)i << 12) ^ (uint64_t)t);
        ids[t] = V > 2000 ? (t == 0 ? 101 : t == n - 1 ? 102 : 1000 + (int32_t)(x % (uint64_t)(V - 1000)))
                          : (int32_t)(x % (uint64_t)V);
    }
    return atn_model_encode_ids(m, ids, NULL, NULL, n, enc, err);
}

typedef struct pass {
    double *sum;   /* [N] a checksum of each capture: sum of p_ij (j+1) and of the last hidden state */
    int64_t seen;
} pass;

static atn_status checksum(int32_t index, const atn_capture *cap, void *user, atn_error *err) {
    pass *p = user;
    size_t n = (size_t)cap->n, LH = (size_t)cap->n_layers * cap->n_heads, d = (size_t)cap->d_model;
    double s = 0;
    float *scratch = cap->attn ? NULL : malloc(n * n * sizeof *scratch);   /* a head made on demand */
    for (size_t lh = 0; lh < LH; lh++) {
        const float *a = atn_capture_head_read(cap, (int32_t)(lh / cap->n_heads), (int32_t)(lh % cap->n_heads),
                                               scratch, err);
        if (!a) {
            free(scratch);
            return err ? err->status : ATN_E_INVALID;
        }
        for (size_t r = 0; r < n; r++)
            for (size_t j = 0; j < n; j++)
                s += (double)a[r * n + j] * (double)(j + 1);
    }
    free(scratch);
    const float *last = cap->hidden + (size_t)cap->n_layers * n * d;
    for (size_t i = 0; i < n * d; i++)
        s += last[i];
    p->sum[index] = s;
    p->seen++;
    return ATN_OK;
}

static double flops_of(const atn_config *c, int32_t n) {
    double d = c->d_model;
    return c->n_layers * (8.0 * n * d * d + 4.0 * n * (double)n * d + 4.0 * n * d * c->d_ffn);
}

int bench_corpus(const atn_model *m, const char *title, int64_t count, int32_t lo, int32_t hi, uint64_t seed,
                 const atn_run_options *base, const char *dump_ids, bool json) {
    const atn_config *c = atn_model_config(m);
    atn_error err = {0};
    atn_encoding **encs = calloc((size_t)count, sizeof *encs);
    pass runs[3];
    memset(runs, 0, sizeof runs);
    for (int k = 0; k < 3; k++)
        runs[k].sum = calloc((size_t)count, sizeof(double));
    int rc = CLI_EXIT_OK;
    if (!encs || !runs[0].sum || !runs[1].sum || !runs[2].sum) {
        cli_error("bench: out of memory");
        rc = CLI_EXIT_FAIL;
        goto done;
    }
    int64_t tokens = 0;
    double flops = 0;
    for (int64_t i = 0; i < count; i++) {
        if (make_sentence(m, seed, i, lo, hi, &encs[i], &err)) {
            rc = cli_fail(&err);
            goto done;
        }
        tokens += encs[i]->n;
        flops += flops_of(c, encs[i]->n);
    }
    if (dump_ids) {   /* one sentence per line, its ids: bench/peer_torch.py --corpus */
        FILE *f = fopen(dump_ids, "w");
        if (!f) {
            cli_error("bench: cannot write %s", dump_ids);
            rc = CLI_EXIT_USAGE;
            goto done;
        }
        for (int64_t i = 0; i < count; i++)
            for (int32_t t = 0; t < encs[i]->n; t++)
                fprintf(f, "%d%c", encs[i]->ids[t], t + 1 < encs[i]->n ? ' ' : '\n');
        if (fclose(f)) {
            cli_error("bench: cannot write %s", dump_ids);
            rc = CLI_EXIT_USAGE;
            goto done;
        }
    }
    atn_run_options o = *base;
    o.keep_attention = true;
    o.keep_trace_inputs = false;   /* what the corpus pass keeps */
    atn_batch *b = atn_batch_new(m);
    if (!b) {
        cli_error("bench: out of memory");
        rc = CLI_EXIT_FAIL;
        goto done;
    }
    /* warm-up: the packed weights, the run's and the stack's memory */
    {
        pass w = {runs[0].sum, 0};
        int64_t few = count < 24 ? count : 24;
        atn_batch_set_exact(b, false);
        if (atn_batch_forward(b, encs, (int32_t)few, &o, checksum, &w, NULL, &err) ||
            (atn_batch_set_rows(b, 1), atn_batch_forward(b, encs, (int32_t)few, &o, checksum, &w, NULL, &err))) {
            rc = cli_fail(&err);
            atn_batch_free(b);
            goto done;
        }
    }
    static const char *const names[3] = {"loop", "stacked-exact", "stacked"};
    double secs[3] = {0, 0, 0};
    int64_t stacked[3] = {0, 0, 0}, alone[3] = {0, 0, 0};
    /* exact stacks only on the AVX-512 path: where a trial stacks nothing, its pass is the loop */
    bool exact_stacks = true;
    {
        pass w = {runs[1].sum, 0};
        atn_batch_set_rows(b, ATN_BATCH_ROWS);
        atn_batch_set_exact(b, true);
        int64_t few = count < 24 ? count : 24;
        if (atn_batch_forward(b, encs, (int32_t)few, &o, checksum, &w, NULL, &err) == ATN_OK) {
            atn_batch_counts(b, &stacked[1], &alone[1]);
            exact_stacks = stacked[1] > 0;
        }
    }
    for (int k = 0; k < 3; k++) {
        if (k == 1 && !exact_stacks) {   /* the same forwards as the loop: not run again */
            secs[1] = secs[0];
            stacked[1] = 0, alone[1] = count;
            memcpy(runs[1].sum, runs[0].sum, (size_t)count * sizeof(double));
            continue;
        }
        atn_batch_set_rows(b, k == 0 ? 1 : ATN_BATCH_ROWS);
        atn_batch_set_exact(b, k != 2);
        double t0 = now_s();
        if (atn_batch_forward(b, encs, (int32_t)count, &o, checksum, &runs[k], NULL, &err)) {
            rc = cli_fail(&err);
            break;
        }
        secs[k] = now_s() - t0;
        atn_batch_counts(b, &stacked[k], &alone[k]);
        if (!json)
            fprintf(stderr, "attnscope bench: %s done (%.2f s)\n", names[k], secs[k]);
    }
    atn_batch_free(b);
    if (rc != CLI_EXIT_OK)
        goto done;
    double worst[3] = {0, 0, 0};
    for (int k = 1; k < 3; k++)
        for (int64_t i = 0; i < count; i++) {
            double r = fabs(runs[k].sum[i] - runs[0].sum[i]) / fmax(1.0, fabs(runs[0].sum[i]));
            worst[k] = r > worst[k] ? r : worst[k];
        }
    /* one 128-token forward, for the rate the stacks aim at */
    double rate128 = 0;
    {
        atn_encoding *e = NULL;
        atn_run *r = atn_run_new(m);
        int32_t ids[128];
        for (int32_t t = 0; t < 128; t++)
            ids[t] = c->vocab_size > 2000 ? 1000 + (t * 7919) % (c->vocab_size - 1000) : t % c->vocab_size;
        double best = 1e30;
        if (r && c->max_positions >= 128 && atn_model_encode_ids(m, ids, NULL, NULL, 128, &e, &err) == ATN_OK)
            for (int k = 0; k < 4; k++) {
                double t0 = now_s();
                if (atn_run_forward(r, e, &o, &err))
                    break;
                double dt = now_s() - t0;
                best = k > 0 && dt < best ? dt : best;   /* the first one warms the run */
            }
        rate128 = best < 1e30 ? flops_of(c, 128) / best / 1e9 : 0;
        atn_encoding_free(e);
        atn_run_free(r);
    }
    if (json) {
        printf("{\"tool\": \"attnscope\", \"title\": \"%s\", \"mode\": \"corpus\", \"sentences\": %lld, "
               "\"tokens\": %lld, \"min_tokens\": %d, \"max_tokens\": %d, \"rows\": %d, \"gflop\": %.3f, "
               "\"forward_128_gflops\": %.2f, \"runs\": [",
               title, (long long)count, (long long)tokens, lo, hi, (int)ATN_BATCH_ROWS, flops / 1e9, rate128);
        for (int k = 0; k < 3; k++)
            printf("%s{\"name\": \"%s\", \"seconds\": %.4f, \"sentences_per_s\": %.2f, \"gflops\": %.2f, "
                   "\"stacked_forwards\": %lld, \"single_forwards\": %lld, \"max_rel_checksum_diff\": %.3g}",
                   k ? ", " : "", names[k], secs[k], count / secs[k], flops / secs[k] / 1e9, (long long)stacked[k],
                   (long long)alone[k], worst[k]);
        printf("]}\n");
    } else {
        printf("%s: %lld sentences of %d-%d tokens (%lld tokens), attention kept, stacks of up to %d rows\n", title,
               (long long)count, lo, hi, (long long)tokens, (int)ATN_BATCH_ROWS);
        printf("%-14s %9s %12s %9s %8s %8s %12s\n", "run", "seconds", "sentences/s", "GFLOP/s", "stacks", "alone",
               "max rel diff");
        for (int k = 0; k < 3; k++)
            printf("%-14s %9.3f %12.1f %9.1f %8lld %8lld %12.3g\n", names[k], secs[k], count / secs[k],
                   flops / secs[k] / 1e9, (long long)stacked[k], (long long)alone[k], worst[k]);
        printf("stacked / loop: %.2fx (exact: %.2fx); one 128-token forward: %.1f GFLOP/s\n", secs[0] / secs[2],
               secs[0] / secs[1], rate128);
    }
done:
    for (int64_t i = 0; encs && i < count; i++)
        atn_encoding_free(encs[i]);
    free(encs);
    for (int k = 0; k < 3; k++)
        free(runs[k].sum);
    return rc;
}
