/* Corpus statistics in parts that merge: what `attnscope stats --shard` writes, `stats merge`
 * adds up and `stats --from` / `attnscope examples` read (engine/analysis/corpus-stats.c, the
 * file in corpus-stats-file.c; docs/cluster.md shows the command lines).
 *
 * A partial holds, for lines [first, last] of one corpus (a set of such ranges after a merge),
 * per layer and head and per statistic of atn_head_stats (its order: entropy .. distance):
 *  - the sum and the sum of squares of the per-sentence values, in exact fixed point: each
 *    value is rounded once, when its sentence is added, to a multiple of 2^-96 and kept in
 *    192-bit two's complement integers (95 bits above the point: no overflow before ~10^28).
 *    Integer addition is associative and commutative, so a merge in any order and any
 *    grouping gives the same integers and the same file bytes; the means read back
 *    (sum / sentences) differ from atn_stats's float64 running sums by rounding only
 *    (~1e-16 relative);
 *  - the smallest and largest per-sentence value (float64; min and max are order-free);
 *  - the sum of the per-sentence induction shares (atn_head_stats's induction, in the same fixed
 *    point; a file without it, of the first version, reads as 0);
 *  - per relative offset d = key - query in -ATN_CS_OFFSET_MAX..+ATN_CS_OFFSET_MAX: the sum over
 *    the corpus's query rows of the weight on the token d places away (each sentence's sum over
 *    its rows in float64, then rounded once into the same fixed point), and how many rows had a
 *    token there (an exact count, the same for every head).  The mean weight at offset d is
 *    sum / rows: the positional labels' evidence.  Partials written before these sums existed
 *    load without them (atn_corpus_stats_has_offsets false): their labels say so, and a merge
 *    of one with and one without refuses;
 *  - per query row (token): fixed-bin histograms (exact counts) of the row's entropy
 *    (bits, ATN_CS_ENTROPY_BINS bins of 1/4 bit, the last open), of its attention distance
 *    (tokens, ATN_CS_DISTANCE_BINS bins of 1, the last open) and of its sink mass (the weight on
 *    the first token, ATN_CS_SINK_BINS bins of 1/20 with 1.0 in the last);
 *  - the top-k exemplars: for every query row its heaviest key that is not a special token
 *    ([CLS], [SEP], [PAD]...: attention parked there is the sink histogram's), the k heaviest
 *    of those over the corpus, in a total order: weight (float32) descending, then line, query,
 *    key ascending.  Each keeps the line, both positions, both tokens' text (cut to
 *    ATN_CS_TEXT_MAX - 1 bytes at a character boundary) and byte spans in the line;
 *  - counts: sentences, unmasked tokens, sentences truncated, lines cut, lines skipped;
 *  - provenance: the identity a merge checks (model, revision, tokenizer hash, precision,
 *    settings, corpus and its line count, attnscope version, layers, heads, k).
 *
 * Threads: a partial is used by one thread at a time; different partials are independent. */
#ifndef ATN_CORPUS_STATS_H
#define ATN_CORPUS_STATS_H

#include "analysis.h"

#include <stdint.h>

enum {
    ATN_CS_ENTROPY_BINS = 64,    /* [0, 0.25) .. [15.75, inf) bits */
    ATN_CS_DISTANCE_BINS = 64,   /* [0, 1) .. [63, inf) tokens */
    ATN_CS_SINK_BINS = 20,       /* [0, 0.05) .. [0.95, 1] */
    ATN_CS_TEXT_MAX = 32,        /* bytes kept of an exemplar token's text, with its NUL */
    ATN_CS_TOP_MAX = 4096,       /* the largest k */
    ATN_CS_STATS = 11,           /* the statistics of atn_head_stats */
    ATN_CS_OFFSET_MAX = 8,       /* per-offset sums for offsets -8..+8 */
    ATN_CS_OFFSETS = 2 * ATN_CS_OFFSET_MAX + 1,
};

/* What a partial is of; every string must not be NULL (may be ""); copied. */
typedef struct atn_cs_identity {
    const char *model;          /* as given to --model */
    const char *revision;       /* the Hub commit, "builtin", or "" when unknown */
    const char *tokenizer;      /* a hash of the vocabulary (hex) */
    const char *precision;      /* "fp32" ... */
    const char *settings;       /* every option that changes a number, as one string */
    const char *corpus;         /* the corpus file's name (no folder) */
    int64_t corpus_lines;       /* lines in the whole corpus file */
    int32_t n_layers, n_heads;
    int32_t top_k;              /* exemplars kept per head, 1..ATN_CS_TOP_MAX */
    const char *version;        /* the attnscope that wrote it: set by atn_corpus_stats_new
                                   (atn_version()), ignored there on input */
    /* Role filters (NULL, "" or "any": none; else one of ATN_CS_ROLES, read from the tokens'
     * atn_token role and special flag: "word" a piece of text that is not special, "special"
     * [CLS]/[SEP]/[PAD]/[MASK] and other special tokens, "cls", "sep", "mask", "pad", "unk" that
     * role).  query_role: only query rows of that role count, in the sums (each sentence's means
     * are over its rows of that role; a sentence with none adds nothing and is not counted as a
     * sentence), the histograms and the exemplars.  key_role: an exemplar's key is the row's
     * heaviest key of that role (the first of equal weights) instead of its heaviest non-special
     * key; nothing else changes.  Part of the identity: a merge refuses other filters. */
    const char *query_role, *key_role;
    /* Grouped-query attention: the model's K/V heads per layer when fewer than n_heads and
     * dividing them (query head h reads K/V head h / (n_heads / n_kv_heads)), else 0 (every
     * head its own, or a partial of before this field).  Part of the identity; what
     * atn_corpus_stats_by_kv_group groups by. */
    int32_t n_kv_heads;
} atn_cs_identity;

#define ATN_CS_ROLES "any, word, special, cls, sep, mask, pad, unk"
/* true when name is "" or one of ATN_CS_ROLES; NULL: false. */
bool atn_cs_role_valid(const char *name);

typedef struct atn_corpus_stats atn_corpus_stats;

/* An empty partial covering no lines.  NULL with ATN_E_INVALID (a bad shape or k, a NULL
 * string) or ATN_E_NOMEM. */
atn_corpus_stats *atn_corpus_stats_new(const atn_cs_identity *id, atn_error *err);
void atn_corpus_stats_free(atn_corpus_stats *cs);   /* NULL: nothing */

/* Adds one sentence, the capture of corpus line `line` (its tokens' text and spans from
 * cap->enc).  A capture of attention on demand (attn NULL, attn_on_demand) has its heads
 * made one at a time into one n x n buffer (atn_capture_head: the same bits); if making one
 * fails (ATN_E_NOMEM) the heads before it are in and the partial must be discarded.  The line must lie after every line added or covered so far, and after
 * lines already covered: ATN_E_INVALID otherwise, as for NULL arguments or a capture with no
 * attention; ATN_E_SHAPE for another model shape; ATN_E_NOMEM.  A capture whose tokens are
 * all masked adds nothing but the sentence. */
atn_status atn_corpus_stats_add(atn_corpus_stats *cs, const atn_capture *cap, int64_t line, atn_error *err);

/* One sentence's figures made row by row, as a forward makes its heads (a head sink,
 * atn_run_options.head_sink), then added to the partial: the same bits as
 * atn_corpus_stats_add of a capture with the same heads, without holding them.  About
 * 32 m bytes a head for m unmasked tokens.
 *   new: for partial cs (borrowed until free: its filters and shape) and the sentence's
 *        encoding (borrowed until free); ATN_E_INVALID (NULL, no tokens, role filters
 *        without the tokens' roles), ATN_E_NOMEM.
 *   add: query row `query` (a token position, 0..n-1; a masked one is skipped) of a head,
 *        row[n] its probabilities over every key; each head's rows in query order.  Out of
 *        range: nothing.  Different heads may be added from different threads at once.
 *   head: every row of one head's att[n][n] (row = query), as add in order.
 *   fold: adds the sentence as corpus line `line` (cs the partial it was made for); refuses
 *        (ATN_E_INVALID, nothing added) a head short of its rows or a line not after every
 *        line added or covered.  Once only.
 *   free: NULL is nothing. */
typedef struct atn_cs_rows atn_cs_rows;
atn_status atn_cs_rows_new(const atn_corpus_stats *cs, const atn_encoding *enc, atn_cs_rows **out, atn_error *err);
void atn_cs_rows_add(atn_cs_rows *r, int32_t layer, int32_t head, int32_t query, const float *row);
void atn_cs_rows_head(atn_cs_rows *r, int32_t layer, int32_t head, const float *att, int32_t n);
atn_status atn_cs_rows_fold(atn_cs_rows *r, atn_corpus_stats *cs, int64_t line, atn_error *err);
void atn_cs_rows_free(atn_cs_rows *r);

/* Marks lines [first, last] (1-based) as covered, with the pass's counts of lines cut and
 * skipped among them.  Must follow every covered line and every added sentence's line must
 * be in some covered range by the time the partial is saved (ATN_E_INVALID otherwise). */
atn_status atn_corpus_stats_cover(atn_corpus_stats *cs, int64_t first, int64_t last, int64_t cut, int64_t skipped,
                                  atn_error *err);

/* Adds `from` into `into`: the same identity (ATN_E_INVALID naming the first field that
 * differs), no line covered by both (ATN_E_INVALID naming the first shared range), both with
 * per-offset sums or both without (ATN_E_INVALID saying which lacks them).  `from` is
 * unchanged. */
atn_status atn_corpus_stats_merge(atn_corpus_stats *into, const atn_corpus_stats *from, atn_error *err);

/* Writes the partial as safetensors (through atn_write_file_atomic: its errors); the bytes
 * depend only on the partial's contents.  ATN_E_NOMEM. */
atn_status atn_corpus_stats_save(const atn_corpus_stats *cs, const char *path, atn_error *err);
/* Reads one back: ATN_E_IO (cannot open), ATN_E_FORMAT (not a partial of this format version,
 * or inconsistent: the message names the file and the tensor or key), ATN_E_NOMEM. */
atn_corpus_stats *atn_corpus_stats_load(const char *path, atn_error *err);

/* true when path looks like a partial: a safetensors header (its first 64 KiB) naming this
 * format, "attnscope-corpus-stats" (what the MIME type's magic matches), without reading the
 * tensors; false for anything else, a missing file or NULL.  Any thread. */
bool atn_corpus_stats_sniff(const char *path);

/* Reading a partial (cs not NULL; strings borrowed). */
const atn_cs_identity *atn_corpus_stats_identity(const atn_corpus_stats *cs);
/* Counts: sentences, tokens, truncated, cut, skipped (each may be NULL). */
void atn_corpus_stats_counts(const atn_corpus_stats *cs, int64_t *sentences, int64_t *tokens, int64_t *truncated,
                             int64_t *cut, int64_t *skipped);
/* The covered ranges, sorted and joined: range i is [first, last], i < count. */
int32_t atn_corpus_stats_ranges(const atn_corpus_stats *cs, int64_t *first, int64_t *last, int32_t cap);
/* The lines of 1..corpus_lines covered by no range, as ranges (as above); returns their
 * count (may exceed cap: only cap written). */
int32_t atn_corpus_stats_missing(const atn_corpus_stats *cs, int64_t *first, int64_t *last, int32_t cap);

/* The means as atn_stats (sum / sentences, induction too, labelled by atn_pattern_classify as
 * atn_stats_finish does): what `stats --corpus` gives for the same lines, to ~1e-16 relative.
 * *out the caller's (atn_stats_free).  ATN_E_NOMEM. */
atn_status atn_corpus_stats_means(const atn_corpus_stats *cs, atn_stats **out, atn_error *err);

/* Each K/V group's means (`stats --from PARTIAL --by-kv-group`), *out [L][n_kv_heads] (malloc'ed, the
 * caller frees), group k of layer l being query heads k·g .. k·g + g - 1 (g = n_heads / n_kv_heads):
 * every statistic and the induction share is the sum of the g heads' exact per-sentence sums over
 * g · sentences, i.e. the count-weighted mean of the heads' means (every head of a partial counts the
 * same sentences, so their plain mean, as atn_stats_by_kv_group takes it for `stats --corpus
 * --by-kv-group`: the two differ by rounding only, ~1e-16 relative); pattern: the label most of the
 * heads have as atn_corpus_stats_means labels them (a tie: the first in the enum).  ATN_E_INVALID
 * (the message says why) for a partial without n_kv_heads or of no sentences; ATN_E_NOMEM. */
atn_status atn_corpus_stats_by_kv_group(const atn_corpus_stats *cs, atn_head_stats **out, atn_error *err);

/* Head (layer, head)'s figures for statistic s (0..ATN_CS_STATS-1): the mean, the standard
 * deviation over sentences (population), min and max (0 when there are no sentences).
 * false for an index out of range. */
bool atn_corpus_stats_spread(const atn_corpus_stats *cs, int32_t layer, int32_t head, int32_t s, double *mean,
                             double *std, double *min, double *max);

/* Head (layer, head)'s histogram: which 0 entropy, 1 distance, 2 sink; *bins set to its bin
 * count.  Borrowed; NULL when out of range. */
const uint64_t *atn_corpus_stats_histogram(const atn_corpus_stats *cs, int32_t layer, int32_t head, int which,
                                           int32_t *bins);

/* Head (layer, head)'s mean weight at offset d (key - query, -ATN_CS_OFFSET_MAX..+ATN_CS_OFFSET_MAX)
 * over the query rows that had a token there, and that row count (each may be NULL).  false for
 * an index out of range or a partial without per-offset sums (*rows 0 then). */
bool atn_corpus_stats_offset(const atn_corpus_stats *cs, int32_t layer, int32_t head, int32_t d, double *mean,
                             int64_t *rows);
/* true when the partial has per-offset sums (every partial made by this attnscope). */
bool atn_corpus_stats_has_offsets(const atn_corpus_stats *cs);

/* What a label rests on (atn_corpus_stats_label_info), for a caller that words it itself (the
 * window, translated).  Which fields are set depends on kind:
 *   INDUCTION    value = mean induction share, sentences
 *   PREVIOUS, NEXT, SELF   value = mean weight, value2 = its sd over sentences, sentences
 *   POSITIONAL   value = mean weight at `offset` (|offset| >= 2), rows = rows with a token there
 *   SINK         value = share of query rows with >= 0.5 on the first token, rows
 *   DELIMITER    value = mean weight on [SEP], value2 = on punctuation, sentences
 *   LOCAL        with offsets: value = the rows' mean weight within offsets -2..+2 (the five
 *                offsets' sums over the number of query rows), rows = the query rows; without:
 *                value = share of rows with an attention distance below 2, rows
 *   BROAD        value = mean normalised entropy, sentences
 *   MIXED        sentences
 * has_offsets false: the partial has no per-offset sums, so POSITIONAL could not be tested. */
typedef enum atn_cs_label_kind {
    ATN_CS_LABEL_INDUCTION, ATN_CS_LABEL_PREVIOUS, ATN_CS_LABEL_NEXT, ATN_CS_LABEL_SELF, ATN_CS_LABEL_POSITIONAL,
    ATN_CS_LABEL_SINK, ATN_CS_LABEL_DELIMITER, ATN_CS_LABEL_LOCAL, ATN_CS_LABEL_BROAD, ATN_CS_LABEL_MIXED,
} atn_cs_label_kind;

typedef struct atn_cs_label_info {
    atn_cs_label_kind kind;
    const char *label;          /* static English name: "induction", "previous token", ... */
    double value, value2;
    int32_t offset;             /* POSITIONAL only */
    int64_t sentences, rows;
    bool has_offsets;
} atn_cs_label_info;

/* Head (layer, head)'s label read off the corpus evidence, tested in this order:
 *   "induction"   the mean induction share is >= 0.5 and above the mean weights on the previous
 *                 and next token and itself (atn_pattern_classify's rule)
 *   "previous token" / "next token" / "self"   the largest mean weight on it is >= 0.5
 *   "sink"        half or more of all query rows put >= 0.5 on the first token (sink histogram)
 *   "delimiter"   mean weight on [SEP] plus punctuation >= 0.5
 *   "positional"  (per-offset sums only) the largest mean weight at one offset d, 2 <= |d| <= 8,
 *                 among the offsets where a quarter or more of the query rows have a token, is
 *                 >= 0.5: the head looks a fixed distance back or ahead
 *   "local window" with per-offset sums: the rows' mean weight within offsets -2..+2 is >= 0.7;
 *                 without: 70% or more of the rows have an attention distance below 2 tokens
 *   "broad"       mean normalised entropy >= 0.75
 *   "mixed"       none of these.
 * false for an index out of range or a partial of no sentences. */
bool atn_corpus_stats_label_info(const atn_corpus_stats *cs, int32_t layer, int32_t head, atn_cs_label_info *info);

/* The label of atn_corpus_stats_label_info (static), with its evidence worded in English into
 * why (size bytes; may be NULL with size 0), e.g. "mean weight 0.912 on the token 3 before the
 * query (offset -3) over 1234 query rows"; a partial without per-offset sums adds "(no per-offset
 * sums in this partial: positional labels not tested)".  NULL as label_info's false. */
const char *atn_corpus_stats_label(const atn_corpus_stats *cs, int32_t layer, int32_t head, char *why,
                                   size_t size);

typedef struct atn_cs_exemplar {
    int64_t line;                  /* 1-based corpus line */
    int32_t query, key;            /* token positions in the sentence */
    float weight;
    int32_t query_start, query_end, key_start, key_end;   /* byte spans in the line; -1 when none */
    char query_text[ATN_CS_TEXT_MAX], key_text[ATN_CS_TEXT_MAX];
} atn_cs_exemplar;

/* Head (layer, head)'s exemplars, best first: returns their count (<= k), *out borrowed
 * (NULL when out of range or none). */
int32_t atn_corpus_stats_exemplars(const atn_corpus_stats *cs, int32_t layer, int32_t head,
                                   const atn_cs_exemplar **out);

/* The total order of exemplars: negative when a comes first (heavier; then earlier). */
int atn_cs_exemplar_compare(const atn_cs_exemplar *a, const atn_cs_exemplar *b);

#endif
