/* attnscope bench --corpus N (app/bench-corpus.c). */
#ifndef ATN_BENCH_CORPUS_H
#define ATN_BENCH_CORPUS_H

#include "attnscope.h"

#include <stdbool.h>
#include <stdint.h>

/* N sentences of lo..hi tokens (ids from seed) through one forward each and through stacks;
 * prints the table (or JSON); dump_ids (may be NULL) gets the sentences' ids, one line each.
 * Returns a CLI exit code. */
int bench_corpus(const atn_model *model, const char *title, int64_t count, int32_t lo, int32_t hi, uint64_t seed,
                 const atn_run_options *opts, const char *dump_ids, bool json);

#endif
