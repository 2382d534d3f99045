/* The window's result over a capture with heads on demand (the run's full capture did not fit
 * the memory budget): every head, every thumbnail and every head's range are the full
 * capture's, bit for bit, at 64 tokens (thumbnails of n cells a side: the on-demand result
 * keeps its own copy) and at 160 (max-pooled to ATN_RESULT_THUMB_MAX), and so are the head
 * statistics; atn_result_get_head keeps the last 8 heads made, so a head asked for again is
 * the same pointer with the same numbers (bert-tiny's 4 heads all stay: the eviction itself
 * is not reached here); atn_result_read_head makes into the caller's scratch.  GLib alone,
 * no display. */
#include "atn-result.h"
#include "atn-result-test.h"
#include "atn-model-handle.h"
#include "check.h"

#include <math.h>
#include <string.h>

static AtnResult *result_for(AtnModelHandle *h, const atn_model *m, const int32_t *ids, int32_t n, bool on_demand) {
    atn_encoding *enc = NULL;
    CHECK(atn_model_encode_ids(m, ids, NULL, NULL, n, &enc, NULL) == ATN_OK);
    atn_run *run = atn_run_new(m);
    atn_run_options o;
    atn_run_options_init(&o);
    o.attention_on_demand = on_demand;
    atn_error err = {0};
    CHECK_MSG(atn_run_forward(run, enc, &o, &err) == ATN_OK, "%s", err.message);
    CHECK(atn_run_capture(run)->attn_on_demand == on_demand);
    return atn_result_new_full(h, run, enc, 1.0, TRUE);   /* takes run and enc */
}

static bool same_floats(const float *a, const float *b, size_t count) {
    for (size_t i = 0; i < count; i++)   /* NaN (a thumbnail cell without a finite value) equals NaN */
        if (!(a[i] == b[i] || (isnan(a[i]) && isnan(b[i]))) || memcmp(&a[i], &b[i], sizeof *a) != 0)
            return false;
    return true;
}

static void check_length(AtnModelHandle *h, const atn_model *m, int32_t n) {
    int32_t *ids = g_new(int32_t, n);
    for (int32_t i = 0; i < n; i++)
        ids[i] = 1000 + (i * 7919) % 20000;
    AtnResult *full = result_for(h, m, ids, n, false), *lazy = result_for(h, m, ids, n, true);
    const atn_capture *fc = atn_result_get_capture(full);
    int L = fc->n_layers, H = fc->n_heads;
    size_t nn = (size_t)n * n;
    for (int l = 0; l < L; l++)
        for (int hh = 0; hh < H; hh++) {
            const float *a = atn_result_get_head(full, l, hh), *b = atn_result_get_head(lazy, l, hh);
            CHECK_MSG(a && b && a != b && memcmp(a, b, nn * sizeof *a) == 0, "n %d layer %d head %d", n, l, hh);
        }
    /* the last 8 made stay: the same pointer, the same bits, however often the others are asked for */
    const float *p = atn_result_get_head(lazy, 0, 0);
    CHECK(atn_result_get_head(lazy, 1, 1) != p && atn_result_get_head(lazy, 0, 0) == p);
    float *keep = g_memdup2(p, nn * sizeof *p);
    for (int i = 0; i < 8; i++)
        atn_result_get_head(lazy, 1, i % H), atn_result_get_head(lazy, 0, 1 + i % (H - 1));
    const float *again = atn_result_get_head(lazy, 0, 0);
    CHECK(again == p && memcmp(again, keep, nn * sizeof *keep) == 0);
    CHECK(atn_result_get_head(lazy, L, 0) == NULL && atn_result_get_head(lazy, 0, -1) == NULL);
    float *scratch = g_new(float, nn);
    CHECK(atn_result_read_head(lazy, 1, 0, scratch) == scratch &&
          memcmp(scratch, atn_result_get_head(full, 1, 0), nn * sizeof *scratch) == 0);
    CHECK(atn_result_read_head(full, 1, 0, NULL) == atn_result_get_head(full, 1, 0));
    /* thumbnails and ranges */
    int sf = 0, sl = 0;
    const float *tf = atn_result_get_thumb_values(full, &sf), *tl = atn_result_get_thumb_values(lazy, &sl);
    CHECK(sf == sl && sf == (n < ATN_RESULT_THUMB_MAX ? n : ATN_RESULT_THUMB_MAX) && tf && tl && tf != tl);
    CHECK_MSG(same_floats(tf, tl, (size_t)L * H * sf * sf), "thumbnails at n %d", n);
    CHECK(same_floats(atn_result_get_head_ranges(full), atn_result_get_head_ranges(lazy), (size_t)2 * L * H));
    /* the statistics, which read heads on demand one at a time */
    const atn_stats *s1 = atn_result_get_stats(full), *s2 = atn_result_get_stats(lazy);
    CHECK(s1 && s2 && s1->heads[L * H - 1].entropy == s2->heads[L * H - 1].entropy);
    g_free(scratch);
    g_free(keep);
    g_object_unref(full);
    g_object_unref(lazy);
    g_free(ids);
}

int main(void) {
    atn_error err = {0};
    atn_model *m = atn_model_open("random:bert-tiny", NULL, NULL, &err);
    CHECK_MSG(m != NULL, "%s", err.message);
    AtnModelHandle *h = atn_model_handle_new(m, "random:bert-tiny");
    check_length(h, m, 64);
    check_length(h, m, 160);
    g_object_unref(h);
    return check_summary("test-result-on-demand");
}
