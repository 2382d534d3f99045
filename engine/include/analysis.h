/* Analysis of captured attention: head-to-head similarity with a clustering order,
 * per-head statistics with a pattern label, attention rollout, and accumulators that
 * average them over a corpus one sentence at a time (memory does not grow with it).
 *
 * Everything reads an atn_capture (attn [L][H][n][n], rows = queries) and skips masked
 * (padding) tokens: a query row is used only when its token is unmasked, and only the
 * unmasked keys of a row are compared.  Results are double precision.
 *
 * The conventions of attnscope.h hold (ownership, err may be NULL, Threads): a result
 * returned through **out belongs to the caller (its _free accepts NULL; *out is NULL on
 * failure); an accumulator (atn_similarity_new, atn_stats_new) is used by one thread at
 * a time, and only pointers the engine handed out may be passed to its functions (a
 * struct copy holds the results but not the accumulator behind them).  Every function
 * that reads a capture answers ATN_E_INVALID for a NULL capture or one whose run kept no
 * attention (atn_stats_* also read a capture with on-demand heads, attn_on_demand, one head
 * at a time per thread), and ATN_E_SHAPE for a capture of another model shape. */
#ifndef ATN_ANALYSIS_H
#define ATN_ANALYSIS_H

#include "attnscope.h"

#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- head-to-head similarity ----------------------------------------------------- */

typedef enum atn_metric {
    /* Jensen-Shannon distance (sqrt of the JS divergence, base-2 logs, so 0..1) between two
     * heads' attention rows, averaged over the unmasked query rows (Clark et al. 2019,
     * "What Does BERT Look At?").  0 = identical heads.  A distance. */
    ATN_METRIC_JS = 0,
    /* Cosine similarity of the two flattened maps (unmasked rows and keys).  1 = identical. */
    ATN_METRIC_COSINE,
    /* Pearson correlation of the two flattened maps.  1 = identical, -1..1. */
    ATN_METRIC_PEARSON,
} atn_metric;

typedef enum atn_scope {
    ATN_SCOPE_LAYER = 0,   /* the H heads of one layer: H × H */
    ATN_SCOPE_MODEL,       /* every head of every layer: (L·H) × (L·H), index = l*H + h */
} atn_scope;

/* Names (static storage; an unknown value gets the first enum's name) and parsing
 * (case-insensitive, with aliases such as "jsd", "cos", "correlation"): from_name
 * returns false and leaves *out for a NULL or unknown name. */
const char *atn_metric_name(atn_metric m);      /* "js", "cosine", "pearson" */
const char *atn_metric_title(atn_metric m);     /* "Jensen-Shannon distance", ... */
bool atn_metric_from_name(const char *name, atn_metric *out);
bool atn_metric_is_distance(atn_metric m);      /* true for js */
const char *atn_scope_name(atn_scope s);        /* "layer", "model" */
bool atn_scope_from_name(const char *name, atn_scope *out);

typedef struct atn_similarity {
    atn_metric metric;
    atn_scope scope;
    int32_t layer;          /* the layer for ATN_SCOPE_LAYER, -1 for the model */
    int32_t n_layers, n_heads;
    int32_t count;          /* heads compared: H or L*H */
    int32_t *layer_of;      /* [count] layer of head index c */
    int32_t *head_of;       /* [count] head within its layer */
    double *values;         /* [count][count] symmetric; the metric's value (distance or similarity) */
    /* Agglomerative clustering (average linkage) on the distances (js, or 1 - similarity):
     * order is a leaf order in which merged clusters sit together; merge m joins clusters
     * merge_a[m] and merge_b[m] (ids < count are heads, count + m' is the cluster of merge
     * m') at distance merge_height[m], scipy's linkage() convention. */
    int32_t *order;         /* [count] */
    int32_t *merge_a, *merge_b;   /* [count - 1] */
    double *merge_height;         /* [count - 1] */
    int64_t n_sentences;    /* inputs averaged (1 for one capture) */
    bool clustered;         /* values, order and merges are final (set by finish / compute);
                               false while a corpus pass is still adding */
} atn_similarity;

/* One capture: compute, cluster, done.  layer is used for ATN_SCOPE_LAYER only.  *out is
 * the caller's (atn_similarity_free).  ATN_E_INVALID: NULL or attention-less capture, an
 * unknown metric or scope, layer out of range; ATN_E_NOMEM. */
atn_status atn_similarity_compute(const atn_capture *cap, atn_metric metric, atn_scope scope, int32_t layer,
                                  atn_similarity **out, atn_error *err);

/* The same, calling progress (may be NULL) from this thread while the pairs are compared,
 * with the fraction done; when it returns false the work stops within a pair or two and the
 * answer is ATN_E_CANCELLED (the GUI's way to drop a comparison of a text that changed:
 * Jensen-Shannon over bert-base's 10,296 head pairs at 512 tokens takes seconds). */
atn_status atn_similarity_compute_progress(const atn_capture *cap, atn_metric metric, atn_scope scope,
                                           int32_t layer, atn_progress_fn progress, void *user_data,
                                           atn_similarity **out, atn_error *err);
/* For the corpus mode: the progress callback of each later add (per capture, stage
 * ATN_STAGE_SIMILARITY; NULL: none).  sim must not be NULL. */
void atn_similarity_set_progress(atn_similarity *sim, atn_progress_fn progress, void *user_data);

/* Corpus mode: new (shape of the model; NULL with ATN_E_INVALID for a bad shape, metric,
 * scope or layer, or ATN_E_NOMEM), add one capture per sentence (ATN_E_INVALID for a NULL
 * sim or capture, no attention, or after finish; ATN_E_SHAPE for another model shape;
 * ATN_E_CANCELLED from the progress callback, the sentence then not counted; ATN_E_NOMEM),
 * finish (averages over sentences and clusters; sets clustered; a second finish does
 * nothing; ATN_E_INVALID for NULL, ATN_E_NOMEM).  Free with atn_similarity_free (NULL:
 * nothing). */
atn_similarity *atn_similarity_new(int32_t n_layers, int32_t n_heads, atn_metric metric, atn_scope scope,
                                   int32_t layer, atn_error *err);
atn_status atn_similarity_add(atn_similarity *sim, const atn_capture *cap, atn_error *err);
/* The accumulator for cap's heads: atn_similarity_new of its shape, but a capture whose
 * layers have different head counts (cap->layer_heads) compares only the heads its layers
 * have (count: their number; layer_of / head_of say which), so an absent head is in no pair
 * and no cluster.  atn_similarity_add then takes captures of that shape and those head
 * counts (another: ATN_E_SHAPE); atn_similarity_new's accumulator refuses a capture with
 * absent heads (ATN_E_SHAPE).  Errors as atn_similarity_new (NULL cap: ATN_E_INVALID). */
atn_similarity *atn_similarity_new_capture(const atn_capture *cap, atn_metric metric, atn_scope scope, int32_t layer,
                                           atn_error *err);
/* Layer scope from one layer's heads alone (a forward's head sink keeping only that layer,
 * atn_run_options.head_sink, in place of the capture's [L][H][n][n]): heads [n_heads][n][n]
 * of sim's layer (row = query; borrowed for the call) for the sentence enc (its mask: the
 * rows and keys compared).  The same sums as atn_similarity_add on that sentence's capture.
 * ATN_E_INVALID: NULL sim, enc or heads, a model-scope sim, or after finish; otherwise as
 * atn_similarity_add. */
atn_status atn_similarity_add_layer(atn_similarity *sim, const atn_encoding *enc, const float *heads,
                                    atn_error *err);
atn_status atn_similarity_finish(atn_similarity *sim, atn_error *err);
void atn_similarity_free(atn_similarity *sim);

/* An encoder-decoder's stacks (atn_capture.stacks; attnscope.h): the heads of stack kind
 * compared as above.  ATN_STACK_ENCODER is the capture's attention (atn_similarity_add /
 * atn_similarity_compute_progress, any capture).  ATN_STACK_DECODER: the decoder's causal
 * self-attention [L_dec][H][n_tgt][n_tgt], every target row and key (the target has no
 * padding).  ATN_STACK_CROSS: [L_dec][H][n_tgt][n_src], every target row over the source's
 * unmasked keys (cap->enc's mask): the same metrics on non-square maps (js: the distance
 * between the two heads' rows over the source keys, averaged over the target rows).  The
 * accumulator's shape (atn_similarity_new) is the stack's (n_dec_layers x its heads).
 * ATN_E_INVALID: as atn_similarity_add, or a decoder/cross kind for a capture without stacks
 * (the message names the stack); ATN_E_SHAPE: a stack of another shape; ATN_E_NOMEM;
 * ATN_E_CANCELLED from progress.  *out is the caller's (atn_similarity_free). */
atn_status atn_similarity_add_stack(atn_similarity *sim, const atn_capture *cap, atn_stack_kind kind,
                                    atn_error *err);
atn_status atn_similarity_compute_stack(const atn_capture *cap, atn_stack_kind kind, atn_metric metric,
                                        atn_scope scope, int32_t layer, atn_progress_fn progress, void *user_data,
                                        atn_similarity **out, atn_error *err);

/* "L3·H7" (model scope) or "H7" (layer scope) for index c, into buf (size >= 16; "?" for
 * a NULL sim or c out of range); returns buf. */
const char *atn_similarity_label(const atn_similarity *sim, int32_t c, char *buf, size_t size);

/* By K/V group (grouped-query models: query head h reads K/V head h / (H / kv_heads), so the
 * H / kv_heads heads of a group share their keys and values).  Groups are (layer, K/V head):
 * kv_heads of them for a layer-scope similarity (of sim->layer), L · kv_heads for the model
 * scope, index layer · kv_heads + kv. */
typedef struct atn_kv_groups {
    int32_t kv_heads, per_group;   /* K/V heads per layer; query heads in each group */
    int32_t count;                 /* groups */
    int32_t *layer_of, *kv_of;     /* [count] the layer and K/V head of group a */
    /* [count][count]: the mean of sim->values over the pairs of distinct heads (x, y), x in
       group a, y in group b; the diagonal is the mean within a group */
    double *values;
    double within;                 /* mean over the pairs of heads in one group (each pair once) */
    double between;                /* mean over the pairs of heads of one layer in different groups */
} atn_kv_groups;

/* sim's values gathered by K/V group, *out the caller's (atn_kv_groups_free; NULL: nothing).
 * ATN_E_INVALID: NULL sim or out, sim not finished, kv_heads not dividing sim->n_heads, or
 * kv_heads == n_heads (every head its own K/V head: no groups; the message says so);
 * ATN_E_NOMEM.  Reads sim only. */
atn_status atn_similarity_by_kv_group(const atn_similarity *sim, int32_t kv_heads, atn_kv_groups **out,
                                      atn_error *err);
void atn_kv_groups_free(atn_kv_groups *g);

/* Average-linkage clustering of a count × count distance matrix (symmetric, zero diagonal).
 * Writes the leaf order [count] and, when not NULL, the merges [count - 1] as above.
 * Ties merge the pair with the smaller indices first, so results are deterministic.
 * ATN_E_INVALID for count < 1 or a NULL dist/order; ATN_E_NOMEM. */
atn_status atn_cluster_average_linkage(const double *dist, int32_t count, int32_t *order, int32_t *merge_a,
                                       int32_t *merge_b, double *merge_height, atn_error *err);

/* The pairwise kernels on packed matrices, for tests and benchmarks: heads [count][rows][cols]
 * (each row a distribution for js); out [count][count].  ATN_E_INVALID for a NULL array
 * or a negative size; ATN_E_NOMEM. */
atn_status atn_similarity_matrix(const float *heads, int32_t count, int32_t rows, int32_t cols, atn_metric metric,
                                 double *out, atn_error *err);

/* ---- per-head statistics ----------------------------------------------------------- */

typedef enum atn_pattern {
    ATN_PATTERN_DIAGONAL = 0,   /* attends to itself */
    ATN_PATTERN_PREVIOUS,       /* to the previous token */
    ATN_PATTERN_NEXT,           /* to the next token */
    ATN_PATTERN_CLS,            /* vertical stripe on [CLS] */
    ATN_PATTERN_SEP,            /* vertical stripe on [SEP] */
    ATN_PATTERN_PUNCT,          /* vertical stripes on punctuation */
    ATN_PATTERN_BLOCK,          /* within a small neighbourhood, or within its own segment */
    ATN_PATTERN_BROAD,          /* spread out over many tokens */
    ATN_PATTERN_MIXED,          /* none of the above clearly */
    ATN_PATTERN_INDUCTION,      /* in a repeated span, to the token after the earlier copy of itself
                                   (after mixed so the older values stay as they were) */
    ATN_PATTERN_COUNT
} atn_pattern;

const char *atn_pattern_name(atn_pattern p);   /* "diagonal", "previous", "vertical [CLS]" ... (static; "mixed" out of range) */

typedef struct atn_head_stats {
    double entropy;        /* mean over query rows of the row's entropy, in bits */
    double entropy_norm;   /* mean of entropy / log2(unmasked keys): 0 one-hot .. 1 uniform */
    double cls;            /* mean attention to [CLS] tokens */
    double sep;            /* to [SEP] tokens */
    double punct;          /* to punctuation tokens */
    double self;           /* a_ii */
    double prev;           /* a_i,i-1 (rows with a previous token) */
    double next;           /* a_i,i+1 (rows with a next token) */
    double local;          /* mass within |i - j| <= 2 */
    double same_segment;   /* mass on keys of the query's own segment (pairs; 1 for one text) */
    double distance;       /* mean attention distance sum_j a_ij |i - j| */
    double induction;      /* in a repeated span: the mean, over query rows i whose token and the
                              one before it occurred together earlier (ids[j-1] = ids[i-1], ids[j] =
                              ids[i], j < i - 1), of the attention to the tokens j + 1 that
                              followed those earlier copies (Olsson et al. 2022); 0 for a
                              sentence without such rows; not in the CSV (the corpus
                              partials keep its sums: corpus-stats.c) */
    atn_pattern pattern;
} atn_head_stats;

typedef struct atn_stats {
    int32_t n_layers, n_heads;
    atn_head_stats *heads;   /* [L][H] */
    int64_t n_sentences;
    int64_t n_tokens;        /* unmasked tokens seen */
    bool has_pairs;          /* some input had two segments */
} atn_stats;

/* Each K/V group's statistics: *out [L][kv_heads] (malloc'ed, the caller frees), every number
 * the mean over the group's H / kv_heads query heads (the heads of group k of layer l are
 * k · H / kv_heads ...), the pattern the label most of them have (a tie: the first in the
 * enum).  Errors as atn_similarity_by_kv_group (no st: ATN_E_INVALID). */
atn_status atn_stats_by_kv_group(const atn_stats *st, int32_t kv_heads, atn_head_stats **out, atn_error *err);
/* Those groups (groups [L][kv_heads], as atn_stats_by_kv_group made them from st) as CSV: the
 * header layer,kv_head,first_head,heads,entropy,entropy_norm,cls,sep,punct,self,prev,next,local,
 * distance,induction,pattern, then one line per group, layer-major (numbers with 9 significant
 * digits): `stats --by-kv-group --format csv` and the window's export.  ATN_E_INVALID for a
 * NULL argument or kv_heads not dividing st->n_heads, ATN_E_IO when a write fails. */
atn_status atn_stats_write_kv_groups_csv(const atn_stats *st, const atn_head_stats *groups, int32_t kv_heads, FILE *f,
                                         atn_error *err);

/* Per-sentence means, then averaged over sentences (each sentence weighs the same).
 * One capture: its statistics with each head labelled, *out the caller's (atn_stats_free).
 * A head the capture's layer does not have (atn_capture_head_present false) is not read:
 * every number of it is NaN (pattern mixed; atn_head_stats_absent says so), so no mean,
 * clearest head or K/V group counts it. */
atn_status atn_stats_compute(const atn_capture *cap, atn_stats **out, atn_error *err);
/* The same with a progress callback (NULL: none), called by each thread that shares the
 * heads after each of its heads (stage ATN_STAGE_STATISTICS, the fraction of its heads
 * done); when it returns false the threads stop at their next head, *out stays NULL and the
 * answer is ATN_E_CANCELLED (the window drops the statistics of a text that changed:
 * bert-base at 512 tokens takes ~0.3 s of two cores).  The numbers are those of
 * atn_stats_compute, bit for bit. */
atn_status atn_stats_compute_progress(const atn_capture *cap, atn_progress_fn progress, void *user_data,
                                      atn_stats **out, atn_error *err);
/* Corpus mode: new (NULL with ATN_E_INVALID for a bad shape, or ATN_E_NOMEM), add one
 * capture per sentence (ATN_E_INVALID for a NULL st or capture, no attention, or after
 * finish; ATN_E_SHAPE for another model shape; ATN_E_NOMEM), finish (turns the sums into
 * means and labels each head; a second finish does nothing; ATN_E_INVALID for NULL).
 * free: NULL does nothing. */
atn_stats *atn_stats_new(int32_t n_layers, int32_t n_heads, atn_error *err);
atn_status atn_stats_add(atn_stats *st, const atn_capture *cap, atn_error *err);
atn_status atn_stats_finish(atn_stats *st, atn_error *err);
void atn_stats_free(atn_stats *st);

/* An encoder-decoder's stacks (atn_capture.stacks; attnscope.h), one sentence at a time, with
 * the accumulator's shape (atn_stats_new) the stack's: n_dec_layers x its heads for the
 * decoder and cross.  ATN_STACK_ENCODER is the capture's attention (atn_stats_add, any
 * capture; target unused).
 * ATN_STACK_DECODER: the decoder's causal self-attention [L_dec][H][n_tgt][n_tgt] read as a
 * sentence of the target's tokens: every statistic as for an encoder, over every target row
 * and key (the target has no padding).  target (may be NULL) is the decoder input's tokens
 * (cap->n_tgt of them, e.g. atn_model_encode_ids of cap->target_ids): their roles and texts
 * say which keys are [CLS] / [SEP] / punctuation and their ids find the induction rows; NULL:
 * no key is of those kinds, induction 0.
 * ATN_STACK_CROSS: [L_dec][H][n_tgt][n_src], target rows over source keys.  Defined over every
 * target row and the source's unmasked keys (cap->enc): entropy (bits) over the source keys,
 * entropy_norm = entropy / log2(unmasked source tokens), cls / sep / punct the attention to
 * source tokens of that kind.  A target index i and a source index j number different
 * sequences, so the figures that compare them are not defined and hold NaN: self, prev,
 * next, local, distance, same_segment, induction (the CSV writes "nan", the command line's
 * JSON null).  The pattern label reads the defined ones (vertical [CLS] / [SEP] /
 * punctuation, broad or mixed).  target unused.
 * n_tokens counts the query rows (the target's tokens for the decoder and cross).
 * ATN_E_INVALID: as atn_stats_add, a decoder/cross kind for a capture without stacks (the
 * message names the stack); ATN_E_SHAPE: a stack of another shape than st, a target of another
 * length than cap->n_tgt; ATN_E_NOMEM; compute: ATN_E_CANCELLED from progress (called after
 * each head with the fraction of heads done, ATN_STAGE_STATISTICS).  *out is the caller's. */
atn_status atn_stats_add_stack(atn_stats *st, const atn_capture *cap, atn_stack_kind kind,
                               const atn_encoding *target, atn_error *err);
atn_status atn_stats_compute_stack(const atn_capture *cap, atn_stack_kind kind, const atn_encoding *target,
                                   atn_progress_fn progress, void *user_data, atn_stats **out, atn_error *err);

/* Row by row: one sentence's statistics from its attention rows as they are made (a
 * forward that never holds a head's whole matrix), the same numbers as atn_stats_add on the
 * full capture, bit for bit when each head's query rows come in query order.
 * new: for the tokens of enc (masked tokens count as in atn_stats_add: their rows and
 * columns are left out) and a model of n_layers x n_heads (ATN_E_INVALID for a NULL or
 * empty enc or a bad shape, ATN_E_NOMEM).  add: query row `query` [enc->n] of head (layer,
 * head), the probabilities over every key; a masked query or an index out of range is
 * ignored.  Rows of different heads may be added from different threads at once; one
 * head's rows from one thread.  fold: adds the sentence to st as atn_stats_add would
 * (ATN_E_INVALID for NULL, after finish, or a head that did not get every unmasked query
 * row; ATN_E_SHAPE for another shape); r stays valid until free (NULL: nothing). */
typedef struct atn_stats_rows atn_stats_rows;
atn_status atn_stats_rows_new(const atn_encoding *enc, int32_t n_layers, int32_t n_heads, atn_stats_rows **out,
                              atn_error *err);
void atn_stats_rows_add(atn_stats_rows *r, int32_t layer, int32_t head, int32_t query, const float *row);
atn_status atn_stats_rows_fold(atn_stats_rows *r, atn_stats *st, atn_error *err);
void atn_stats_rows_free(atn_stats_rows *r);

/* The table as CSV: a header line, then one line per head, layer-major
 * (layer,head,entropy,entropy_norm,cls,sep,punct,self,prev,next,local,same_segment,distance,
 * pattern; numbers with 9 significant digits).  The command line's --format csv.
 * ATN_E_INVALID for a NULL st or f, ATN_E_IO when a write fails. */
atn_status atn_stats_write_csv(const atn_stats *st, FILE *f, atn_error *err);

/* The head with the clearest pattern: the one whose largest mean attention to the previous
 * token, the next token, itself, [CLS] or [SEP] is largest, provided that value is at least
 * ATN_CLEAREST_HEAD_MIN (an untrained model's heads have none: its first head is as good as
 * any).  Heads are compared in layer-major order and one wins only by more than 1e-9, so a
 * tie goes to the first.  What the window opens a model on.  Returns true and sets *layer and
 * *head (each may be NULL) when a head qualifies; false, leaving them untouched, when none
 * does, st is NULL or it has no heads.  Reads st only; thread-safe on a const st. */
#define ATN_CLEAREST_HEAD_MIN 0.3
bool atn_stats_clearest_head(const atn_stats *st, int32_t *layer, int32_t *head);

/* A head with no statistics: its layer does not have it (every number NaN). */
bool atn_head_stats_absent(const atn_head_stats *s);

/* The label for a set of numbers (the thresholds are in head-stats.c). */
atn_pattern atn_pattern_classify(const atn_head_stats *s, bool has_pairs);

/* Is this token text punctuation (every character a Unicode punctuation mark or symbol,
 * ASCII or CJK, e.g. "," "。" "——")? */
bool atn_token_is_punct(const char *text);

/* ---- attention rollout --------------------------------------------------------------- */

/* Abnar & Zuidema 2020: per layer A' = 0.5 * mean_h(A) + 0.5 * I, rows renormalised to 1,
 * then R = A'_last ... A'_1 A'_0 through layers 0..last_layer (-1: all); mean_h over the
 * heads the layer has (atn_capture_head_present).  out is [n][n]:
 * row i = how much token i's representation after last_layer draws on each input token.
 * Masked keys and rows are left as the model gives them.  out is the caller's [n][n]
 * floats.  ATN_E_INVALID: NULL capture or out, no attention, last_layer out of range, no
 * tokens; ATN_E_NOMEM. */
atn_status atn_rollout_compute(const atn_capture *cap, int32_t last_layer, float *out, atn_error *err);

/* ---- attention flow ------------------------------------------------------------------ */

/* Abnar & Zuidema 2020, §3 "attention flow", as their reference code computes it: the
 * layers 0..last_layer (-1: all) make a layered graph whose node (l, j) is token j before
 * layer l (l = 0: the embeddings), with an edge (l+1, i) -> (l, j) of capacity A'_l[i][j],
 * the residual-augmented head-averaged attention of the rollout (A' = 0.5 mean_h(A) +
 * 0.5 I, rows renormalised: the variant the paper and its code use, so rollout and flow
 * read the same graph and differ only in products against max-flow).  out[i][j] is the
 * maximum flow from (last+1, i) to (0, j) divided by the row's sum over j, so each row
 * sums to 1 (compute_flows' normalisation).  out is the caller's [n][n] floats.  Cost:
 * n^2 max-flows (Dinic, double precision) on (last+1) n^2 edges, so it grows like
 * n^4 L and more: seconds at n = 30, minutes past n = 100.  progress (NULL: none) is called
 * after every pair with the fraction done and ATN_STAGE_FLOW, on the calling thread; false
 * cancels (ATN_E_CANCELLED, out partly written).  ATN_E_INVALID: NULL capture or out, no
 * attention, last_layer out of range, no tokens; ATN_E_NOMEM.  Reads the capture only: one
 * call per capture at a time with on-demand heads (as atn_capture_head_read). */
atn_status atn_flow_compute(const atn_capture *cap, int32_t last_layer, float *out, atn_progress_fn progress,
                            void *user_data, atn_error *err);

/* ---- norm-based attention ------------------------------------------------------------ */

/* Whether atn_norm_attention_compute reads this model: the families whose attention is
 * softmax(QK^T) (x W_V + b_V) W_O with one K/V per head (BERT, RoBERTa, XLM-RoBERTa,
 * DistilBERT, ALBERT, ELECTRA, GPT-2).  False for NULL and every other family. */
bool atn_norm_attention_supported(const atn_model *model);

/* Kobayashi et al. 2020, "Attention is Not Only a Weight": out[i][j] = ||alpha_ij f_h(x_j)||
 * for head h of layer, with f_h(x) = (x W_V^h + b_V^h) W_O^h; the bias of W_O is excluded,
 * as in the paper (added once after the sum, it belongs to no token).  head = -1: the
 * layer's ||sum_h alpha^h_ij f_h(x_j)||.  V is the capture's (the trace inputs), W_O the
 * model's, so model must be the one cap was run with.  Rows of a masked query or columns
 * of a masked key hold what alpha gives (0 for a masked key).  out is the caller's [n][n]
 * floats, norms in the model's hidden units (not shares: a row does not sum to 1).
 * ATN_E_INVALID: NULL argument, no attention or no trace inputs, layer or head out of
 * range, no tokens; ATN_E_UNSUPPORTED: a family not named above (its name in the message),
 * an encoder-decoder run; ATN_E_SHAPE: heads whose widths are not H x d_head; ATN_E_NOMEM.
 * Reads model and capture only. */
atn_status atn_norm_attention_compute(const atn_model *model, const atn_capture *cap, int32_t layer, int32_t head,
                                      float *out, atn_error *err);

/* ---- the what-if lab: two captures of one input compared ------------------------------ */

/* How capture b (a changed model, atn_interventions) differs from capture a (the original)
 * on the same tokens.  Arrays owned by the struct (atn_capture_diff_free). */
typedef struct atn_capture_diff {
    int32_t n_layers, n_heads, n;
    float *js;        /* [L][H] mean over the real query rows (a's enc->mask) of the
                         Jensen-Shannon distance, sqrt of the divergence in bits (0..1), between
                         the two rows; a row that sums to 0 in one capture only (a zeroed head)
                         counts 1, in both 0 */
    float *max_abs;   /* [L][H] the largest |a - b| over the head's cells */
    float *drift;     /* [L+1] mean over the real tokens of 1 - cos(a's hidden row, b's) */
} atn_capture_diff;

/* ATN_E_INVALID: NULL a/b/out, a capture without attention, or shapes that differ (the
 * message says which); ATN_E_NOMEM.  *out is the caller's. */
atn_status atn_capture_diff_compute(const atn_capture *a, const atn_capture *b, atn_capture_diff **out,
                                    atn_error *err);
void atn_capture_diff_free(atn_capture_diff *d);   /* NULL: nothing */

/* ---- the what-if lab: head importance by ablation (Michel et al. 2019) ------------------ */

/* A copy of enc with about rate of its words (tokens that are not special, not padding)
 * replaced by the model's [MASK] id: round(rate * words), at least 1, chosen by a
 * Fisher-Yates shuffle of the words on splitmix64(seed); positions[count] (the caller's
 * array of enc->n) get their indices in increasing order.  *masked is the caller's
 * (atn_encoding_free); its tokens keep their text.  ATN_E_UNSUPPORTED: no [MASK] in the
 * vocabulary; ATN_E_INVALID: NULL argument, rate outside (0, 1], no word to mask; ATN_E_NOMEM. */
atn_status atn_mlm_mask_words(const atn_model *model, const atn_encoding *enc, double rate, uint64_t seed,
                              atn_encoding **masked, int32_t *positions, int32_t *count, atn_error *err);

typedef struct atn_importance {
    int32_t n_layers, n_heads;
    int64_t sentences, masked;   /* sentences used, masked tokens over them (causal: tokens predicted) */
    bool next_token;             /* a causal model: the loss is the next-token loss */
    double base_loss;            /* mean -ln p(original token) over the masked tokens (causal: mean
                                    -ln p(token t+1 | tokens 0..t) over the predicted tokens) */
    double *off_delta;           /* [L][H] loss with only that head switched off - base_loss */
    double *keep_delta;          /* [L][H] loss with only that head kept in its layer - base_loss */
    double seconds;              /* wall time of the compute */
} atn_importance;

/* Head importance over n sentences: each sentence masked by atn_mlm_mask_words(rate, seed
 * + its index), the masked-LM loss of the model, of the model with each head switched off
 * alone (mode: zero or uniform) and with each head kept alone in its layer.  reuse_lower:
 * an ablation in layer l starts from the plain run's hidden states of layer l (the layers
 * below do not change) instead of running them again; the figures are the same.  opts: the
 * run options (device, threads; its interventions are ignored); progress gets the fraction
 * of the ablations done (ATN_STAGE_CORPUS), also once per layer of every forward pass, and
 * cancels with ATN_E_CANCELLED (within a layer).  Sentences
 * with no word to mask are skipped.  A causal model (atn_model_is_causal: GPT-2) uses the
 * next-token loss instead: every real token followed by a real token predicts it
 * (atn_predict_next_log_prob), nothing is masked, rate and seed are unused, and sentences
 * of one token are skipped.  *out is the caller's (atn_importance_free).
 * ATN_E_UNSUPPORTED: no masked-LM head (and not causal) or no [MASK]; ATN_E_INVALID: no
 * sentence with a word (causal: with two tokens),
 * NULL arguments; errors of the forward passes. */
atn_status atn_importance_compute(const atn_model *model, atn_encoding *const *sentences, int32_t n, double rate,
                                  uint64_t seed, atn_head_mode mode, bool reuse_lower, const atn_run_options *opts,
                                  atn_progress_fn progress, void *user_data, atn_importance **out, atn_error *err);

/* The same with each layer's ablations of a sentence (its 2H head gates) stacked into
 * forwards of up to rows token rows (0: ATN_BATCH_ROWS; atn_batch_forward, not exact): the
 * projections and the FFN run once over all copies.  The figures are those of
 * atn_importance_compute up to float rounding (OpenBLAS adds a row's products in another
 * order in a taller product: ~1e-7 relative in each loss; tests/whatif/test-whatif.c checks
 * 1e-6), in the same order of summation. */
atn_status atn_importance_compute_stacked(const atn_model *model, atn_encoding *const *sentences, int32_t n,
                                          double rate, uint64_t seed, atn_head_mode mode, bool reuse_lower,
                                          int32_t rows, const atn_run_options *opts, atn_progress_fn progress,
                                          void *user_data, atn_importance **out, atn_error *err);
void atn_importance_free(atn_importance *imp);   /* NULL: nothing */

/* ---- the what-if lab: what attention costs at a length, dense and masked --------------- */

/* The largest length atn_attention_cost_compute counts (its count is O(n^2)). */
#define ATN_COST_MAX_TOKENS 16384

/* The attention maps of a model at n tokens, and what a mask keeps of them: the articles'
 * 262,144 cells per head at 512 tokens.  Bytes are float32 probabilities as the capture
 * holds them (every cell, whatever the mask); kept cells are the (query, key) pairs the
 * mask lets through, what a sparse kernel would compute and a sparse store would keep. */
typedef struct atn_attention_cost {
    int32_t n, n_layers, n_heads, d_head, batch;
    int64_t cells_head;            /* n * n */
    int64_t kept_head;             /* cells the mask (iv's causal, window + global, strided, hidden keys) keeps */
    int64_t bytes_head;            /* 4 n^2 */
    int64_t bytes_layer;           /* H heads */
    int64_t bytes_capture;         /* L layers */
    int64_t bytes_batch;           /* batch sentences of the capture */
    int64_t kept_bytes_capture;    /* 4 x kept cells x L x H: the kept cells alone (with iv's
                                      mask_layers: every cell in the layers it skips) */
    double flops_dense_layer;      /* q.k and p.v over every cell of every head: 4 n^2 d_head H */
    double flops_kept_layer;       /* the same over the kept cells only */
} atn_attention_cost;

/* Fills *out for a model of n_layers x n_heads heads of d_head dimensions at n tokens and
 * batch sentences, with iv's masks (NULL: dense; the per-head terms and positions change
 * no cell count).  Counted exactly, cell by cell, with the rule the run's mask uses.
 * ATN_E_INVALID: NULL out, n outside 1..ATN_COST_MAX_TOKENS, a shape or batch below 1, or
 * interventions atn_interventions_check refuses (a token outside 0..n-1). */
atn_status atn_attention_cost_compute(int32_t n, int32_t n_layers, int32_t n_heads, int32_t d_head, int32_t batch,
                                      const atn_interventions *iv, atn_attention_cost *out, atn_error *err);

#ifdef __cplusplus
}
#endif
#endif
