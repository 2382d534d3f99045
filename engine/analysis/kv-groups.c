/* Similarity and statistics by K/V group (engine/include/analysis.h): a grouped-query model's
 * query heads h read K/V head h / (H / KV), so the heads of one group share their keys and
 * values; these gather the per-head figures by group. */
#include "analysis.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static atn_status check_groups(int32_t n_heads, int32_t kv_heads, atn_error *err) {
    if (kv_heads < 1 || kv_heads > n_heads || n_heads % kv_heads)
        return atn_error_set(err, ATN_E_INVALID, "%d K/V heads do not divide %d query heads into groups", kv_heads,
                             n_heads);
    if (kv_heads == n_heads)
        return atn_error_set(err, ATN_E_INVALID, "every one of the %d query heads has its own K/V head: there are no "
                             "groups of heads sharing one (a grouped-query model has fewer K/V heads)", n_heads);
    return ATN_OK;
}

void atn_kv_groups_free(atn_kv_groups *g) {
    if (!g)
        return;
    free(g->layer_of);
    free(g->kv_of);
    free(g->values);
    free(g);
}

atn_status atn_similarity_by_kv_group(const atn_similarity *sim, int32_t kv_heads, atn_kv_groups **out,
                                      atn_error *err) {
    if (out)
        *out = NULL;
    if (!sim || !out || !sim->clustered)
        return atn_error_set(err, ATN_E_INVALID, "atn_similarity_by_kv_group: a finished similarity is needed");
    atn_status st = check_groups(sim->n_heads, kv_heads, err);
    if (st)
        return st;
    int32_t per = sim->n_heads / kv_heads, count = sim->scope == ATN_SCOPE_LAYER ? kv_heads : sim->n_layers * kv_heads;
    atn_kv_groups *g = calloc(1, sizeof *g);
    double *sum = calloc((size_t)count * count, sizeof *sum), *n = calloc((size_t)count * count, sizeof *n);
    int32_t *group = malloc((size_t)sim->count * sizeof *group);
    if (g) {
        g->layer_of = malloc((size_t)count * sizeof *g->layer_of);
        g->kv_of = malloc((size_t)count * sizeof *g->kv_of);
        g->values = malloc((size_t)count * count * sizeof *g->values);
    }
    if (!g || !sum || !n || !group || !g->layer_of || !g->kv_of || !g->values) {
        atn_kv_groups_free(g);
        free(sum), free(n), free(group);
        return atn_error_set(err, ATN_E_NOMEM, "out of memory");
    }
    g->kv_heads = kv_heads, g->per_group = per, g->count = count;
    for (int32_t a = 0; a < count; a++) {
        g->layer_of[a] = sim->scope == ATN_SCOPE_LAYER ? sim->layer : a / kv_heads;
        g->kv_of[a] = a % kv_heads;
    }
    for (int32_t c = 0; c < sim->count; c++)
        group[c] = (sim->scope == ATN_SCOPE_LAYER ? 0 : sim->layer_of[c] * kv_heads) + sim->head_of[c] / per;
    double within = 0, between = 0;
    int64_t n_within = 0, n_between = 0;
    for (int32_t r = 0; r < sim->count; r++)
        for (int32_t c = 0; c < sim->count; c++) {
            if (r == c)
                continue;
            double v = sim->values[(size_t)r * sim->count + c];
            size_t cell = (size_t)group[r] * count + group[c];
            sum[cell] += v;
            n[cell] += 1;
            if (c > r && group[r] == group[c])
                within += v, n_within++;
            else if (c > r && sim->layer_of[r] == sim->layer_of[c])
                between += v, n_between++;
        }
    for (size_t i = 0; i < (size_t)count * count; i++)
        g->values[i] = n[i] > 0 ? sum[i] / n[i] : NAN;
    g->within = n_within ? within / (double)n_within : NAN;
    g->between = n_between ? between / (double)n_between : NAN;
    free(sum), free(n), free(group);
    *out = g;
    return ATN_OK;
}

atn_status atn_stats_by_kv_group(const atn_stats *st, int32_t kv_heads, atn_head_stats **out, atn_error *err) {
    if (out)
        *out = NULL;
    if (!st || !out)
        return atn_error_set(err, ATN_E_INVALID, "atn_stats_by_kv_group: NULL argument");
    atn_status s = check_groups(st->n_heads, kv_heads, err);
    if (s)
        return s;
    int32_t per = st->n_heads / kv_heads;
    atn_head_stats *g = calloc((size_t)st->n_layers * kv_heads, sizeof *g);
    if (!g)
        return atn_error_set(err, ATN_E_NOMEM, "out of memory");
    for (int32_t l = 0; l < st->n_layers; l++)
        for (int32_t k = 0; k < kv_heads; k++) {
            atn_head_stats *m = &g[(size_t)l * kv_heads + k];
            int votes[ATN_PATTERN_COUNT] = {0};
            for (int32_t j = 0; j < per; j++) {
                const atn_head_stats *h = &st->heads[(size_t)l * st->n_heads + k * per + j];
                m->entropy += h->entropy / per, m->entropy_norm += h->entropy_norm / per;
                m->cls += h->cls / per, m->sep += h->sep / per, m->punct += h->punct / per;
                m->self += h->self / per, m->prev += h->prev / per, m->next += h->next / per;
                m->local += h->local / per, m->same_segment += h->same_segment / per;
                m->distance += h->distance / per, m->induction += h->induction / per;
                if ((unsigned)h->pattern < ATN_PATTERN_COUNT)
                    votes[h->pattern]++;
            }
            m->pattern = 0;
            for (int p = 1; p < ATN_PATTERN_COUNT; p++)
                if (votes[p] > votes[m->pattern])
                    m->pattern = (atn_pattern)p;
        }
    *out = g;
    return ATN_OK;
}

atn_status atn_stats_write_kv_groups_csv(const atn_stats *st, const atn_head_stats *groups, int32_t kv_heads, FILE *f,
                                         atn_error *err) {
    if (!st || !groups || !f || kv_heads < 1 || st->n_heads % kv_heads)
        return atn_error_set(err, ATN_E_INVALID, "statistics by K/V group: nothing to write");
    static const char *const names[] = {"entropy", "entropy_norm", "cls", "sep", "punct", "self", "prev", "next",
                                        "local", "distance", "induction"};
    int32_t per = st->n_heads / kv_heads;
    fputs("layer,kv_head,first_head,heads", f);
    for (int i = 0; i < 11; i++)
        fprintf(f, ",%s", names[i]);
    fputs(",pattern\n", f);
    for (int32_t l = 0; l < st->n_layers; l++)
        for (int32_t k = 0; k < kv_heads; k++) {
            const atn_head_stats *m = &groups[(size_t)l * kv_heads + k];
            const double v[] = {m->entropy, m->entropy_norm, m->cls, m->sep, m->punct, m->self, m->prev, m->next,
                                m->local, m->distance, m->induction};
            fprintf(f, "%d,%d,%d,%d", l, k, k * per, per);
            for (int i = 0; i < 11; i++)
                fprintf(f, ",%.9g", v[i]);
            fprintf(f, ",%s\n", atn_pattern_name(m->pattern));
        }
    if (ferror(f))
        return atn_error_set(err, ATN_E_IO, "statistics by K/V group: write error");
    return ATN_OK;
}
