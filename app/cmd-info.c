/* attnscope models / devices: what is built in and what this machine can run on. */
#include "cli.h"
#include "hf-cache.h"

#include <math.h>
#include <stdio.h>
#include <cblas.h>
#include <stdlib.h>
#include <string.h>

static void human_size(int64_t b, char *buf, size_t len) {
    if (b < 1000)
        snprintf(buf, len, "%lld B", (long long)b);
    else if (b < 1000 * 1000)
        snprintf(buf, len, "%.1f kB", (double)b / 1e3);
    else if (b < 1000LL * 1000 * 1000)
        snprintf(buf, len, "%.1f MB", (double)b / 1e6);
    else
        snprintf(buf, len, "%.2f GB", (double)b / 1e9);
}

/* The Hugging Face cache's models: one line per cached revision. */
static int list_downloaded(void) {
    atn_hf_cache_list *L = NULL;
    atn_error err = {0};
    if (atn_hf_cache_list_models(NULL, &L, &err) != ATN_OK) {
        cli_error("%s", err.message);
        return CLI_EXIT_FAIL;
    }
    int rows = 0;
    for (int32_t i = 0; i < L->n; i++)
        rows += L->models[i].n_revisions;
    if (rows == 0) {
        printf("\nNo downloaded models in %s (`attnscope download org/name` fetches one).\n", L->cache_dir);
        atn_hf_cache_list_free(L);
        return 0;
    }
    printf("\nDownloaded models in %s (open with --model ID or ID@REVISION):\n", L->cache_dir);
    printf("%-40s %-24s %-10s %s\n", "id", "revision", "size", "contents");
    for (int32_t i = 0; i < L->n; i++) {
        const atn_hf_cached_model *m = &L->models[i];
        char size[32];
        human_size(m->size, size, sizeof size);
        for (int32_t j = 0; j < m->n_revisions; j++) {
            const atn_hf_revision *r = &m->revisions[j];
            char rev[64];
            if (*r->refs)
                snprintf(rev, sizeof rev, "%.40s (%.8s)", r->refs, r->commit);
            else
                snprintf(rev, sizeof rev, "%.12s", r->commit);
            char what[160];
            snprintf(what, sizeof what, "%s%s%s%s%s", r->has_config ? "config" : "no config.json",
                     r->has_tokenizer ? ", tokenizer" : ", no tokenizer",
                     r->has_weights ? ", weights " : ", no weights", r->weights,
                     r->sentence_transformers ? " (sentence-transformers)" : "");
            printf("%-40s %-24s %-10s %s\n", m->id, rev, j == 0 ? size : "", what);
        }
    }
    atn_hf_cache_list_free(L);
    return 0;
}

int cmd_models(int argc, char **argv) {
    cli_args a;
    static const char *const flags[] = {"help", NULL};
    if (!cli_parse(&a, "attnscope models", argc, argv, flags))
        return CLI_EXIT_USAGE;
    if (cli_flag(&a, "help")) {
        printf("Usage: attnscope models\n\nLists the built-in models (name, kind, layers x heads), then the models\n"
               "downloaded into the Hugging Face cache ($HF_HUB_CACHE, else $HF_HOME/hub, else\n"
               "~/.cache/huggingface/hub): id, revision (branch and commit), size on disk, and\n"
               "whether config.json, a tokenizer and weights are there.  Open one with\n"
               "--model org/name or --model org/name@revision.\n");
        return 0;
    }
    if (!cli_check_unused(&a))
        return CLI_EXIT_USAGE;
    printf("%-16s %-6s %-14s %s\n", "name", "kind", "layers x heads", "width / vocabulary");
    for (const char *const *name = atn_builtin_model_names(); *name; name++) {
        atn_error err = {0};
        atn_model *m = atn_model_open(*name, NULL, NULL, &err);
        if (!m) {
            printf("%-16s (not available: %s)\n", *name, err.message);
            continue;
        }
        const atn_config *c = atn_model_config(m);
        char lh[32];
        snprintf(lh, sizeof lh, "%d x %d", c->n_layers, c->n_heads);
        printf("%-16s %-6s %-14s d_model %d, %s %d\n", *name, atn_model_kind_of(m) == ATN_MODEL_TOY ? "toy"
                                                           : atn_model_is_causal(m) ? "gpt2" : "bert",
               lh, c->d_model, atn_model_kind_of(m) == ATN_MODEL_TOY ? "tokens" : "vocabulary",
               atn_model_kind_of(m) == ATN_MODEL_TOY ? atn_model_toy_n_tokens(m) : c->vocab_size);
        atn_model_free(m);
    }
    return list_downloaded();
}

int cmd_devices(int argc, char **argv) {
    cli_args a;
    static const char *const flags[] = {"help", NULL};
    if (!cli_parse(&a, "attnscope devices", argc, argv, flags))
        return CLI_EXIT_USAGE;
    if (cli_flag(&a, "help")) {
        printf("Usage: attnscope devices\n\nLists the compute backends, the GPUs found (name, memory, compute\n"
               "capability), the BLAS kernel and the CPU's vector extensions (avx2, avx512f ...);\n"
               "when no GPU is usable, says why.\n"
               "ATTNSCOPE_CUDA_MODULE names the CUDA module file to load instead of the one\n"
               "found next to the program.\n");
        return 0;
    }
    if (!cli_check_unused(&a))
        return CLI_EXIT_USAGE;
    const char *better = atn_blas_better_core();
    const char *user = getenv("OPENBLAS_CORETYPE");
    printf("cpu     OpenBLAS %s, kernel %s", openblas_get_config(), atn_blas_core_name());
    if (better && user)
        printf(" (OPENBLAS_CORETYPE=%s is set in your environment; this CPU could use the faster %s kernel)",
               user, better);
    else if (better)
        printf(" (slower than this CPU allows: %s would be faster)", better);
    printf("\n");
    const char *features = atn_cpu_features_str();
    const atn_cpu_flags *cpu = atn_cpu_features();
    printf("cpu     features: %s; packed AVX-512 path: %s\n", *features ? features : "none",
           cpu->packed_kernels ? "yes" : cpu->avx512f ? "no (ATTNSCOPE_CPU_KERNELS=blas)" : "no (no AVX-512F)");
    /* What of the CUDA backend has run where, said plainly (README, "GPU"): change it when
       tools/gpu-check.sh has passed on a real GPU (docs/PERFORMANCE.md, "GPU") */
    printf("cuda    run on a real GPU so far: nothing (no GPU has been available to this project's tests); run on\n"
           "        the CPU launcher in the test suite: every kernel of kernels.cu and the whole CUDA layer walk\n"
           "        (cuda-agreement's CPU half, cuda-mock-host-logic)\n");
    atn_error err = {0};
    int32_t count = atn_cuda_device_count(&err);
    if (count == 0) {
        printf("cuda    not usable: %s\n", err.message);
        return 0;
    }
    for (int32_t i = 0; i < count; i++) {
        atn_device_info dev;
        if (atn_cuda_device_info(i, &dev, &err) != ATN_OK) {
            printf("cuda:%d  (cannot read its properties: %s)\n", i, err.message);
            continue;
        }
        printf("cuda:%d  %s, %.1f GiB (%.1f GiB free), compute capability %d.%d, %d multiprocessors%s\n", i, dev.name,
               dev.total_bytes / 1073741824.0, dev.free_bytes / 1073741824.0, dev.cc_major, dev.cc_minor,
               dev.multiprocessors, i == 0 ? " (used by --device cuda)" : "");
        if (i == count - 1)
            printf("        %s; module %s\n", dev.runtime, atn_cuda_module_path());
    }
    return 0;
}

/* "123 B", "45.6 kB", "7.89 MB", "1.23 GB" (decimal units) into buf. */
static const char *human_bytes(uint64_t b, char *buf, size_t size) {
    if (b < 1000)
        snprintf(buf, size, "%llu B", (unsigned long long)b);
    else if (b < 1000000)
        snprintf(buf, size, "%.1f kB", b / 1e3);
    else if (b < 1000000000)
        snprintf(buf, size, "%.2f MB", b / 1e6);
    else
        snprintf(buf, size, "%.2f GB", b / 1e9);
    return buf;
}

/* attnscope info: what a model is: its family, shape, and for each captured layer which
 * stored weights it runs (ALBERT shares them between layers). */
int cmd_info(int argc, char **argv) {
    cli_args a;
    static const char *const flags[] = {"help", NULL};
    if (!cli_parse(&a, "attnscope info", argc, argv, flags))
        return CLI_EXIT_USAGE;
    if (cli_flag(&a, "help")) {
        printf("Usage: attnscope info [--model NAME|DIR|org/name]\n\nWhat a model is: its name, family, layers x heads, widths, vocabulary and\n"
               "positions, whether it is causal and has a masked-LM head, then one line per\n"
               "captured layer saying which stored weights it runs.  ALBERT shares weights:\n"
               "each of its num_hidden_layers x inner_group_num captured layers runs inner\n"
               "layer J of layer group G, and the line names every layer that shares them.\n");
        return 0;
    }
    atn_error err = {0};
    atn_model *m = cli_open_model(&a, &err);
    if (!m)
        return cli_fail(&err);
    if (!cli_check_unused(&a)) {
        atn_model_free(m);
        return CLI_EXIT_USAGE;
    }
    const atn_config *c = atn_model_config(m);
    bool toy = atn_model_kind_of(m) == ATN_MODEL_TOY;
    printf("model      %s\n", atn_model_name(m));
    printf("family     %s%s\n", toy ? "toy (BERT layout)" : atn_model_family_name(m),
           atn_model_is_causal(m) ? ", causal (next-token head)" : atn_model_has_mlm_head(m) ? ", masked-LM head" : "");
    if (atn_model_is_encoder_decoder(m)) {   /* three stacks of attention (atn_capture.stacks) */
        int32_t Ld = atn_model_decoder_layers(m);
        printf("stacks     encoder: %d layers x %d heads of %d (source over source)\n", c->n_layers, c->n_heads,
               c->d_head);
        printf("           decoder: %d layers x %d heads (target over earlier target, causal)\n", Ld, c->n_heads);
        printf("           cross:   %d layers x %d heads (target over source)\n", Ld, c->n_heads);
        printf("decoder    starts with token %d; next-token head\n", atn_model_decoder_start_id(m));
    } else {
        printf("layers     %d x %d heads of %d\n", c->n_layers, c->n_heads, c->d_head);
    }
    if (c->n_kv_heads > 0 && c->n_kv_heads != c->n_heads)
        printf("K/V heads  %d, each read by %d query heads (grouped-query attention)\n", c->n_kv_heads,
               c->n_heads / c->n_kv_heads);
    atn_rotary_info ri;
    if (atn_model_rotary_info(m, &ri)) {
        printf("positions  rotary, theta %g", ri.theta);
        if (strcmp(ri.scaling, "none") != 0)
            printf(", %s scaling x%g", ri.scaling, ri.factor);
        if (ri.qk_norm)
            printf(", q/k RMSNorm per head first");
        printf("\n");
        if (ri.window > 0)
            printf("window     %d keys (query i sees keys i-%d..i) in every layer\n", ri.window, ri.window - 1);
        if (ri.global_every > 0)   /* ModernBERT */
            printf("local      every layer but 0, %d, %d...: theta %g, query i sees keys i-%d..i+%d\n",
                   ri.global_every, 2 * ri.global_every, ri.theta_local, ri.local_half, ri.local_half);
        if (ri.local_layers) {   /* Gemma, Qwen2 with the window in some layers */
            printf("sliding    layers");
            int32_t count = 0;
            for (int32_t l = 0; l < c->n_layers; l++)
                if (ri.local_layers[l])
                    printf("%s %d", count++ ? "," : "", l);
            printf(": window %d keys (query i sees keys i-%d..i)", ri.local_window, ri.local_window - 1);
            if (ri.theta_local > 0)
                printf(", theta %g", ri.theta_local);
            printf("; the other %d layer%s global\n", c->n_layers - count, c->n_layers - count == 1 ? "" : "s");
        }
        if (ri.query_scale > 0 || ri.attn_softcap > 0) {   /* Gemma */
            printf("scores     x %.6g", ri.query_scale > 0 ? ri.query_scale : 1.0 / sqrt((double)c->d_head));
            if (ri.query_scale > 0)
                printf(" (query_pre_attn_scalar %.6g ^ -1/2)", 1.0 / (ri.query_scale * ri.query_scale));
            if (ri.attn_softcap > 0)
                printf(", soft-capped to %g tanh(s / %g) before the mask", ri.attn_softcap, ri.attn_softcap);
            printf("\n");
        }
        if (ri.embed_scale > 0)
            printf("embeddings x %.6g (sqrt(d_model) in the weights' dtype)\n", ri.embed_scale);
        if (ri.final_softcap > 0)
            printf("head       logits soft-capped to %g tanh(z / %g)\n", ri.final_softcap, ri.final_softcap);
    }
    atn_relative_info rel;
    if (atn_model_relative_info(m, &rel)) {   /* DeBERTa-v2/v3 */
        if (rel.relative && (rel.c2p || rel.p2c)) {
            printf("positions  relative (disentangled): %s%s%s", rel.c2p ? "content->position" : "",
                   rel.c2p && rel.p2c ? " + " : "", rel.p2c ? "position->content" : "");
            if (rel.buckets > 0)
                printf(", %d log buckets up to distance %d", rel.buckets, rel.max_relative);
            else
                printf(", distances clamped at %d", rel.span);
            printf("%s%s%s\n", rel.share_att_key ? ", shared key/query projections" : ", own projections",
                   rel.norm_rel_ebd ? ", LayerNorm on the relative embeddings" : "",
                   rel.absolute ? ", absolute positions too" : "");
        } else {
            printf("positions  %s, no relative terms\n", rel.absolute ? "absolute" : "none");
        }
        printf("scale      scores / sqrt(%d x %d)\n", c->d_head, rel.scale_factor);
    }
    printf("widths     d_model %d, feed-forward %d", c->d_model, c->d_ffn);
    if (c->d_embed > 0 && c->d_embed != c->d_model)
        printf(", embeddings %d (projected to %d)", c->d_embed, c->d_model);
    printf("\n");
    if (toy)
        printf("tokens     %d (the file's own)\n", atn_model_toy_n_tokens(m));
    else if (strcmp(atn_model_family_name(m), "T5") != 0)
        printf("vocabulary %d, positions %d, token types %d\n", c->vocab_size, c->max_positions, c->type_vocab_size);
    else if (!toy && !strcmp(atn_model_family_name(m), "T5"))
        printf("vocabulary %d, relative positions (buckets shared by every layer)\n", c->vocab_size);
    uint64_t conv = 0, from = 0;
    if (!toy)
        atn_model_converted_bytes(m, &conv, &from);
    if (conv) {   /* the bf16 issue: until the engine computes in 16 bits, say what the copy costs */
        char a1[32], a2[32];
        printf("memory     %s of weights in the files (F16/BF16, or transposed) held as a %s float32 copy\n",
               human_bytes(from, a1, sizeof a1), human_bytes(conv, a2, sizeof a2));
    }
    for (int32_t l = 0; l < c->n_layers; l++) {
        int32_t g = 0, j = 0;
        char list[512];
        int32_t uses = atn_model_layer_weights(m, l, &g, &j);
        atn_model_layer_sharers(m, l, list, sizeof list);
        if (uses > 1)
            printf("layer %-4d shares weights with layers %s (group %d, inner %d)\n", l, list, g, j);
        else
            printf("layer %-4d its own weights\n", l);
    }
    atn_model_free(m);
    return 0;
}
