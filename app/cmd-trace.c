/* attnscope trace: one head's arithmetic for one query token, as a worked solution (text)
 * or every number as JSON. */
#include "cli.h"
#include "trace-keys.h"

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

/* A token's text by id (the decoder's target tokens have no encoding of their own). */
static const char *id_text(const atn_model *m, int32_t id) {
    atn_token_info info;
    return m && atn_model_token_info(m, id, &info) && info.text ? info.text : "?";
}

/* Key j's token and the query's: the source encoding's, or the target's by id. */
static const atn_model *trace_model;
static const char *tok(const atn_trace *t, int32_t j) {
    return t->stack == ATN_STACK_DECODER ? id_text(trace_model, t->k_ids[j]) : t->enc->tokens[j].text;
}
static const char *query_tok(const atn_trace *t) {
    return t->stack == ATN_STACK_ENCODER ? t->enc->tokens[t->query].text : id_text(trace_model, t->q_ids[t->query]);
}

static const char *const stack_names[] = {"encoder", "decoder", "cross"};

/* --top K: the keys listed (trace-keys.h), ascending; NULL: every key (the default). */
static const int32_t *sel_rows;
static int32_t sel_m, top_k_asked;
static int32_t key_count(const atn_trace *t) { return sel_rows ? sel_m : t->n; }
static int32_t key_at(int32_t r) { return sel_rows ? sel_rows[r] : r; }

/* The "… m others" line before listed key r (r = key_count: after the last), when keys were
 * left out since the previous listed one: how many, which, and their weight (exact: the
 * trace's weights over all n keys). */
static void gap_line(const atn_trace *t, int32_t r) {
    if (!sel_rows)
        return;
    int32_t a = r > 0 ? sel_rows[r - 1] + 1 : 0, b = r < sel_m ? sel_rows[r] : t->n;
    if (b > a)
        printf("  … %d other%s (keys %d..%d), total weight %.4f\n", b - a, b - a == 1 ? "" : "s", a, b - 1,
               atn_trace_weight_sum(t, a, b));
}

/* The masked keys: each index, or (--top) runs of them as a..b. */
static void print_masked(const atn_trace *t) {
    for (int32_t j = 0; j < t->n; j++) {
        if (t->mask_term[j] == 0)
            continue;
        int32_t b = j;
        while (sel_rows && b + 1 < t->n && t->mask_term[b + 1] != 0)
            b++;
        if (b > j)
            printf(" %d..%d", j, b);
        else
            printf(" %d", j);
        j = b;
    }
    fputc('\n', stdout);
}

/* A vector over the keys: all of it, or the listed keys' values as "j: v" with "…(m)…" for
 * each run of keys left out. */
static void print_keyvec(const atn_trace *t, const double *v) {
    if (!sel_rows) {
        print_vec(v, t->n);
        return;
    }
    fputc('[', stdout);
    for (int32_t r = 0; r <= sel_m; r++) {
        int32_t a = r > 0 ? sel_rows[r - 1] + 1 : 0, b = r < sel_m ? sel_rows[r] : t->n;
        if (b > a)
            printf("%s…(%d)…", a ? ", " : "", b - a);
        if (r < sel_m)
            printf("%s%d: %.4f", r || b > a ? ", " : "", sel_rows[r], v[sel_rows[r]]);
    }
    fputc(']', stdout);
}

/* ‖v_j‖ over the head's d_head values. */
static double value_norm(const atn_trace *t, int32_t j) {
    double ss = 0;
    for (int32_t d = 0; d < t->d_head; d++)
        ss += t->values[(size_t)j * t->d_head + d] * t->values[(size_t)j * t->d_head + d];
    return sqrt(ss);
}

/* --top K: the weighted sum's K largest contributions a_j·‖v_j‖ (trace-keys.h), largest first,
 * each with its share of Σ_j a_j·‖v_j‖ and its a_j v_j, and the rest as one "… m others" line
 * whose Σ a_j v_j is the exact remainder of o.  rows: the caller's, at least n. */
static void print_contributions(const atn_trace *t, int32_t *rows) {
    int32_t n = t->n, k = t->d_head, m = atn_trace_top_contributions(t, top_k_asked, rows);
    if (m <= 0)
        return;
    double total = atn_trace_contribution_total(t), rest_w = 0, rest_c = 0;
    double *rest = calloc((size_t)k, sizeof *rest), *av = malloc((size_t)k * sizeof *av);
    char *listed = calloc((size_t)n, 1);
    if (!rest || !av || !listed) {
        free(rest), free(av), free(listed);
        return;
    }
    printf("  The keys that contribute most, by a_j·‖v_j‖ (share: of Σ_j a_j·‖v_j‖ = %.4f over all %d keys):\n",
           total, n);
    for (int32_t r = 0; r < m; r++) {
        int32_t j = rows[r];
        double c = atn_trace_contribution(t, j);
        listed[j] = 1;
        for (int32_t d = 0; d < k; d++)
            av[d] = t->weights[j] * t->values[(size_t)j * k + d];
        printf("  %2d. key %-5d %-10s a_j %.4f × ‖v_j‖ %.4f = %.4f, share %5.2f%%, a_j v_j = ", r + 1, j, tok(t, j),
               t->weights[j], value_norm(t, j), c, total > 0 ? 100 * c / total : 0.0);
        print_vec(av, k);
        fputc('\n', stdout);
    }
    for (int32_t j = 0; j < n; j++) {
        if (listed[j])
            continue;
        rest_w += t->weights[j];
        rest_c += atn_trace_contribution(t, j);
        for (int32_t d = 0; d < k; d++)
            rest[d] += t->weights[j] * t->values[(size_t)j * k + d];
    }
    if (m < n) {
        printf("  … %d other%s: total weight %.4f, Σ a_j·‖v_j‖ %.4f, share %5.2f%%, Σ a_j v_j = ", n - m,
               n - m == 1 ? "" : "s", rest_w, rest_c, total > 0 ? 100 * rest_c / total : 0.0);
        print_vec(rest, k);
        fputc('\n', stdout);
    }
    free(rest), free(av), free(listed);
}

/* An encoder-decoder's head: which stack, and where its queries, keys and values come from. */
static void print_stack_intro(const atn_trace *t, int32_t n_heads) {
    int32_t i = t->query;
    if (t->stack == ATN_STACK_ENCODER)
        printf("Trace of the encoder's self-attention: layer %d, head %d (of %d), query: source token %d \"%s\".\n"
               "Queries, keys and values all come from the source tokens' hidden states (%d tokens).\n", t->layer,
               t->head, n_heads, i, query_tok(t), t->n);
    else if (t->stack == ATN_STACK_DECODER)
        printf("Trace of the decoder's self-attention: decoder layer %d, head %d (of %d), query: target token %d "
               "\"%s\".\nQueries, keys and values all come from the decoder's hidden states of the target tokens; "
               "it is causal:\ntarget token %d sees target tokens 0..%d only.\n", t->layer, t->head, n_heads, i,
               query_tok(t), i, i);
    else
        printf("Trace of the cross-attention: decoder layer %d, head %d (of %d), query: target token %d \"%s\".\n"
               "The query comes from the decoder: target token %d's hidden state after this layer's self-attention\n"
               "block, times the cross-attention's W_Q.  The keys and values come from the encoder: its output (the\n"
               "last hidden state of the %d source tokens) times the cross-attention's W_K and W_V.\n", t->layer,
               t->head, n_heads, i, query_tok(t), i, t->n);
}

static void print_text(const char *name, const atn_trace *t, int32_t n_heads, bool stacks) {
    int32_t n = t->n, k = t->d_head, i = t->query;
    bool cross = t->stack == ATN_STACK_CROSS;
    if (stacks)
        print_stack_intro(t, n_heads);
    else
        printf("Trace of %s \"%s\": layer %d, head %d (of %d), query token %d \"%s\"\n",
               t->from_file ? "attention file" : "model", name, t->layer, t->head, n_heads, i, tok(t, i));
    if (t->from_file)   /* no weights: the file's q, k, v */
        printf("From the file's q, k and v: %d heads of d_k = %d dimensions (head %d reads K/V head %d).\n\n", n_heads,
               k, t->head, t->kv_head);
    else if (t->kv_head != t->head)   /* grouped-query attention: its K/V head's columns of K and V */
        printf("d_model = %d, heads = %d of d_k = %d dimensions (columns %d..%d of Q, %d..%d of K and V).\n\n",
               t->d_model, n_heads, k, t->head * k, t->head * k + k - 1, t->kv_head * k, t->kv_head * k + k - 1);
    else
        printf("d_model = %d, heads = %d, so each head works in d_k = d_model / heads = %d dimensions "
               "(columns %d..%d of Q, K, V).\n\n", t->d_model, n_heads, k, t->head * k, t->head * k + k - 1);

    if (sel_rows) {   /* --top: the listing is shortened, the arithmetic is not */
        double others = 0;   /* the gaps' weights, as their lines say them */
        for (int32_t r = 0; r <= sel_m; r++)
            others += atn_trace_weight_sum(t, r > 0 ? sel_rows[r - 1] + 1 : 0, r < sel_m ? sel_rows[r] : n);
        printf("Listed: %d of %d keys (the %d with the largest weights, the first and last %d, the query's and the\n"
               "largest score's); the %d others have total weight %.4f.  Every sum is over all %d keys.\n\n", sel_m, n,
               top_k_asked, ATN_TRACE_EDGE_DEFAULT, n - sel_m, others, n);
    }
    if (t->q_unrotated) {   /* a rotary model (Llama, Qwen, Mistral): the keys are its K/V head's */
        printf("Step 0. Rotary positions: head %d reads K/V head %d.  Before the rotation (RMSNorm, projection)\n"
               "  q_%d = ", t->head, t->kv_head, i);
        print_vec(t->q_unrotated, k);
        printf("\n  and each pair (c, c + %d) of q_%d and k_j is turned by position x inv_freq[c]; at position %d "
               "the angles are\n  ", k / 2, i, i);
        print_vec(t->angles, k / 2);
        printf("\n  so steps 1 and 2 show q and k after the rotation.\n\n");
    }
    if (cross)
        printf("Step 1. The query of target token %d: q_%d = (h_%d W_Q + b_Q), h_%d the decoder's hidden state, "
               "head %d's columns\n  q_%d = ", i, i, i, i, t->head, i);
    else if (t->from_file)
        printf("Step 1. The query of token %d: q_%d, head %d's row of the file's q\n  q_%d = ", i, i, t->head, i);
    else
        printf("Step 1. The query of token %d: q_%d = (x_%d W_Q + b_Q), head %d's columns\n  q_%d = ", i, i, i,
               t->head, i);
    print_vec(t->q, k);
    if (cross)
        printf("\n\nStep 2. The keys k_j = e_j W_K + b_K, e_j the encoder's output for source token j (head %d's "
               "columns)\n", t->head);
    else if (t->from_file)
        printf("\n\nStep 2. The keys k_j (K/V head %d's rows of the file's k), one per token\n", t->kv_head);
    else
        printf("\n\nStep 2. The keys k_j = x_j W_K + b_K (head %d's columns), one per token\n", t->head);
    for (int32_t r = 0; r < key_count(t); r++) {
        int32_t j = key_at(r);
        gap_line(t, r);
        printf("  k_%-3d %-10s = ", j, tok(t, j));
        print_vec(t->keys + (size_t)j * k, k);
        fputc('\n', stdout);
    }
    gap_line(t, key_count(t));
    printf("\nStep 3. Dot products s_j = q_%d · k_j  (the row %d of Q Kᵀ)\n", i, i);
    for (int32_t r = 0; r < key_count(t); r++) {
        int32_t j = key_at(r);
        gap_line(t, r);
        printf("  s_%-3d = ", j);
        if (k <= 8) {
            for (int32_t c = 0; c < k; c++)
                printf("%s%.4f×%.4f", c ? " + " : "", t->q[c], t->keys[(size_t)j * k + c]);
            printf(" = ");
        }
        printf("%.4f\n", t->scores[j]);
    }
    gap_line(t, key_count(t));
    if (t->scale_factor > 0)   /* DeBERTa: 1 + one per relative term of pos_att_type */
        printf("\nStep 4. Scale by 1/√(d_k·%d) = 1/√(%d·%d) = %.4f (%d: the content score and %d relative term%s):  "
               "s_j / √(d_k·%d)\n  ", t->scale_factor, k, t->scale_factor, t->scale, t->scale_factor,
               t->scale_factor - 1, t->scale_factor == 2 ? "" : "s", t->scale_factor);
    else if (t->scale == 1.0)   /* T5 (and GPT-2 with scale_attn_weights off): no scaling at all */
        printf("\nStep 4. Scale: none (%s), so the scores go on as they are:\n  ",
               t->pos_bias || (trace_model && !strcmp(atn_model_family_name(trace_model), "T5"))
                   ? "T5 does not divide its scores by √d_k" : "this model does not scale its scores");
    else if (fabs(t->scale * sqrt((double)k) - 1.0) < 1e-6)
        printf("\nStep 4. Scale by 1/√d_k = 1/√%d = %.4f:  s_j / √d_k\n  ", k, t->scale);
    else   /* Gemma's query_pre_attn_scalar^-1/2, GPT-2's switches */
        printf("\nStep 4. Scale by the model's factor %.4f (not 1/√d_k = %.4f):  s_j × %.4f\n  ", t->scale,
               1.0 / sqrt((double)k), t->scale);
    print_keyvec(t, t->scaled);
    if (t->capped) {   /* Gemma 2's attention soft-cap, before the mask */
        printf("\n  Soft-cap: c·tanh(s_j / c) with c = %g (attn_logit_softcapping):\n  ", t->softcap);
        print_keyvec(t, t->capped);
    }
    if (t->c2p_term) {   /* DeBERTa's disentangled attention: the relative terms, then their sum */
        printf("\n\nStep 4b. Relative positions (disentangled attention).  Key j is at distance %d - j, which reads\n"
               "  row δ_j = clamp(bucket(%d - j) + %d, 0, %d) of the relative embeddings:\n  δ = [", i, i, t->rel_span,
               2 * t->rel_span - 1);
        for (int32_t r = 0; r < key_count(t); r++)
            printf("%s%d", r ? ", " : "", t->rel_index[key_at(r)]);
        printf("]%s\n  content→position  c2p_j = q_%d · pos_key[δ_j] · %.4f\n  ", sel_rows ? " (the listed keys)" : "",
               i, t->scale);
        print_keyvec(t, t->c2p_term);
        printf("\n  position→content  p2c_j = k_j · pos_query[δ_j] · %.4f\n  ", t->scale);
        print_keyvec(t, t->p2c_term);
        printf("\n  score_j = s_j/√(d_k·%d) + c2p_j + p2c_j\n  ", t->scale_factor);
        double *sum = malloc((size_t)n * sizeof *sum);
        if (sum) {
            for (int32_t j = 0; j < n; j++)
                sum[j] = t->scaled[j] + t->c2p_term[j] + t->p2c_term[j];
            print_keyvec(t, sum);
            free(sum);
        }
    }
    if (t->pos_bias) {   /* T5's relative position bias: bucket and learned bias per key */
        printf("\n\nStep 4b. Relative position bias (T5).  Key j is at distance j - %d, which falls in a bucket\n"
               "  (%s; %d buckets, exact below %d, logarithmic up to distance %d);\n"
               "  head %d adds its learned bias for that bucket (layer 0's relative_attention_bias, shared by every "
               "layer):\n", i,
               t->bias_bidirectional ? "bidirectional: later keys have buckets of their own"
                                     : "causal: every later key is in bucket 0",
               t->num_buckets, (t->bias_bidirectional ? t->num_buckets / 2 : t->num_buckets) / 2, t->max_distance,
               t->head);
        for (int32_t r = 0; r < key_count(t); r++) {
            int32_t j = key_at(r);
            gap_line(t, r);
            printf("  j = %-3d %-10s distance %+4d  bucket %2d  bias %8.4f  score %.4f + %.4f = %.4f\n", j, tok(t, j),
                   j - i, t->bucket[j], t->pos_bias[j], t->scaled[j], t->pos_bias[j], t->scaled[j] + t->pos_bias[j]);
        }
        gap_line(t, key_count(t));
        printf("  score_j = s_j + bias_j  (every later step reads these)");
    } else if (cross && trace_model && !strcmp(atn_model_family_name(trace_model), "T5")) {
        printf("\n\nStep 4b. No position bias: T5 adds its relative position bias in self-attention only; the "
               "cross-attention's\n  scores are the dot products as they are.");
    }
    int32_t masked = 0;
    for (int32_t j = 0; j < n; j++)
        masked += t->mask_term[j] != 0;
    printf("\n\nStep 5. Mask: ");
    if (!masked) {
        printf("no padded tokens, so nothing is added.\n");
    } else if (t->stack != ATN_STACK_ENCODER) {   /* the decoder's causal mask; the source's padding */
        printf("%s get %.4g added (so their weight becomes 0):", t->stack == ATN_STACK_DECODER
               ? "later target tokens (the decoder is causal)" : "padded source tokens", (double)-3.4028234663852886e38);
        print_masked(t);
    } else {
        bool hidden = false;   /* a real token masked: the run's causal/window/strided/hidden-token mask */
        for (int32_t j = 0; j < n; j++)
            hidden |= t->mask_term[j] != 0 && t->enc->mask[j];
        printf("%s get %.4g added (so their weight becomes 0):",
               hidden ? "keys hidden by padding or the run's mask (causal, window, strided, hidden tokens)"
                      : "padded keys", (double)-3.4028234663852886e38);
        print_masked(t);
        /* a sliding window (Mistral, Qwen2, Gemma's sliding layers, the what-if lab's): the real keys
           hidden before the query are exactly those j <= i - W */
        int32_t last = -1, earlier = 0;
        bool window = true;
        for (int32_t j = 0; j < n; j++)
            if (t->mask_term[j] != 0 && t->enc->mask[j] && !(t->causal && j > i)) {
                window &= j < i;
                earlier++;
                last = j;
            }
        for (int32_t j = 0; j <= last && window; j++)
            window = !t->enc->mask[j] || t->mask_term[j] != 0;
        if (earlier > 0 && window)
            printf("  This layer's sliding window of %d tokens hides the %d earlier keys more than %d before the "
                   "query.\n", i - last, earlier, i - last - 1);
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
        print_keyvec(t, t->bias_term);
        fputc('\n', stdout);
    }
    if (t->temperature != 1.0)
        printf("  Temperature: every score (scaled + mask%s) divided by T = %.4g before the softmax.\n",
               biased ? " + ALiBi" : "", t->temperature);
    printf("\nStep 6. Softmax.  Subtract the largest score m = %.4f (for numerical safety), exponentiate, "
           "divide by the sum.\n", t->max);
    for (int32_t r = 0; r < key_count(t); r++) {
        int32_t j = key_at(r);
        gap_line(t, r);
        if (sel_rows)
            printf("  j = %-4d", j);
        if (t->mask_term[j] != 0)
            printf("  exp(masked)            = 0.0000\n");
        else
            printf("  exp(%.4f - %.4f) = exp(%.4f) = %.4f\n",
                   biased || t->temperature != 1.0 || t->capped || t->c2p_term || t->pos_bias ? t->shifted[j] + t->max
                                                                                             : t->scaled[j], t->max,
                   t->shifted[j],
                   t->exps[j]);
    }
    gap_line(t, key_count(t));
    if (t->head_off == 1)
        printf("  sum = %.4f\n  head %d:%d is switched off (zero, Hugging Face's head_mask): every weight is "
               "multiplied by 0:\n  a_j = ", t->sum, t->layer, t->head);
    else if (t->head_off == 2)
        printf("  sum = %.4f\n  head %d:%d is switched off (uniform): the weights are 1/k over the k keys this "
               "query may see:\n  a_j = ", t->sum, t->layer, t->head);
    else
        printf("  sum = %.4f\n  weights a_j = exp_j / sum = ", t->sum);
    print_keyvec(t, t->weights);
    printf("   (they sum to %d)\n\n", t->head_off == 1 || (t->xsoftmax && masked == n) ? 0 : 1);
    if (t->from_file)
        printf("Step 7. The values v_j (K/V head %d's rows of the file's v)\n", t->kv_head);
    else
        printf("Step 7. The values v_j = %s W_V + b_V (head %d's columns)\n", cross ? "e_j (the encoder's output)" : "x_j",
               t->head);
    for (int32_t r = 0; r < key_count(t); r++) {
        int32_t j = key_at(r);
        gap_line(t, r);
        printf("  v_%-3d %-10s = ", j, tok(t, j));
        print_vec(t->values + (size_t)j * k, k);
        fputc('\n', stdout);
    }
    gap_line(t, key_count(t));
    printf("\nStep 8. Weighted sum: head %d's output for token %d is o = Σ_j a_j v_j\n", t->head, i);
    if (n <= 8) {
        for (int32_t c = 0; c < k && k <= 8; c++) {
            printf("  o[%d] =", c);
            for (int32_t j = 0; j < n; j++)
                printf("%s%.4f×%.4f", j ? " + " : " ", t->weights[j], t->values[(size_t)j * k + c]);
            printf(" = %.4f\n", t->output[c]);
        }
    }
    if (top_k_asked > 0) {   /* --top: the largest contributions, whatever the listing */
        int32_t *rows = malloc((size_t)n * sizeof *rows);
        if (rows)
            print_contributions(t, rows);
        free(rows);
    }
    if (sel_rows) {   /* the listed keys' share of o and the others', both exact: o is their sum */
        double *part = calloc((size_t)k * 2, sizeof *part);
        if (part) {
            int32_t r = 0;
            double others = 0;
            for (int32_t j = 0; j < n; j++) {
                bool listed = r < sel_m && sel_rows[r] == j;
                r += listed;
                others += listed ? 0.0 : t->weights[j];
                for (int32_t c = 0; c < k; c++)
                    part[(listed ? 0 : k) + c] += t->weights[j] * t->values[(size_t)j * k + c];
            }
            printf("  Σ over the %d listed keys of a_j v_j = ", sel_m);
            print_vec(part, k);
            printf("\n  Σ over the %d others (total weight %.4f) = ", n - sel_m,
                   others);
            print_vec(part + k, k);
            printf("\n  (o is their sum, over all %d keys)\n", n);
            free(part);
        }
    }
    printf("  o = ");
    print_vec(t->output, k);
    printf("\n\nStep 9. Concatenate every head's output for token %d (head %d fills columns %d..%d)\n  ", i, t->head,
           t->head * k, t->head * k + k - 1);
    print_vec(t->concat, t->d_concat);
    if (t->from_file) {
        printf("\n  (the other heads' outputs from the file's attention and v)\n\nStep 10. Output projection: "
               "concat W_O + b_O needs the model's W_O, which an attention file does not hold.");
    } else {
        printf("\n\nStep 10. Output projection: concat W_O + b_O%s\n  ", cross ? " (the cross-attention's W_O)" : "");
        print_vec(t->projected, t->d_model);
    }
    printf("\n\n(check: these weights differ from the %s attention by at most %.2g)\n",
           t->from_file ? "file's" : "captured", (double)t->max_abs_diff);
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

/* A per-key vector / [n][d_head] matrix: every key, or (--top) the listed keys in order. */
static void json_keyvec(FILE *f, const atn_trace *t, const double *v) {
    fputc('[', f);
    for (int32_t r = 0; r < key_count(t); r++) {
        if (r)
            fputs(", ", f);
        cli_json_number(f, v[key_at(r)]);
    }
    fputc(']', f);
}

static void json_keymat(FILE *f, const atn_trace *t, const double *m) {
    fputc('[', f);
    for (int32_t r = 0; r < key_count(t); r++) {
        if (r)
            fputs(", ", f);
        json_vec(f, m + (size_t)key_at(r) * t->d_head, t->d_head);
    }
    fputc(']', f);
}

/* --top K: "contributions": the K keys with the largest a_j·‖v_j‖, largest first, and the
 * others' sums (their a_j v_j summed: o minus the listed ones'). */
static void json_contributions(FILE *f, const atn_trace *t) {
    int32_t n = t->n, k = t->d_head;
    int32_t *rows = malloc((size_t)n * sizeof *rows);
    double *rest = calloc((size_t)k, sizeof *rest), *av = malloc((size_t)k * sizeof *av);
    char *listed = calloc((size_t)n, 1);
    int32_t m = rows && rest && av && listed ? atn_trace_top_contributions(t, top_k_asked, rows) : -1;
    if (m > 0) {
        double total = atn_trace_contribution_total(t), rest_w = 0, rest_c = 0;
        fputs(",\n  \"contributions\": {\"total\": ", f);
        cli_json_number(f, total);
        fputs(", \"keys\": [", f);
        for (int32_t r = 0; r < m; r++) {
            fprintf(f, "%s%d", r ? ", " : "", rows[r]);
            listed[rows[r]] = 1;
        }
        static const char *const names[] = {"weight", "value_norm", "contribution", "share"};
        for (int q = 0; q < 4; q++) {
            fprintf(f, "],\n    \"%s\": [", names[q]);
            for (int32_t r = 0; r < m; r++) {
                int32_t j = rows[r];
                double c = atn_trace_contribution(t, j);
                double v = q == 0 ? t->weights[j] : q == 1 ? value_norm(t, j) : q == 2 ? c : total > 0 ? c / total : 0;
                if (r)
                    fputs(", ", f);
                cli_json_number(f, v);
            }
        }
        fputs("],\n    \"weighted_value\": [", f);
        for (int32_t r = 0; r < m; r++) {
            for (int32_t d = 0; d < k; d++)
                av[d] = t->weights[rows[r]] * t->values[(size_t)rows[r] * k + d];
            if (r)
                fputs(", ", f);
            json_vec(f, av, k);
        }
        for (int32_t j = 0; j < n; j++) {
            if (listed[j])
                continue;
            rest_w += t->weights[j];
            rest_c += atn_trace_contribution(t, j);
            for (int32_t d = 0; d < k; d++)
                rest[d] += t->weights[j] * t->values[(size_t)j * k + d];
        }
        fprintf(f, "],\n    \"others\": {\"count\": %d, \"weight\": ", n - m);
        cli_json_number(f, rest_w);
        fputs(", \"contribution\": ", f);
        cli_json_number(f, rest_c);
        fputs(", \"share\": ", f);
        cli_json_number(f, total > 0 ? rest_c / total : 0);
        fputs(", \"weighted_value\": ", f);
        json_vec(f, rest, k);
        fputs("}}", f);
    }
    free(rows), free(rest), free(av), free(listed);
}

static void print_json(const atn_trace *t, bool stacks) {
    FILE *f = stdout;
    fprintf(f, "{\n  \"layer\": %d, \"head\": %d, \"query\": %d, \"d_head\": %d, \"d_model\": %d,\n  \"tokens\": [",
            t->layer, t->head, t->query, t->d_head, t->d_model);
    for (int32_t r = 0; r < key_count(t); r++) {
        if (r)
            fputs(", ", f);
        cli_json_string(f, tok(t, key_at(r)));
    }
    fputs("],\n", f);
    if (sel_rows) {   /* --top: every per-key array below holds the listed keys only, in this order */
        fprintf(f, "  \"n_keys\": %d, \"top\": %d, \"keys_listed\": [", t->n, top_k_asked);
        for (int32_t r = 0; r < sel_m; r++)
            fprintf(f, "%s%d", r ? ", " : "", sel_rows[r]);
        fputs("],\n  \"others\": [", f);   /* each run of keys left out: first, last, count, weight */
        double others = 0;
        bool first = true;
        for (int32_t r = 0; r <= sel_m; r++) {
            int32_t a = r > 0 ? sel_rows[r - 1] + 1 : 0, b = r < sel_m ? sel_rows[r] : t->n;
            if (b <= a)
                continue;
            double w = atn_trace_weight_sum(t, a, b);
            others += w;
            fprintf(f, "%s{\"first\": %d, \"last\": %d, \"count\": %d, \"weight\": ", first ? "" : ", ", a, b - 1,
                    b - a);
            cli_json_number(f, w);
            fputc('}', f);
            first = false;
        }
        fprintf(f, "],\n  \"others_count\": %d, \"others_weight\": ", t->n - sel_m);
        cli_json_number(f, others);
        fputs(",\n", f);
    }
    if (stacks) {   /* an encoder-decoder: the stack, and the query's token (tokens are the keys') */
        fprintf(f, "  \"stack\": \"%s\", \"n_queries\": %d, \"query_token\": ", stack_names[t->stack], t->n_queries);
        cli_json_string(f, query_tok(t));
        fprintf(f, ",\n  \"queries_from\": \"%s\", \"keys_from\": \"%s\",\n",
                t->stack == ATN_STACK_ENCODER ? "encoder" : "decoder", t->stack == ATN_STACK_DECODER ? "decoder" : "encoder");
    }
    if (t->q_unrotated) {   /* a rotary model: step 0 */
        fprintf(f, "  \"kv_head\": %d,\n  \"q_unrotated\": ", t->kv_head);
        json_vec(f, t->q_unrotated, t->d_head);
        fputs(",\n  \"keys_unrotated\": ", f);
        json_keymat(f, t, t->keys_unrotated);
        fputs(",\n  \"angles\": ", f);
        json_vec(f, t->angles, t->d_head / 2);
        fputs(",\n", f);
    }
    fputs("  \"q\": ", f);
    json_vec(f, t->q, t->d_head);
    fputs(",\n  \"keys\": ", f);
    json_keymat(f, t, t->keys);
    fputs(",\n  \"scores\": ", f);
    json_keyvec(f, t, t->scores);
    fputs(",\n  \"scale\": ", f);
    cli_json_number(f, t->scale);
    fputs(",\n  \"scaled\": ", f);
    json_keyvec(f, t, t->scaled);
    if (t->capped) {   /* Gemma 2: c tanh(scaled / c), what the mask is added to */
        fputs(",\n  \"softcap\": ", f);
        cli_json_number(f, t->softcap);
        fputs(",\n  \"capped\": ", f);
        json_keyvec(f, t, t->capped);
    }
    if (t->scale_factor > 0)
        fprintf(f, ",\n  \"scale_factor\": %d", t->scale_factor);
    if (t->pos_bias) {   /* T5: each key's bucket and the head's bias for it, added before the mask */
        fprintf(f, ",\n  \"bias_bidirectional\": %s, \"num_buckets\": %d, \"max_distance\": %d,\n  \"buckets\": [",
                t->bias_bidirectional ? "true" : "false", t->num_buckets, t->max_distance);
        for (int32_t r = 0; r < key_count(t); r++)
            fprintf(f, "%s%d", r ? ", " : "", t->bucket[key_at(r)]);
        fputs("],\n  \"position_bias\": ", f);
        json_keyvec(f, t, t->pos_bias);
    }
    if (t->c2p_term) {   /* DeBERTa: the relative terms the scores add before the mask */
        fputs(",\n  \"rel_index\": [", f);
        for (int32_t r = 0; r < key_count(t); r++)
            fprintf(f, "%s%d", r ? ", " : "", t->rel_index[key_at(r)]);
        fputs("],\n  \"c2p\": ", f);
        json_keyvec(f, t, t->c2p_term);
        fputs(",\n  \"p2c\": ", f);
        json_keyvec(f, t, t->p2c_term);
    }
    fputs(",\n  \"mask\": ", f);
    json_keyvec(f, t, t->mask_term);
    bool biased = false;
    for (int32_t j = 0; j < t->n; j++)
        biased |= t->bias_term[j] != 0;
    if (biased) {   /* the what-if lab's terms, only when the run had them */
        fputs(",\n  \"alibi\": ", f);
        json_keyvec(f, t, t->bias_term);
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
    json_keyvec(f, t, t->exps);
    fputs(",\n  \"sum\": ", f);
    cli_json_number(f, t->sum);
    fputs(",\n  \"weights\": ", f);
    json_keyvec(f, t, t->weights);
    fputs(",\n  \"values\": ", f);
    json_keymat(f, t, t->values);
    if (top_k_asked > 0)
        json_contributions(f, t);
    fputs(",\n  \"output\": ", f);
    json_vec(f, t->output, t->d_head);
    fputs(",\n  \"concat\": ", f);
    json_vec(f, t->concat, t->d_concat);
    if (t->projected) {   /* an attention file has no W_O */
        fputs(",\n  \"projected\": ", f);
        json_vec(f, t->projected, t->d_model);
    }
    if (t->from_file) {   /* how far the file's q, k, v land from its attn (a model's: golden's fixed text) */
        fputs(",\n  \"max_abs_diff\": ", f);
        cli_json_number(f, t->max_abs_diff);
    }
    fputs("\n}\n", f);
}

/* Prints t as text or JSON, every key or (--top) the listed ones. */
static int print_trace(const atn_trace *t, bool json, const char *name, int32_t n_heads, bool stacks) {
    int32_t *rows = NULL;
    if (top_k_asked > 0) {
        rows = malloc((size_t)t->n * sizeof *rows);
        if (!rows) {
            cli_error("attnscope trace: out of memory");
            return CLI_EXIT_FAIL;
        }
        sel_m = atn_trace_key_rows(t, top_k_asked, ATN_TRACE_EDGE_DEFAULT, rows);
        sel_rows = sel_m < t->n ? rows : NULL;   /* nothing left out: the full listing */
    }
    if (json)
        print_json(t, stacks);
    else
        print_text(name, t, n_heads, stacks);
    sel_rows = NULL;
    free(rows);
    return CLI_EXIT_OK;
}

int cmd_trace(int argc, char **argv) {
    cli_args a;
    static const char *const flags[] = {"help", "json", CLI_INTERVENTION_FLAGS, NULL};
    if (!cli_parse(&a, "attnscope trace", argc, argv, flags))
        return CLI_EXIT_USAGE;
    if (cli_flag(&a, "help")) {
        printf("Usage: attnscope trace (--model M [--text T] | --attention FILE) --layer L --head H --query I [--json]\n"
               "       [--target TEXT | --target-ids 0,5,7] [--stack encoder|decoder|cross] [--top K]\n\n"
               "Shows the arithmetic of one head for one query token: q, every k, the dot products, the\n"
               "scaling by 1/sqrt(d_k), the mask, the softmax, the values and the weighted sum.\n\n"
               "An encoder-decoder (T5, BART, Marian) reads --text as the source and --target as the decoder's\n"
               "input, as `run` does; --stack picks the head's stack (default encoder): decoder (--layer counts\n"
               "the decoder's layers, --query the target's tokens) or cross (queries from the decoder, keys and\n"
               "values from the encoder's output).  T5's relative position bias is a step of its own (each key's\n"
               "bucket and bias), and T5 does not scale its scores.\n"
               "--attention FILE traces an attention file that holds q, k and v (run -o FILE.safetensors --qkv;\n"
               "docs/attention-file.md): the same steps but the output projection, checked against its attn.\n"
               "--top K lists, for a long input, only the K keys with the largest weights, the first and last %d,\n"
               "the query's key and the largest score's, with a line \"… m others (keys a..b), total weight w\" for\n"
               "each run left out (--json: per-key arrays hold the listed keys, \"keys_listed\" and \"others\" say\n"
               "which); the softmax's sum and the output are still over every key.  The weighted sum then lists the\n"
               "K keys that contribute most, by a_j·‖v_j‖ with their share of Σ a_j·‖v_j‖, and the others as one\n"
               "line (--json: \"contributions\").  Default: every key.\n",
               ATN_TRACE_EDGE_DEFAULT);
        return 0;
    }
    bool ok = true;
    long layer = cli_get_int(&a, "layer", 0, 0, CLI_MAX_INDEX, &ok);
    long head = cli_get_int(&a, "head", 0, 0, CLI_MAX_INDEX, &ok);
    long query = cli_get_int(&a, "query", 0, 0, CLI_MAX_INDEX, &ok);
    bool json = cli_flag(&a, "json");
    long top = cli_get_int(&a, "top", 0, 1, CLI_MAX_INDEX, &ok);
    top_k_asked = (int32_t)top;
    const char *stack_s = cli_get(&a, "stack");
    atn_stack_kind stack = ATN_STACK_ENCODER;
    if (stack_s && !atn_stack_kind_parse(stack_s, &stack)) {
        cli_error("attnscope trace: --stack is encoder, decoder or cross, not \"%s\"", stack_s);
        return CLI_EXIT_USAGE;
    }
    if (!ok)
        return CLI_EXIT_USAGE;
    if (cli_attention_wanted(&a) && stack != ATN_STACK_ENCODER) {
        cli_error("attnscope trace: --stack %s: an attention file's trace follows its q, k, v, which are its "
                  "attn's (the encoder's); trace a decoder or cross head with --model", stack_s);
        return CLI_EXIT_USAGE;
    }
    if (cli_attention_wanted(&a)) {   /* an attention file's q, k, v in place of a run */
        cli_attention at;
        int rc = cli_attention_open_lazy(&a, &at);   /* the one layer the trace reads */
        atn_trace *t = NULL;
        atn_error err = {0};
        if (rc == CLI_EXIT_OK && atn_attn_file_trace(at.file, (int32_t)layer, (int32_t)head, (int32_t)query, &t, &err))
            rc = cli_fail(&err);
        if (rc == CLI_EXIT_OK)
            rc = print_trace(t, json, at.name, atn_attn_file_get_info(at.file).n_heads, false);
        atn_trace_free(t);
        cli_attention_free(&at);
        return rc;
    }
    atn_model *model;
    atn_encoding *enc;
    atn_run *run;
    int rc = cli_model_run(&a, &model, &enc, &run);
    if (rc == CLI_EXIT_OK && stack_s && !atn_model_is_encoder_decoder(model)) {
        cli_error("attnscope trace: --stack: model \"%s\" has one stack of attention (--stack is for "
                  "encoder-decoders: T5, BART, Marian)", atn_model_name(model));
        rc = CLI_EXIT_USAGE;
    }
    if (rc == CLI_EXIT_OK) {
        atn_error err = {0};
        atn_trace *t;
        const atn_capture *cap = atn_run_capture(run);
        trace_model = model;
        if (atn_trace_compute_stack(model, cap, stack, (int32_t)layer, (int32_t)head, (int32_t)query, &t, &err)) {
            rc = cli_fail(&err);
        } else {
            rc = print_trace(t, json, atn_model_name(model), atn_model_config(model)->n_heads, cap->n_stacks > 0);
            atn_trace_free(t);
        }
    }
    atn_run_free(run);
    atn_encoding_free(enc);
    atn_model_free(model);
    return rc;
}
