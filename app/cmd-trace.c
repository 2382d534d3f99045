/* attnscope trace: one head's arithmetic for one query token, as a worked solution (text)
 * or every number as JSON. */
#include "cli.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void print_vec(const double *v, int32_t n) {
    fputc('[', stdout);
    for (int32_t i = 0; i < n; i++)
        printf("%s%.4f", i ? ", " : "", v[i]);
    fputc(']', stdout);
}

static const char *tok(const atn_trace *t, int32_t j) { return t->enc->tokens[j].text; }

static void print_text(const atn_model *m, const atn_trace *t, int32_t n_heads) {
    int32_t n = t->n, k = t->d_head, i = t->query;
    printf("Trace of model \"%s\": layer %d, head %d (of %d), query token %d \"%s\"\n", atn_model_name(m), t->layer,
           t->head, n_heads, i, tok(t, i));
    if (t->kv_head != t->head)   /* grouped-query attention: its K/V head's columns of K and V */
        printf("d_model = %d, heads = %d of d_k = %d dimensions (columns %d..%d of Q, %d..%d of K and V).\n\n",
               t->d_model, n_heads, k, t->head * k, t->head * k + k - 1, t->kv_head * k, t->kv_head * k + k - 1);
    else
        printf("d_model = %d, heads = %d, so each head works in d_k = d_model / heads = %d dimensions "
               "(columns %d..%d of Q, K, V).\n\n", t->d_model, n_heads, k, t->head * k, t->head * k + k - 1);

    if (t->q_unrotated) {   /* a rotary model (Llama, Qwen, Mistral): the keys are its K/V head's */
        printf("Step 0. Rotary positions: head %d reads K/V head %d.  Before the rotation (RMSNorm, projection)\n"
               "  q_%d = ", t->head, t->kv_head, i);
        print_vec(t->q_unrotated, k);
        printf("\n  and each pair (c, c + %d) of q_%d and k_j is turned by position x inv_freq[c]; at position %d "
               "the angles are\n  ", k / 2, i, i);
        print_vec(t->angles, k / 2);
        printf("\n  so steps 1 and 2 show q and k after the rotation.\n\n");
    }
    printf("Step 1. The query of token %d: q_%d = (x_%d W_Q + b_Q), head %d's columns\n  q_%d = ", i, i, i, t->head,
           i);
    print_vec(t->q, k);
    printf("\n\nStep 2. The keys k_j = x_j W_K + b_K (head %d's columns), one per token\n", t->head);
    for (int32_t j = 0; j < n; j++) {
        printf("  k_%-3d %-10s = ", j, tok(t, j));
        print_vec(t->keys + (size_t)j * k, k);
        fputc('\n', stdout);
    }
    printf("\nStep 3. Dot products s_j = q_%d · k_j  (the row %d of Q Kᵀ)\n", i, i);
    for (int32_t j = 0; j < n; j++) {
        printf("  s_%-3d = ", j);
        if (k <= 8) {
            for (int32_t c = 0; c < k; c++)
                printf("%s%.4f×%.4f", c ? " + " : "", t->q[c], t->keys[(size_t)j * k + c]);
            printf(" = ");
        }
        printf("%.4f\n", t->scores[j]);
    }
    if (t->scale_factor > 0)   /* DeBERTa: 1 + one per relative term of pos_att_type */
        printf("\nStep 4. Scale by 1/√(d_k·%d) = 1/√(%d·%d) = %.4f (%d: the content score and %d relative term%s):  "
               "s_j / √(d_k·%d)\n  ", t->scale_factor, k, t->scale_factor, t->scale, t->scale_factor,
               t->scale_factor - 1, t->scale_factor == 2 ? "" : "s", t->scale_factor);
    else if (fabs(t->scale * sqrt((double)k) - 1.0) < 1e-6)
        printf("\nStep 4. Scale by 1/√d_k = 1/√%d = %.4f:  s_j / √d_k\n  ", k, t->scale);
    else   /* Gemma's query_pre_attn_scalar^-1/2, GPT-2's switches */
        printf("\nStep 4. Scale by the model's factor %.4f (not 1/√d_k = %.4f):  s_j × %.4f\n  ", t->scale,
               1.0 / sqrt((double)k), t->scale);
    print_vec(t->scaled, n);
    if (t->capped) {   /* Gemma 2's attention soft-cap, before the mask */
        printf("\n  Soft-cap: c·tanh(s_j / c) with c = %g (attn_logit_softcapping):\n  ", t->softcap);
        print_vec(t->capped, n);
    }
    if (t->c2p_term) {   /* DeBERTa's disentangled attention: the relative terms, then their sum */
        printf("\n\nStep 4b. Relative positions (disentangled attention).  Key j is at distance %d - j, which reads\n"
               "  row δ_j = clamp(bucket(%d - j) + %d, 0, %d) of the relative embeddings:\n  δ = [", i, i, t->rel_span,
               2 * t->rel_span - 1);
        for (int32_t j = 0; j < n; j++)
            printf("%s%d", j ? ", " : "", t->rel_index[j]);
        printf("]\n  content→position  c2p_j = q_%d · pos_key[δ_j] · %.4f\n  ", i, t->scale);
        print_vec(t->c2p_term, n);
        printf("\n  position→content  p2c_j = k_j · pos_query[δ_j] · %.4f\n  ", t->scale);
        print_vec(t->p2c_term, n);
        printf("\n  score_j = s_j/√(d_k·%d) + c2p_j + p2c_j\n  [", t->scale_factor);
        for (int32_t j = 0; j < n; j++)
            printf("%s%.4f", j ? ", " : "", t->scaled[j] + t->c2p_term[j] + t->p2c_term[j]);
        fputc(']', stdout);
    }
    int32_t masked = 0;
    for (int32_t j = 0; j < n; j++)
        masked += t->mask_term[j] != 0;
    printf("\n\nStep 5. Mask: ");
    if (!masked) {
        printf("no padded tokens, so nothing is added.\n");
    } else {
        bool hidden = false;   /* a real token masked: the run's causal/window/strided/hidden-token mask */
        for (int32_t j = 0; j < n; j++)
            hidden |= t->mask_term[j] != 0 && t->enc->mask[j];
        printf("%s get %.4g added (so their weight becomes 0):",
               hidden ? "keys hidden by padding or the run's mask (causal, window, strided, hidden tokens)"
                      : "padded keys", (double)-3.4028234663852886e38);
        for (int32_t j = 0; j < n; j++)
            if (t->mask_term[j] != 0)
                printf(" %d", j);
        fputc('\n', stdout);
        if (t->xsoftmax && masked == n)   /* DeBERTa: the mask is query mask x key mask */
            printf("  Query token %d is padding: its whole row is masked, and XSoftmax makes every weight 0.\n", i);
    }
    /* the what-if lab's terms, at the step where the forward applied them */
    bool biased = false;
    for (int32_t j = 0; j < n; j++)
        biased |= t->bias_term[j] != 0;
    if (biased) {
        printf("  ALiBi: -m_h·|i-j| added to every score (m_%d = %.6g):\n  ", t->head,
               n > 1 ? -t->bias_term[t->query > 0 ? t->query - 1 : 1] : 0.0);
        print_vec(t->bias_term, n);
        fputc('\n', stdout);
    }
    if (t->temperature != 1.0)
        printf("  Temperature: every score (scaled + mask%s) divided by T = %.4g before the softmax.\n",
               biased ? " + ALiBi" : "", t->temperature);
    printf("\nStep 6. Softmax.  Subtract the largest score m = %.4f (for numerical safety), exponentiate, "
           "divide by the sum.\n", t->max);
    for (int32_t j = 0; j < n; j++) {
        if (t->mask_term[j] != 0)
            printf("  exp(masked)            = 0.0000\n");
        else
            printf("  exp(%.4f - %.4f) = exp(%.4f) = %.4f\n",
                   biased || t->temperature != 1.0 || t->capped || t->c2p_term ? t->shifted[j] + t->max : t->scaled[j], t->max,
                   t->shifted[j],
                   t->exps[j]);
    }
    if (t->head_off == 1)
        printf("  sum = %.4f\n  head %d:%d is switched off (zero, Hugging Face's head_mask): every weight is "
               "multiplied by 0:\n  a_j = ", t->sum, t->layer, t->head);
    else if (t->head_off == 2)
        printf("  sum = %.4f\n  head %d:%d is switched off (uniform): the weights are 1/k over the k keys this "
               "query may see:\n  a_j = ", t->sum, t->layer, t->head);
    else
        printf("  sum = %.4f\n  weights a_j = exp_j / sum = ", t->sum);
    print_vec(t->weights, n);
    printf("   (they sum to %d)\n\nStep 7. The values v_j = x_j W_V + b_V (head %d's columns)\n", t->head_off == 1 || (t->xsoftmax && masked == n) ? 0 : 1, t->head);
    for (int32_t j = 0; j < n; j++) {
        printf("  v_%-3d %-10s = ", j, tok(t, j));
        print_vec(t->values + (size_t)j * k, k);
        fputc('\n', stdout);
    }
    printf("\nStep 8. Weighted sum: head %d's output for token %d is o = Σ_j a_j v_j\n", t->head, i);
    if (n <= 8) {
        for (int32_t c = 0; c < k && k <= 8; c++) {
            printf("  o[%d] =", c);
            for (int32_t j = 0; j < n; j++)
                printf("%s%.4f×%.4f", j ? " + " : " ", t->weights[j], t->values[(size_t)j * k + c]);
            printf(" = %.4f\n", t->output[c]);
        }
    }
    printf("  o = ");
    print_vec(t->output, k);
    printf("\n\nStep 9. Concatenate every head's output for token %d (head %d fills columns %d..%d)\n  ", i, t->head,
           t->head * k, t->head * k + k - 1);
    print_vec(t->concat, t->d_concat);
    printf("\n\nStep 10. Output projection: concat W_O + b_O\n  ");
    print_vec(t->projected, t->d_model);
    printf("\n\n(check: these weights differ from the captured attention by at most %.2g)\n", (double)t->max_abs_diff);
}

static void json_vec(FILE *f, const double *v, int32_t n) {
    fputc('[', f);
    for (int32_t i = 0; i < n; i++) {
        if (i)
            fputs(", ", f);
        cli_json_number(f, v[i]);
    }
    fputc(']', f);
}

static void json_mat(FILE *f, const double *v, int32_t rows, int32_t cols) {
    fputc('[', f);
    for (int32_t r = 0; r < rows; r++) {
        if (r)
            fputs(", ", f);
        json_vec(f, v + (size_t)r * cols, cols);
    }
    fputc(']', f);
}

static void print_json(const atn_trace *t) {
    FILE *f = stdout;
    fprintf(f, "{\n  \"layer\": %d, \"head\": %d, \"query\": %d, \"d_head\": %d, \"d_model\": %d,\n  \"tokens\": [",
            t->layer, t->head, t->query, t->d_head, t->d_model);
    for (int32_t j = 0; j < t->n; j++) {
        if (j)
            fputs(", ", f);
        cli_json_string(f, tok(t, j));
    }
    fputs("],\n", f);
    if (t->q_unrotated) {   /* a rotary model: step 0 */
        fprintf(f, "  \"kv_head\": %d,\n  \"q_unrotated\": ", t->kv_head);
        json_vec(f, t->q_unrotated, t->d_head);
        fputs(",\n  \"keys_unrotated\": ", f);
        json_mat(f, t->keys_unrotated, t->n, t->d_head);
        fputs(",\n  \"angles\": ", f);
        json_vec(f, t->angles, t->d_head / 2);
        fputs(",\n", f);
    }
    fputs("  \"q\": ", f);
    json_vec(f, t->q, t->d_head);
    fputs(",\n  \"keys\": ", f);
    json_mat(f, t->keys, t->n, t->d_head);
    fputs(",\n  \"scores\": ", f);
    json_vec(f, t->scores, t->n);
    fputs(",\n  \"scale\": ", f);
    cli_json_number(f, t->scale);
    fputs(",\n  \"scaled\": ", f);
    json_vec(f, t->scaled, t->n);
    if (t->capped) {   /* Gemma 2: c tanh(scaled / c), what the mask is added to */
        fputs(",\n  \"softcap\": ", f);
        cli_json_number(f, t->softcap);
        fputs(",\n  \"capped\": ", f);
        json_vec(f, t->capped, t->n);
    }
    if (t->scale_factor > 0)
        fprintf(f, ",\n  \"scale_factor\": %d", t->scale_factor);
    if (t->c2p_term) {   /* DeBERTa: the relative terms the scores add before the mask */
        fputs(",\n  \"rel_index\": [", f);
        for (int32_t j = 0; j < t->n; j++)
            fprintf(f, "%s%d", j ? ", " : "", t->rel_index[j]);
        fputs("],\n  \"c2p\": ", f);
        json_vec(f, t->c2p_term, t->n);
        fputs(",\n  \"p2c\": ", f);
        json_vec(f, t->p2c_term, t->n);
    }
    fputs(",\n  \"mask\": ", f);
    json_vec(f, t->mask_term, t->n);
    bool biased = false;
    for (int32_t j = 0; j < t->n; j++)
        biased |= t->bias_term[j] != 0;
    if (biased) {   /* the what-if lab's terms, only when the run had them */
        fputs(",\n  \"alibi\": ", f);
        json_vec(f, t->bias_term, t->n);
    }
    if (t->temperature != 1.0) {
        fputs(",\n  \"temperature\": ", f);
        cli_json_number(f, t->temperature);
    }
    if (t->head_off) {
        fputs(",\n  \"head_off\": ", f);
        cli_json_string(f, t->head_off == 1 ? "zero" : "uniform");
    }
    fputs(",\n  \"max\": ", f);
    cli_json_number(f, t->max);
    fputs(",\n  \"exps\": ", f);
    json_vec(f, t->exps, t->n);
    fputs(",\n  \"sum\": ", f);
    cli_json_number(f, t->sum);
    fputs(",\n  \"weights\": ", f);
    json_vec(f, t->weights, t->n);
    fputs(",\n  \"values\": ", f);
    json_mat(f, t->values, t->n, t->d_head);
    fputs(",\n  \"output\": ", f);
    json_vec(f, t->output, t->d_head);
    fputs(",\n  \"concat\": ", f);
    json_vec(f, t->concat, t->d_concat);
    fputs(",\n  \"projected\": ", f);
    json_vec(f, t->projected, t->d_model);
    fputs("\n}\n", f);
}

int cmd_trace(int argc, char **argv) {
    cli_args a;
    static const char *const flags[] = {"help", "json", CLI_INTERVENTION_FLAGS, NULL};
    if (!cli_parse(&a, "attnscope trace", argc, argv, flags))
        return CLI_EXIT_USAGE;
    if (cli_flag(&a, "help")) {
        printf("Usage: attnscope trace --model M [--text T] --layer L --head H --query I [--json]\n\n"
               "Shows the arithmetic of one head for one query token: q, every k, the dot products, the\n"
               "scaling by 1/sqrt(d_k), the mask, the softmax, the values and the weighted sum.\n");
        return 0;
    }
    bool ok = true;
    long layer = cli_get_int(&a, "layer", 0, 0, CLI_MAX_INDEX, &ok);
    long head = cli_get_int(&a, "head", 0, 0, CLI_MAX_INDEX, &ok);
    long query = cli_get_int(&a, "query", 0, 0, CLI_MAX_INDEX, &ok);
    bool json = cli_flag(&a, "json");
    if (!ok)
        return CLI_EXIT_USAGE;
    atn_model *model;
    atn_encoding *enc;
    atn_run *run;
    int rc = cli_model_run(&a, &model, &enc, &run);
    if (rc == CLI_EXIT_OK) {
        atn_error err = {0};
        atn_trace *t;
        if (atn_trace_compute(model, atn_run_capture(run), (int32_t)layer, (int32_t)head, (int32_t)query, &t,
                                     &err)) {
            rc = cli_fail(&err);
        } else {
            if (json)
                print_json(t);
            else
                print_text(model, t, atn_model_config(model)->n_heads);
            atn_trace_free(t);
        }
    }
    atn_run_free(run);
    atn_encoding_free(enc);
    atn_model_free(model);
    return rc;
}
