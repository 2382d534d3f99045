/* The encoder against PyTorch: fixtures written by gen_fixtures.py from
 * torch.nn.TransformerEncoderLayer / nn.MultiheadAttention (average_attn_weights=False).
 * Attention and every layer's hidden state must agree to 1e-4 (fp32 vs fp32). */
#include "check.h"
#include "attnscope.h"

#include <stdlib.h>

static const char *const names[] = {"small-relu", "odd-heads-gelu", "five-heads-masked", "wide-one-head-masked",
                                     "seven-heads-3-layers", NULL};

static int read_mask(const char *path, int32_t *mask, int max) {
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    int n = 0, v;
    while (n < max && fscanf(f, "%d,", &v) == 1)
        mask[n++] = v;
    fclose(f);
    return n;
}

int main(void) {
    const char *root = getenv("ATN_SOURCE_ROOT");
    if (!root)
        root = ".";
    for (int t = 0; names[t]; t++) {
        char path[1024];
        atn_error err = {0};
        snprintf(path, sizeof path, "%s/tests/reference/fixtures/%s.json", root, names[t]);
        atn_model *m = atn_model_open(path, NULL, NULL, &err);
        CHECK_MSG(m != NULL, "%s", err.message);
        if (!m)
            continue;
        const atn_config *c = atn_model_config(m);
        int32_t mask[256];
        snprintf(path, sizeof path, "%s/tests/reference/fixtures/%s.mask", root, names[t]);
        int nm = read_mask(path, mask, 256);
        CHECK(nm == atn_model_toy_n_tokens(m));
        atn_encoding *enc = NULL;
        CHECK(atn_model_encode_toy(m, mask, &enc, &err) == ATN_OK);
        atn_run *run = atn_run_new(m);
        CHECK_MSG(atn_run_forward(run, enc, NULL, &err) == ATN_OK, "%s", err.message);
        const atn_capture *cap = atn_run_capture(run);

        float *want;
        int64_t shape[4];
        int nd;
        snprintf(path, sizeof path, "%s/tests/reference/fixtures/%s.attn.npy", root, names[t]);
        CHECK_MSG(atn_npy_read_f32(path, &want, shape, &nd, 4, &err) == ATN_OK, "%s", err.message);
        int32_t n = cap->n;
        CHECK(nd == 4 && shape[0] == c->n_layers && shape[1] == c->n_heads && shape[2] == n && shape[3] == n);
        fprintf(stderr, "%s: %d layers, %d heads, %d tokens\n", names[t], c->n_layers, c->n_heads, n);
        CHECK_ARRAY_NEAR(names[t], cap->attn, want, (size_t)c->n_layers * c->n_heads * n * n, 1e-4);
        free(want);

        snprintf(path, sizeof path, "%s/tests/reference/fixtures/%s.hidden.npy", root, names[t]);
        CHECK(atn_npy_read_f32(path, &want, shape, &nd, 4, &err) == ATN_OK);
        CHECK(nd == 3 && shape[0] == c->n_layers + 1 && shape[1] == n && shape[2] == c->d_model);
        CHECK_ARRAY_NEAR("hidden states", cap->hidden, want, (size_t)(c->n_layers + 1) * n * c->d_model, 1e-4);
        free(want);

        /* every row sums to 1 within 1e-6; masked keys get exactly 0 */
        double worst = 0;
        int masked_nonzero = 0;
        for (size_t r = 0; r < (size_t)c->n_layers * c->n_heads * n; r++) {
            double s = 0;
            for (int32_t j = 0; j < n; j++) {
                float p = cap->attn[r * n + j];
                s += p;
                if (!mask[j] && p != 0.0f)
                    masked_nonzero++;
            }
            if (fabs(s - 1) > worst)
                worst = fabs(s - 1);
        }
        CHECK_MSG(worst <= 1e-6, "row sum off by %g", worst);
        CHECK(masked_nonzero == 0);
        atn_run_free(run);
        atn_encoding_free(enc);
        atn_model_free(m);
    }
    return check_summary("reference");
}
