/* engine/analysis/rollout.c: attention rollout on a 2-layer, 2-head constructed capture, worked by
 * hand, through all layers and through layer 0 only; a layer out of range is refused. */
#include "analysis.h"
#include "check.h"
#include "fake-capture.h"

#include <string.h>

static void test_rollout(void) {
    /* H = 2, n = 2.  Layer 0 heads [[1,0],[0,1]] and [[1,0],[1,0]]: mean [[1,0],[.5,.5]];
     * A'0 = 0.5 A + 0.5 I = [[1,0],[.25,.75]].  Layer 1 heads both [[0,1],[1,0]]:
     * A'1 = [[.5,.5],[.5,.5]].  R = A'1 A'0 = [[.625,.375],[.625,.375]]. */
    static const char *const toks[2] = {"a", "b"};
    static fake f;
    fake_init(&f, 2, 2, 2, toks);
    float l0h0[4] = {1, 0, 0, 1}, l0h1[4] = {1, 0, 1, 0}, l1[4] = {0, 1, 1, 0};
    memcpy(head_of(&f, 0, 0), l0h0, sizeof l0h0);
    memcpy(head_of(&f, 0, 1), l0h1, sizeof l0h1);
    memcpy(head_of(&f, 1, 0), l1, sizeof l1);
    memcpy(head_of(&f, 1, 1), l1, sizeof l1);
    float r[4];
    CHECK(atn_rollout_compute(&f.cap, -1, r, NULL) == ATN_OK);
    float want[4] = {0.625f, 0.375f, 0.625f, 0.375f};
    CHECK_ARRAY_NEAR("rollout", r, want, 4, 1e-7);
    CHECK(atn_rollout_compute(&f.cap, 0, r, NULL) == ATN_OK);
    float want0[4] = {1.0f, 0.0f, 0.25f, 0.75f};
    CHECK_ARRAY_NEAR("rollout layer 0", r, want0, 4, 1e-7);
    atn_error err = {0};
    CHECK(atn_rollout_compute(&f.cap, 2, r, &err) == ATN_E_INVALID);
}

int main(void) {
    test_rollout();
    return check_summary("rollout");
}
