/* What the files of the tokenizer.json pipeline share (internal to them; the engine's
 * other files use tokenize/tok-pipeline.h).  The pipeline is cut along the seams of the
 * Rust tokenizers library:
 *
 *   tok-normalized.c     the text with its alignments (NormalizedString) and patterns
 *   tok-normalizers.c    the normalizers (the normalizers module)
 *   tok-pretokenizers.c  the splits and the pre-tokenizers (PreTokenizedString, the
 *                        pre_tokenizers module)
 *   tok-postprocess.c    the post-processors (the processors module)
 *   tok-pipeline-json.c  reading tokenizer.json: the parse_* of each component, the file
 *   tok-pipeline.c       the pipeline: added tokens, one sequence, encode, the vocabulary side
 *
 * Functions shared between these files are named atn_tp_* (they cannot be static); the
 * types keep their short names, since only these files see them. */
#ifndef ATN_TOK_PIPELINE_PRIVATE_H
#define ATN_TOK_PIPELINE_PRIVATE_H

#ifndef PCRE2_CODE_UNIT_WIDTH
#define PCRE2_CODE_UNIT_WIDTH 8
#endif
#include "tokenize/tok-pipeline.h"

#include "tokenize/tok-model.h"
#include "tokenize/unicode.h"

#include <cjson/cJSON.h>
#include <pcre2.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- characters, text with alignments, patterns (tok-normalized.c) ------------------ */

/* Classes that need the general category, asked of PCRE2's Unicode tables. */
enum { CLS_MARK, CLS_WORD, CLS_UNASSIGNED, N_CLS };


/* Rust's char::is_whitespace (the White_Space property). */
bool atn_tp_is_space(uint32_t c);
/* Whether cp is in class which (CLS_MARK: \p{M}; CLS_WORD: the library's \w; CLS_UNASSIGNED:
 * \p{Cn}, noncharacters such as U+FFFF included). */
bool atn_tp_cls_is(int which, uint32_t cp);

typedef struct nstr {
    atn_uchar *v;
    size_t n, cap;
    int32_t shift;    /* where this piece starts in the original (offsets_original().0) */
    int32_t added;    /* the added token's id when the piece is one, else -1 */
} nstr;

/* One character of a transformation: cp, and how many old characters it consumes (0: an
 * insertion). */
typedef struct titem {
    uint32_t cp;
    int32_t consume;
} titem;

typedef struct tbuf {
    titem *v;
    size_t n, cap;
    atn_uchar *spare;     /* a block transform writes into, then trades for the old one */
    size_t spare_cap;
    size_t limit;         /* while normalizing: the most characters a piece may become (0: none) */
    bool over;            /* a push went past limit */
} tbuf;

/* UTF-8 of s with the byte offset of each character (offs[n] = total). */
typedef struct u8buf {
    char *b;
    int32_t *offs;
    size_t cap_b, cap_o, len;
} u8buf;

typedef struct pattern {
    pcre2_code *re;   /* NULL: an empty string pattern (never matches) */
} pattern;

/* A found range [a, b) in characters and whether it is a match. */
typedef struct mrange {
    size_t a, b;
    bool match;
} mrange;

typedef struct mbuf {
    mrange *v;
    size_t n, cap;
} mbuf;

bool atn_tp_ns_reserve(nstr *s, size_t extra);
bool atn_tp_tb_push(tbuf *t, uint32_t cp, int32_t consume);
/* An item that only removes n old characters, writing none. */
bool atn_tp_tb_skip(tbuf *t, int32_t n);
/* Rewrites s from the items of t, after skipping `initial` old characters: the library's
 * transform(dest, initial_offset).  Every change to a text goes through it. */
bool atn_tp_transform(nstr *s, tbuf *t, size_t initial);
/* Keeps the characters keep() accepts (NormalizedString::filter). */
bool atn_tp_ns_filter(nstr *s, bool (*keep)(uint32_t, const void *), const void *ctx, tbuf *t);
/* The UTF-8 of s into u, with the byte offset of each character. */
bool atn_tp_ns_utf8(const nstr *s, u8buf *u);
/* The index of the character holding byte off (the last one starting at or before it). */
size_t atn_tp_char_holding(const u8buf *u, size_t n_chars, int32_t off);
/* The index of the first character starting at or after byte off. */
size_t atn_tp_char_at(const u8buf *u, size_t n_chars, int32_t off);
bool atn_tp_mb_push(mbuf *m, size_t a, size_t b, bool match);
/* Pattern::find_matches for a regex (re NULL: never matches), in characters of s (u its
 * UTF-8); *mdp is match data made on first use, the caller's to free. */
bool atn_tp_re_find(const pcre2_code *re, const nstr *s, const u8buf *u, mbuf *m,
                    pcre2_match_data **mdp);
/* Pattern::find_matches for a character predicate: each accepted character alone. */
bool atn_tp_fn_find(bool (*pred)(uint32_t), const nstr *s, mbuf *m);

/* ---- the components --------------------------------------------------------------- */

enum {
    N_BERT, N_NFC, N_NFD, N_NFKC, N_NFKD, N_LOWER, N_STRIP_ACCENTS, N_REPLACE, N_PREPEND,
    N_STRIP, N_PRECOMPILED, N_SEQUENCE
};

typedef struct normalizer {
    int type;
    bool clean_text, chinese, lowercase;
    int strip_accents;   /* -1: follows lowercase */
    bool strip_left, strip_right;
    pattern pat;
    char *content;       /* Replace's content, Prepend's prepend */
    void *charsmap;
    struct normalizer *kids;
    int n_kids;
} normalizer;

enum { B_REMOVED, B_ISOLATED, B_MERGED_PREV, B_MERGED_NEXT, B_CONTIGUOUS };

enum {
    P_BERT, P_BYTELEVEL, P_METASPACE, P_WHITESPACE, P_WHITESPACE_SPLIT, P_PUNCT, P_DIGITS,
    P_SPLIT, P_SEQUENCE
};

enum { PREPEND_ALWAYS, PREPEND_FIRST, PREPEND_NEVER };

typedef struct pretok {
    int type;
    bool add_prefix_space, use_regex, individual_digits, invert, split;
    int behavior;
    int prepend_scheme;
    uint32_t replacement;
    pattern pat;
    struct pretok *kids;
    int n_kids;
} pretok;

enum { PP_BERT, PP_ROBERTA, PP_TEMPLATE, PP_BYTELEVEL, PP_SEQUENCE };

typedef struct tpl_piece {
    bool special;
    int seq;            /* 0 A, 1 B */
    int type_id;
    int32_t *ids;       /* a special token's ids */
    char **tokens;
    int n_ids;
} tpl_piece;

typedef struct postproc {
    int type;
    int32_t cls_id, sep_id;
    char *cls, *sep;
    bool trim_offsets, add_prefix_space;
    tpl_piece *single, *pair;
    int n_single, n_pair;
    struct postproc *kids;
    int n_kids;
} postproc;

typedef struct added_tok {
    char *content;
    size_t len;
    int32_t id;
    bool special, lstrip, rstrip, normalized, single_word;
    char *norm_content;   /* content after the normalizer (normalized tokens) */
    size_t norm_len;
} added_tok;

/* The added tokens' texts as a byte trie (AddedVocabulary's split tries): a match at each
 * position walks at most the longest token's length, whatever the number of tokens (the
 * earlier loop over every token at every position took 15-22 s for 20k tokens on 100k
 * characters).  Children: the root's by byte, the others as a sibling list. */
typedef struct trie_node {
    int32_t child, sibling;   /* -1: none */
    int32_t tok;              /* the added token ending here (first in file order), or -1 */
    uint8_t byte;
} trie_node;

typedef struct added_trie {
    trie_node *v;
    size_t n, cap;
    int32_t root[256];        /* the node for each first byte, or -1 */
} added_trie;

typedef struct pipeline {
    atn_tokenizer base;
    char *origin;
    normalizer *norm;
    pretok *pre;
    postproc *post;
    atn_tok_model *model;
    added_tok *added;    /* special tokens first, then the others, each in file order */
    int n_added;
    int32_t *by_id;      /* [n_added] indices into added sorted by id (file order on ties) */
    added_trie trie[2];  /* [normalized]: contents (normalized ones: after the normalizer) */
    int32_t vocab_size;
    int32_t role_id[ATN_TOKEN_UNK + 1];
    bool byte_level, metaspace;
    uint32_t meta_char;
    char *wp_prefix;     /* WordPiece's continuing_subword_prefix */
    char **surface;      /* [n_surface] lazily: surfaces, NULL until computed */
    int32_t n_surface;   /* the model's vocabulary size (added ids past it have none) */
    bool *partial;
    pthread_once_t surf_once;
    bool surf_ok;
} pipeline;

extern const atn_tokenizer_ops atn_tp_pipeline_ops;

/* What a run of the pipeline works in: scratch buffers reused from piece to piece. */
typedef struct work {
    const pipeline *pl;
    tbuf t;
    u8buf u;
    mbuf m;
    atn_tok_pieces pieces;
    pcre2_match_data *md;   /* one pair is all atn_tp_re_find reads */
    atn_error *err;
    /* token texts that are not vocabulary entries (a Unigram unk shows the text it covers),
       owned here until the encoding copies them */
    char **texts;
    size_t n_texts, cap_texts;
    size_t norm_budget;     /* characters the memory budget allows a normalized piece; 0 until asked */
    bool cancelled;         /* a loop that answers only ok / not ok saw the cancel scope say stop */
} work;

/* ---- normalizers (tok-normalizers.c) ----------------------------------------------- */

/* Runs normalizer nz on s (ATN_E_NOMEM, or the charsmap's error).  Its output is bounded:
 * atn_tp_normalize_bounded sets w->t.limit to atn_tp_normalize_limit(s->n) first, and a
 * piece that would grow past it is ATN_E_INVALID ("the normalizer makes more than ...":
 * nested Replace rules "a" -> "aa" doubled it 24 times, 1-5 GB in 17 s). */
atn_status atn_tp_normalize(const normalizer *nz, nstr *s, work *w);
enum { ATN_TP_NORM_GROWTH = 64, ATN_TP_NORM_SLACK = 1024 };
size_t atn_tp_normalize_limit(size_t n_chars, work *w);
atn_status atn_tp_normalize_bounded(const normalizer *nz, nstr *s, work *w);
/* Prepends text (NormalizedString::prepend): the first new character replaces the old
 * first one, which comes back as an insertion. */
bool atn_tp_ns_prepend(nstr *s, const char *text, tbuf *t);
void atn_tp_free_normalizer(normalizer *n);   /* NULL is a no-op */

/* ---- splits and pre-tokenizers (tok-pretokenizers.c) -------------------------------- */

typedef struct splits {
    nstr *v;
    size_t n, cap;
} splits;

void atn_tp_splits_free(splits *sp);
/* Appends a copy of s[a, b) (dropped when empty, as PreTokenizedString::split drops
 * empty pieces). */
bool atn_tp_splits_push_slice(splits *sp, const nstr *s, size_t a, size_t b, int32_t added);
/* One pre-tokenizer over every piece of sp that is not an added token. */
atn_status atn_tp_pre_tokenize(const pretok *pt, splits *sp, work *w);
void atn_tp_free_pretok(pretok *p);   /* NULL is a no-op */

/* ---- tokens of one sequence (tok-pipeline.c) ---------------------------------------- */

typedef struct etok {
    int32_t id;
    int32_t start, end;
    int32_t word;
    int32_t type_id;
    bool special;        /* added by the post-processor */
    bool added;          /* an added token found in the text */
    bool continuation;
    const char *text;    /* borrowed: the token's vocabulary text */
    int32_t segment;     /* 0 text, 1 pair, -1 added by the post-processor */
    int32_t lead, trail; /* characters of its text, front and back, that are 'Ġ' or white
                            space (what ByteLevel's offset trimming looks at) */
} etok;

typedef struct ebuf {
    etok *v;
    size_t n, cap;
} ebuf;

/* lead and trail of a token whose text is s */
void atn_tp_count_trim(const char *s, int32_t *lead, int32_t *trail);
bool atn_tp_eb_push(ebuf *e, etok t);
/* The text of id: an added token's content, else the model's entry, else "". */
const char *atn_tp_id_text(const pipeline *pl, int32_t id);

/* ---- post-processors (tok-postprocess.c) -------------------------------------------- */

/* How many tokens pp adds to one sequence or a pair (0 for NULL). */
int atn_tp_added_count(const postproc *pp, bool pair);
/* Runs processor pp on the n_enc (1 or 2) encodings; src[i] is encoding i's text.
 * false when out of memory. */
bool atn_tp_post_process(const pipeline *pl, const postproc *pp, ebuf *enc, int n_enc,
                         const char *const src[2]);
void atn_tp_free_postproc(postproc *p);   /* NULL is a no-op */

/* ---- reading tokenizer.json (tok-pipeline-json.c) ----------------------------------- */

/* Where messages point: the file, and the error to fill. */
typedef struct jctx {
    const char *file;
    atn_error *err;
} jctx;

/* Fills pt from the pre-tokenizer object o (JSON path `path`, depth levels of Sequence
 * deep); on error what pt holds is freed by atn_tp_free_pretok. */
atn_status atn_tp_parse_pretok(const jctx *j, const cJSON *o, const char *path, pretok *pt,
                               int depth);

/* ---- the pipeline (tok-pipeline.c) -------------------------------------------------- */

/* The normalized form of each normalized added token (refresh_added_tokens), then
 * atn_tp_index_added. */
atn_status atn_tp_normalize_added(pipeline *pl, atn_error *err);
/* Builds by_id and the two tries from the added tokens (ATN_E_NOMEM). */
atn_status atn_tp_index_added(pipeline *pl, atn_error *err);
/* The index into added of the token with this id (the first in file order), or -1. */
int atn_tp_added_of(const pipeline *pl, int32_t id);
/* The roles the file itself shows: the post-processor's cls/sep, the model's unk, and
 * added tokens with the usual names. */
void atn_tp_default_roles(pipeline *pl);
/* Frees the pipeline (the tokenizer's ops->free; NULL is a no-op). */
void atn_tp_pipeline_free(atn_tokenizer *base);

#endif
