/* "Check my work" (engine/analysis/check-work.c) on the worked example's head 0, query 0,
 * whose numbers are worked by hand in /work/shared/seeds/README.md: scores [1.46, 1.71, 0.38],
 * scaled [1.0324, 1.2092, 0.2687], softmax [0.3760, 0.4487, 0.1752], output [0.8470, 0.8722].
 * The textbook's softmax [0.325, 0.421, 0.254] is the first differing step; the tolerance
 * follows the typed decimals; the slips are recognised. */
#include "check.h"
#include "attnscope.h"
#include "check-work.h"

#include <math.h>
#include <string.h>

static atn_check_entry E(atn_check_step s, int32_t i, const char *text) {
    atn_check_entry e = {s, i, NAN, 0};
    CHECK_MSG(atn_check_parse_number(text, &e.value, &e.decimals), "parse %s", text);
    return e;
}

static void test_parse(void) {
    double v;
    int32_t d;
    CHECK(atn_check_parse_number("0.325", &v, &d) && v == 0.325 && d == 3);
    CHECK(atn_check_parse_number(" 0,4487 ", &v, &d) && fabs(v - 0.4487) < 1e-15 && d == 4);
    CHECK(atn_check_parse_number("\xe2\x88\x92" "1.5", &v, &d) && v == -1.5 && d == 1);
    CHECK(atn_check_parse_number("-2", &v, &d) && v == -2 && d == 0);
    CHECK(atn_check_parse_number(".5", &v, &d) && v == 0.5 && d == 1);
    CHECK(!atn_check_parse_number("", &v, &d) && !atn_check_parse_number("abc", &v, &d));
    CHECK(!atn_check_parse_number("1.2.3", &v, &d) && !atn_check_parse_number("-", &v, &d));
    CHECK(!atn_check_parse_number(NULL, &v, &d));
    CHECK(fabs(atn_check_tolerance(3) - 0.001) < 1e-11 && fabs(atn_check_tolerance(0) - 1.0) < 1e-8);
}

int main(void) {
    test_parse();
    atn_error err = {0};
    atn_model *m = atn_model_open("worked-example", NULL, NULL, &err);
    CHECK_MSG(m != NULL, "%s", err.message);
    atn_encoding *enc = NULL;
    CHECK(atn_model_encode_toy(m, NULL, &enc, &err) == ATN_OK);
    atn_run *run = atn_run_new(m);
    CHECK(atn_run_forward(run, enc, NULL, &err) == ATN_OK);
    atn_trace *t = NULL;
    CHECK(atn_trace_compute(m, atn_run_capture(run), 0, 0, 0, &t, &err) == ATN_OK);
    atn_check_result r;
    /* the book: its scores and output right, its softmax not */
    atn_check_entry book[] = {
        E(ATN_CHECK_OUTPUT, 0, "0.847"), E(ATN_CHECK_OUTPUT, 1, "0.872"),
        E(ATN_CHECK_SCORES, 0, "1.46"), E(ATN_CHECK_SCORES, 1, "1.71"), E(ATN_CHECK_SCORES, 2, "0.38"),
        E(ATN_CHECK_SCALED, 0, "1.0324"), E(ATN_CHECK_SCALED, 1, "1.2092"), E(ATN_CHECK_SCALED, 2, "0.2687"),
        E(ATN_CHECK_WEIGHTS, 2, "0.254"), E(ATN_CHECK_WEIGHTS, 1, "0.421"), E(ATN_CHECK_WEIGHTS, 0, "0.325"),
    };
    CHECK(atn_check_work(t, book, 11, &r, &err) == ATN_OK);
    CHECK(r.checked == 11 && r.differs && r.step == ATN_CHECK_WEIGHTS && r.index == 0);
    CHECK_NEAR(r.typed, 0.325, 1e-15);
    CHECK_NEAR(r.exact, 0.3760, 5e-5);
    CHECK_NEAR(r.tolerance, 0.001, 1e-9);
    CHECK(r.slip == ATN_SLIP_NONE);
    /* the correct softmax, 3 or 4 decimals, rounded or truncated: nothing differs */
    atn_check_entry right[] = {E(ATN_CHECK_WEIGHTS, 0, "0.3760"), E(ATN_CHECK_WEIGHTS, 1, "0.449"),
                               E(ATN_CHECK_WEIGHTS, 2, "0.175"), E(ATN_CHECK_OUTPUT, 1, "0.8722")};
    CHECK(atn_check_work(t, right, 4, &r, &err) == ATN_OK && r.checked == 4 && !r.differs);
    /* 4 decimals are held to 0.0001: 0.3765 is off */
    atn_check_entry close4[] = {E(ATN_CHECK_WEIGHTS, 0, "0.3765")};
    CHECK(atn_check_work(t, close4, 1, &r, &err) == ATN_OK && r.differs);
    /* 1/sqrt(d_k) left out: the scaled step, recognised */
    atn_check_entry unscaled[] = {E(ATN_CHECK_SCALED, 1, "1.71"), E(ATN_CHECK_WEIGHTS, 0, "0.3")};
    CHECK(atn_check_work(t, unscaled, 2, &r, &err) == ATN_OK && r.differs && r.step == ATN_CHECK_SCALED &&
          r.index == 1 && r.slip == ATN_SLIP_UNSCALED);
    /* softmax of the unscaled scores [1.46, 1.71, 0.38]: 0.3812 0.4894 0.1294 (by hand) */
    atn_check_entry smx[] = {E(ATN_CHECK_WEIGHTS, 1, "0.4894")};
    CHECK(atn_check_work(t, smx, 1, &r, &err) == ATN_OK && r.slip == ATN_SLIP_SOFTMAX_UNSCALED);
    /* no exp: 1.0324 / 2.5103 = 0.4113 */
    atn_check_entry noexp[] = {E(ATN_CHECK_WEIGHTS, 0, "0.4113")};
    CHECK(atn_check_work(t, noexp, 1, &r, &err) == ATN_OK && r.slip == ATN_SLIP_NO_EXP);
    /* an output that follows from the student's own (wrong) weights: 0.325 v0 + 0.421 v1 + 0.254 v2 */
    atn_check_entry own[] = {E(ATN_CHECK_WEIGHTS, 0, "0.325"), E(ATN_CHECK_WEIGHTS, 1, "0.421"),
                             E(ATN_CHECK_WEIGHTS, 2, "0.254"), E(ATN_CHECK_OUTPUT, 0, "0.8")};
    double o0 = 0.325 * 0.5 + 0.421 * 1.0 + 0.254 * 1.2;   /* v_j[0] = X[j][0] */
    CHECK_NEAR(o0, 0.8884, 1e-4);
    own[3].value = 0.888, own[3].decimals = 3;
    own[0].value = 0.3760, own[0].decimals = 4;   /* weights 1 and 2 still off: weights step first */
    CHECK(atn_check_work(t, own, 4, &r, &err) == ATN_OK && r.step == ATN_CHECK_WEIGHTS && r.index == 1);
    /* out of range and NULL */
    atn_check_entry far[] = {{ATN_CHECK_WEIGHTS, 7, 0.1, 1}, {ATN_CHECK_OUTPUT, -1, 0.1, 1}};
    CHECK(atn_check_work(t, far, 2, &r, &err) == ATN_OK && r.checked == 0 && !r.differs);
    CHECK(atn_check_work(NULL, far, 2, &r, &err) == ATN_E_INVALID);
    CHECK(atn_check_work(t, NULL, 0, &r, &err) == ATN_OK && !r.differs);
    atn_trace_free(t);
    atn_run_free(run);
    atn_encoding_free(enc);
    atn_model_free(m);
    return check_summary("test-check-work");
}
