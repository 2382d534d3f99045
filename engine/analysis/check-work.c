/* "Check my work" (check-work.h): the first of a student's numbers that differs from the
 * trace's, with a guess at the slip behind it. */
#include "check-work.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

double atn_check_tolerance(int32_t decimals) {
    if (decimals < 0)
        decimals = 0;
    if (decimals > 12)
        decimals = 12;
    return pow(10.0, -decimals) * (1.0 + 1e-9);
}

bool atn_check_parse_number(const char *text, double *value, int32_t *decimals) {
    if (!text)
        return false;
    const char *p = text;
    while (*p == ' ' || *p == '\t')
        p++;
    bool neg = false;
    if (*p == '-' || *p == '+') {
        neg = *p == '-';
        p++;
    } else if (!strncmp(p, "\xe2\x88\x92", 3)) {   /* U+2212 MINUS SIGN */
        neg = true;
        p += 3;
    }
    /* every digit into one integer, divided once by 10^decimals: 0.325 is 325 / 1000, the
       double nearest 0.325 (what the literal is), whatever the locale's decimal point */
    double v = 0;
    int32_t digits = 0, dec = 0;
    while (*p >= '0' && *p <= '9') {
        v = v * 10 + (*p++ - '0');
        digits++;
    }
    if (*p == '.' || *p == ',') {
        p++;
        while (*p >= '0' && *p <= '9') {
            v = v * 10 + (*p++ - '0');
            dec++;
        }
    }
    if (dec > 0 && dec <= 17)
        v /= pow(10.0, dec);
    while (*p == ' ' || *p == '\t')
        p++;
    if (*p || digits + dec == 0 || dec > 17)
        return false;
    *value = neg ? -v : v;
    *decimals = dec;
    return true;
}

/* The trace's numbers of step s, and their count. */
static const double *step_values(const atn_trace *t, atn_check_step s, int32_t *len) {
    switch (s) {
    case ATN_CHECK_SCORES: return *len = t->n, t->scores;
    case ATN_CHECK_SCALED: return *len = t->n, t->scaled;
    case ATN_CHECK_WEIGHTS: return *len = t->n, t->weights;
    case ATN_CHECK_OUTPUT: return *len = t->d_head, t->output;
    default: return *len = 0, NULL;
    }
}

/* The softmax weight j of x [n] over the keys the trace did not mask. */
static double softmax_at(const atn_trace *t, const double *x, double factor, int32_t j) {
    double m = -INFINITY, sum = 0;
    for (int32_t k = 0; k < t->n; k++)
        if (t->mask_term[k] == 0.0 && x[k] * factor > m)
            m = x[k] * factor;
    for (int32_t k = 0; k < t->n; k++)
        if (t->mask_term[k] == 0.0)
            sum += exp(x[k] * factor - m);
    return t->mask_term[j] == 0.0 && sum > 0 ? exp(x[j] * factor - m) / sum : 0.0;
}

static bool near(double a, double b, double tol) { return fabs(a - b) <= tol; }

/* A guess at what the student did for entry e of step s (exact: the trace's value). */
static atn_check_slip guess_slip(const atn_trace *t, const atn_check_entry *e, const atn_check_entry *all,
                                 int32_t count, double tol) {
    int32_t j = e->index;
    if (e->step == ATN_CHECK_SCALED && t->scale != 1.0 && near(e->value, t->scores[j], tol))
        return ATN_SLIP_UNSCALED;
    if (e->step == ATN_CHECK_WEIGHTS) {
        if (t->scale != 1.0 && near(e->value, softmax_at(t, t->scores, 1.0, j), tol))
            return ATN_SLIP_SOFTMAX_UNSCALED;
        double sum = 0;
        for (int32_t k = 0; k < t->n; k++)
            sum += t->mask_term[k] == 0.0 ? t->scaled[k] : 0.0;
        if (sum != 0 && near(e->value, t->scaled[j] / sum, tol))
            return ATN_SLIP_NO_EXP;
        /* the softmax of the student's own scaled scores, when they typed every one */
        double *own = calloc((size_t)t->n, sizeof *own);
        int32_t have = 0;
        for (int32_t i = 0; own && i < count; i++)
            if (all[i].step == ATN_CHECK_SCALED && all[i].index >= 0 && all[i].index < t->n)
                own[all[i].index] = all[i].value, have++;
        bool follows = own && have >= t->n && near(e->value, softmax_at(t, own, 1.0, j), tol);
        free(own);
        if (follows)
            return ATN_SLIP_OWN_INPUTS;
    }
    if (e->step == ATN_CHECK_OUTPUT) {   /* sum_j a_j v_j with the student's own weights */
        double o = 0;
        int32_t have = 0;
        for (int32_t i = 0; i < count; i++)
            if (all[i].step == ATN_CHECK_WEIGHTS && all[i].index >= 0 && all[i].index < t->n) {
                o += all[i].value * t->values[(size_t)all[i].index * t->d_head + j];
                have++;
            }
        if (have >= t->n && near(e->value, o, tol))
            return ATN_SLIP_OWN_INPUTS;
    }
    return ATN_SLIP_NONE;
}

atn_status atn_check_work(const atn_trace *t, const atn_check_entry *entries, int32_t count, atn_check_result *out,
                          atn_error *err) {
    if (!t || !out || (count > 0 && !entries))
        return atn_error_set(err, ATN_E_INVALID, "check my work: no trace, no result or no numbers");
    memset(out, 0, sizeof *out);
    const atn_check_entry *first = NULL;
    for (int32_t i = 0; i < count; i++) {
        const atn_check_entry *e = &entries[i];
        int32_t len;
        const double *v = step_values(t, e->step, &len);
        if (!v || e->index < 0 || e->index >= len || !isfinite(e->value))
            continue;
        out->checked++;
        if (near(e->value, v[e->index], atn_check_tolerance(e->decimals)))
            continue;
        if (!first || e->step < first->step || (e->step == first->step && e->index < first->index))
            first = e;
    }
    if (first) {
        int32_t len;
        const double *v = step_values(t, first->step, &len);
        out->differs = true;
        out->step = first->step;
        out->index = first->index;
        out->typed = first->value;
        out->exact = v[first->index];
        out->tolerance = atn_check_tolerance(first->decimals);
        out->slip = guess_slip(t, first, entries, count, out->tolerance);
    }
    return ATN_OK;
}
