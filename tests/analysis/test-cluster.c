/* engine/analysis/cluster.c: average-linkage merges on points of a line worked by hand (as scipy
 * gives them), and planted blocks that the leaf order keeps contiguous. */
#include "analysis.h"
#include "check.h"

#include <math.h>

static void test_cluster(void) {
    /* points 0, 1, 3, 7 on a line, average linkage by hand:
     * {0,1} at 1; d({0,1},3) = (3+2)/2 = 2.5, d({0,1},7) = 6.5, d(3,7) = 4 -> {0,1,3} at 2.5;
     * d({0,1,3},7) = (7+6+4)/3 = 5.6667.  scipy: [[0,1,1],[2,4,2.5],[3,5,5.667]], leaves [3,2,0,1] */
    double x[4] = {0, 1, 3, 7}, d[16];
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++)
            d[i * 4 + j] = fabs(x[i] - x[j]);
    int32_t order[4], ma[3], mb[3];
    double mh[3];
    CHECK(atn_cluster_average_linkage(d, 4, order, ma, mb, mh, NULL) == ATN_OK);
    CHECK(ma[0] == 0 && mb[0] == 1);
    CHECK(ma[1] == 2 && mb[1] == 4);
    CHECK(ma[2] == 3 && mb[2] == 5);
    CHECK_NEAR(mh[0], 1.0, 1e-12);
    CHECK_NEAR(mh[1], 2.5, 1e-12);
    CHECK_NEAR(mh[2], 17.0 / 3.0, 1e-12);
    CHECK(order[0] == 3 && order[1] == 2 && order[2] == 0 && order[3] == 1);

    /* planted blocks: {0,2,4,6} and {1,3,5} close inside, far apart; the order keeps each
     * block contiguous and the last merge is at the between-block distance */
    enum { N = 7 };
    double p[N * N];
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++)
            p[i * N + j] = i == j ? 0 : (i % 2) == (j % 2) ? 0.1 + 0.01 * ((i + j) % 3) : 0.9;
    int32_t o[N], a[N - 1], b[N - 1];
    double hgt[N - 1];
    CHECK(atn_cluster_average_linkage(p, N, o, a, b, hgt, NULL) == ATN_OK);
    int changes = 0;
    for (int i = 1; i < N; i++)
        changes += (o[i] % 2) != (o[i - 1] % 2);
    CHECK_MSG(changes == 1, "blocks interleaved: %d %d %d %d %d %d %d", o[0], o[1], o[2], o[3], o[4], o[5], o[6]);
    CHECK_NEAR(hgt[N - 2], 0.9, 1e-12);
    int seen[N] = {0};
    for (int i = 0; i < N; i++)
        seen[o[i]]++;
    for (int i = 0; i < N; i++)
        CHECK(seen[i] == 1);
}

int main(void) {
    test_cluster();
    return check_summary("cluster");
}
