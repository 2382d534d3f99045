/* Attention flow (Abnar & Zuidema 2020, "Quantifying Attention Flow in Transformers", §3 and
 * their reference code samiraabnar/attention_flow): the layers are a layered graph, node
 * (l, j) = token j's representation before layer l (l = 0: the input embeddings), with an
 * edge from (l+1, i) down to (l, j) whose capacity is A'_l[i][j], the same residual-augmented
 * head-averaged attention the rollout chains (A' = 0.5 mean_h(A) + 0.5 I, rows
 * renormalised).  The flow of output token i to input token j is the maximum flow from
 * (last+1, i) to (0, j); each output row is then divided by its sum, as compute_flows does.
 *
 * One max-flow per (i, j) pair: Dinic's algorithm (breadth-first levels, then blocking flows
 * by depth-first search with a current-arc pointer) in double precision on a dense residual
 * graph: the flow on the edge (l+1, i) -> (l, j) is f_l[i][j]; a node's arcs are its n
 * down-edges (residual c - f) and its n up-edges (residual f of the layer above). */
#include "analysis.h"
#include "rollout-private.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* below this a residual capacity is spent (capacities are shares of at most 1) */
#define FLOW_EPS 1e-13

typedef struct flow_graph {
    int32_t n, L;          /* tokens, layers in the graph (nodes are (0..L, 0..n-1)) */
    const double *cap;     /* [L][n][n] cap[l][i][j]: edge (l+1, i) -> (l, j) */
    double *f;             /* [L][n][n] the flow on that edge */
    int32_t *level;        /* [(L+1) n] BFS level, -1 unreached */
    int32_t *arc;          /* [(L+1) n] the next arc to try (0..2n-1) */
    int32_t *queue;        /* [(L+1) n] */
    int32_t *stack_node;   /* [(L+1) n + 1] the DFS path's nodes */
    int32_t sink;          /* node index l*n + j */
} flow_graph;

/* Residual capacity of arc a (0..n-1: down to (l-1, a); n..2n-1: up to (l+1, a-n)) leaving
 * node (l, x), and the node it reaches (-1: no such arc). */
static double arc_residual(const flow_graph *g, int32_t l, int32_t x, int32_t a, int32_t *to) {
    int32_t n = g->n;
    if (a < n) {
        if (l == 0) {
            *to = -1;
            return 0;
        }
        size_t e = ((size_t)(l - 1) * n + x) * n + a;
        *to = (l - 1) * n + a;
        return g->cap[e] - g->f[e];
    }
    a -= n;
    if (l == g->L) {
        *to = -1;
        return 0;
    }
    size_t e = ((size_t)l * n + a) * n + x;   /* edge (l+1, a) -> (l, x), travelled backwards */
    *to = (l + 1) * n + a;
    return g->f[e];
}

static void arc_push(flow_graph *g, int32_t l, int32_t x, int32_t a, double amount) {
    int32_t n = g->n;
    if (a < n)
        g->f[((size_t)(l - 1) * n + x) * n + a] += amount;
    else
        g->f[((size_t)l * n + (a - n)) * n + x] -= amount;
}

static bool bfs(flow_graph *g, int32_t src) {
    int32_t N = (g->L + 1) * g->n, head = 0, tail = 0;
    for (int32_t v = 0; v < N; v++)
        g->level[v] = -1;
    g->level[src] = 0;
    g->queue[tail++] = src;
    while (head < tail) {
        int32_t v = g->queue[head++], l = v / g->n, x = v % g->n;
        for (int32_t a = 0; a < 2 * g->n; a++) {
            int32_t to;
            if (arc_residual(g, l, x, a, &to) > FLOW_EPS && g->level[to] < 0) {
                g->level[to] = g->level[v] + 1;
                g->queue[tail++] = to;
            }
        }
    }
    return g->level[g->sink] >= 0;
}

/* One augmenting path in the level graph from src (iterative DFS with current arcs); the
 * amount pushed, 0 when none is left. */
static double augment(flow_graph *g, int32_t src) {
    int32_t n = g->n, depth = 0;
    g->stack_node[0] = src;
    for (;;) {
        int32_t v = g->stack_node[depth];
        if (v == g->sink) {
            /* the bottleneck along the path, then push it */
            double push = INFINITY;
            for (int32_t s = 0; s < depth; s++) {
                int32_t u = g->stack_node[s], to;
                double r = arc_residual(g, u / n, u % n, g->arc[u], &to);
                if (r < push)
                    push = r;
            }
            for (int32_t s = 0; s < depth; s++) {
                int32_t u = g->stack_node[s];
                arc_push(g, u / n, u % n, g->arc[u], push);
            }
            return push;
        }
        int32_t l = v / n, x = v % n;
        bool advanced = false;
        for (; g->arc[v] < 2 * n; g->arc[v]++) {
            int32_t to;
            if (arc_residual(g, l, x, g->arc[v], &to) > FLOW_EPS && g->level[to] == g->level[v] + 1) {
                g->stack_node[++depth] = to;
                advanced = true;
                break;
            }
        }
        if (advanced)
            continue;
        /* a dead end: never try it again in this phase, and back off one step */
        g->level[v] = -1;
        if (depth == 0)
            return 0;
        depth--;
        g->arc[g->stack_node[depth]]++;
    }
}

static double max_flow(flow_graph *g, int32_t src, int32_t sink) {
    int32_t N = (g->L + 1) * g->n;
    memset(g->f, 0, (size_t)g->L * g->n * g->n * sizeof *g->f);
    g->sink = sink;
    double total = 0;
    while (bfs(g, src)) {
        memset(g->arc, 0, (size_t)N * sizeof *g->arc);
        double pushed;
        while ((pushed = augment(g, src)) > 0)
            total += pushed;
    }
    return total;
}

atn_status atn_flow_compute(const atn_capture *cap, int32_t last_layer, float *out, atn_progress_fn progress,
                            void *user_data, atn_error *err) {
    if (!cap || !out)
        return atn_error_set(err, ATN_E_INVALID, "attention flow: no capture or output");
    if (!atn_capture_has_heads(cap))
        return atn_error_set(err, ATN_E_INVALID, "attention flow: the run kept no attention (keep_attention is off)");
    if (last_layer < 0)
        last_layer = cap->n_layers - 1;
    if (last_layer >= cap->n_layers)
        return atn_error_set(err, ATN_E_INVALID,
                             "attention flow: layer %d is out of range (the model has layers 0..%d)", last_layer,
                             cap->n_layers - 1);
    int32_t n = cap->n, L = last_layer + 1;
    if (n <= 0)
        return atn_error_set(err, ATN_E_INVALID, "attention flow: no tokens");
    size_t nn = (size_t)n * n, N = (size_t)(L + 1) * n;
    flow_graph g = {.n = n, .L = L};
    double *capv = malloc((size_t)L * nn * sizeof *capv), *row = malloc((size_t)n * sizeof *row);
    g.cap = capv;
    g.f = malloc((size_t)L * nn * sizeof *g.f);
    g.level = malloc(N * sizeof *g.level);
    g.arc = malloc(N * sizeof *g.arc);
    g.queue = malloc(N * sizeof *g.queue);
    g.stack_node = malloc((N + 1) * sizeof *g.stack_node);
    float *scratch = cap->attn ? NULL : malloc(nn * sizeof *scratch);   /* a head made on demand */
    atn_status st = ATN_OK;
    if (!capv || !row || !g.f || !g.level || !g.arc || !g.queue || !g.stack_node || (!cap->attn && !scratch)) {
        st = atn_error_set(err, ATN_E_NOMEM, "attention flow: out of memory for %d tokens and %d layers", n, L);
        goto done;
    }
    /* the capacities: rollout's A'_l, layer by layer */
    for (int32_t l = 0; l < L; l++) {
        if ((st = atn_rollout_layer_matrix(cap, l, capv + (size_t)l * nn, scratch, err)))
            goto done;
    }
    for (int32_t i = 0; i < n; i++) {
        double sum = 0;
        for (int32_t j = 0; j < n; j++) {
            row[j] = max_flow(&g, L * n + i, j);
            sum += row[j];
            if (progress && !progress(((double)i * n + j + 1) / (double)nn, ATN_STAGE_FLOW, user_data)) {
                st = atn_error_set(err, ATN_E_CANCELLED, "attention flow: cancelled");
                goto done;
            }
        }
        for (int32_t j = 0; j < n; j++)   /* sum >= the path i -> i -> ... -> i's share > 0 */
            out[(size_t)i * n + j] = (float)(row[j] / sum);
    }
done:
    free(capv), free(row), free(g.f), free(g.level), free(g.arc), free(g.queue), free(g.stack_node), free(scratch);
    return st;
}
