/* "Check my work": a student's own numbers for a trace's steps compared with the trace's, in
 * the order the trace computes them, to find the first step where theirs differ (the window's
 * Trace view explains it; engine/analysis/check-work.c).  Pure functions, no allocation:
 * any thread, any number of calls at once. */
#ifndef ATN_CHECK_WORK_H
#define ATN_CHECK_WORK_H

#include "attnscope.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The numbers a student can check, in the trace's order. */
typedef enum atn_check_step {
    ATN_CHECK_SCORES = 0,   /* s_j = q_i . k_j           (atn_trace.scores, [n]) */
    ATN_CHECK_SCALED,       /* s_j / sqrt(d_k)           (atn_trace.scaled, [n]) */
    ATN_CHECK_WEIGHTS,      /* the softmax a_j           (atn_trace.weights, [n]) */
    ATN_CHECK_OUTPUT,       /* o[c] = sum_j a_j v_j[c]   (atn_trace.output, [d_head]) */
    ATN_CHECK_STEP_COUNT
} atn_check_step;

/* What a differing number looks like it came from (a guess, for the explanation). */
typedef enum atn_check_slip {
    ATN_SLIP_NONE = 0,       /* nothing recognised: an arithmetic slip */
    ATN_SLIP_UNSCALED,       /* a scaled score equal to the unscaled one (1/sqrt(d_k) left out) */
    ATN_SLIP_SOFTMAX_UNSCALED,   /* a weight equal to the softmax of the unscaled scores */
    ATN_SLIP_NO_EXP,         /* a weight equal to scaled_j / sum of the scaled scores (no exp) */
    ATN_SLIP_OWN_INPUTS,     /* a value that follows from the student's own earlier numbers
                                (so the slip is in those, already reported, or in rounding) */
} atn_check_slip;

/* One number the student typed: step, index (key j, or component c for the output), the
 * value and the decimals it was typed with (0.325: 3). */
typedef struct atn_check_entry {
    atn_check_step step;
    int32_t index;
    double value;
    int32_t decimals;
} atn_check_entry;

typedef struct atn_check_result {
    int32_t checked;         /* entries compared (every valid one) */
    bool differs;            /* some typed number is off by more than its tolerance */
    /* the first differing one, in the trace's order (step, then index) */
    atn_check_step step;
    int32_t index;
    double typed, exact;
    double tolerance;        /* one unit of the last typed decimal: 10^-decimals */
    atn_check_slip slip;
} atn_check_result;

/* The tolerance of a number typed with `decimals` decimals: one unit of its last decimal
 * (0.325 -> 0.001), so a rounded or truncated value, or one carried through rounded
 * intermediate numbers, agrees; decimals < 0 reads as 0, > 12 as 12. */
double atn_check_tolerance(int32_t decimals);

/* Parses one typed number: an optional sign ('-' or U+2212), digits, and '.' or ',' with
 * decimals ("0,325" as typed with a comma keyboard); surrounding spaces allowed.  *value
 * and *decimals on success; false (outputs untouched) for anything else, NULL text too. */
bool atn_check_parse_number(const char *text, double *value, int32_t *decimals);

/* Compares count entries (any order; an index outside the step's length is not counted)
 * with trace and fills *out (zeroed first).  A weight is compared with the trace's weights
 * after any head switch-off, as the trace shows them.  ATN_E_INVALID for NULL trace or out,
 * or NULL entries with count > 0. */
atn_status atn_check_work(const atn_trace *trace, const atn_check_entry *entries, int32_t count,
                          atn_check_result *out, atn_error *err);

#ifdef __cplusplus
}
#endif

#endif
