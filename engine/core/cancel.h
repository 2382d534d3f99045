/* A cancel hook for loops whose functions take no progress parameter: the tokenizers'
 * (BPE merges, WordPiece's longest match, Unigram's Viterbi lattice, the normalizers, the
 * added-token trie, the per-piece loop of an encoding, vocabulary and merges loading).
 *
 * The entry point that was given a progress callback (atn_model_encode_cancellable,
 * atn_text_tokenizer_encode_cancellable, the Hugging Face loader's tokenizer stage) enters a
 * scope for its thread around the work; the loops call atn_cancel_poll(), which counts
 * calls and asks the callback once every ATN_CANCEL_EVERY of them (so a poll costs an
 * increment).  Once the callback has said stop, every later poll in the scope says stop at
 * once, and the loop ends with atn_cancel_error (ATN_E_CANCELLED).  Scopes nest (an inner
 * one hides the outer until it leaves).  Thread-local: each thread its own scope; a poll on
 * a thread without one never stops.  Engine-internal. */
#ifndef ATN_CANCEL_H
#define ATN_CANCEL_H

#include "attnscope.h"

#include <stdbool.h>
#include <stdint.h>

enum { ATN_CANCEL_EVERY = 4096 };

typedef struct atn_cancel_scope {
    atn_progress_fn fn;          /* may be NULL: the scope never stops */
    void *user_data;
    double fraction;             /* what each ask reports */
    atn_stage stage;
    uint32_t tick;
    bool stopped;
    struct atn_cancel_scope *outer;
} atn_cancel_scope;

/* Makes s (the caller's, living until atn_cancel_leave) this thread's scope. */
void atn_cancel_enter(atn_cancel_scope *s, atn_progress_fn fn, void *user_data, double fraction,
                      atn_stage stage);
/* Restores the scope that was current before s. */
void atn_cancel_leave(atn_cancel_scope *s);

/* true: stop now (the callback said so, at this poll or an earlier one in the scope). */
bool atn_cancel_poll(void);
/* The same, asking the callback at once (before a single long step). */
bool atn_cancel_now(void);

/* ATN_E_CANCELLED, "cancelled while WHAT" into err. */
atn_status atn_cancel_error(atn_error *err, const char *what);

#endif
