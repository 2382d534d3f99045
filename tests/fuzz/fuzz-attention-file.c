/* Fuzz target: the attention file reader (atn_attn_file_open, then every layer and the
 * capture).  Byte 0 picks the container the rest is saved as: even a .safetensors, 1 mod 4
 * an .npz, 3 mod 4 an .npy.  On failure the message must name the file; on success the
 * shape must agree everywhere, every float of every layer is read (ASan sees a layer that
 * points outside the file), the tokens are n NUL-terminated strings, and layers of different
 * head counts have their absent heads zeros and said absent. */
#include "fuzz-common.h"
#include "attention-file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1)
        return 0;
    const char *ext = data[0] % 2 == 0 ? "safetensors" : data[0] % 4 == 1 ? "npz" : "npy";
    char path[512];
    snprintf(path, sizeof path, "%s/fuzz.%s", fuzz_tmp(), ext);
    fuzz_write(path, data + 1, size - 1);
    atn_attn_file *f = NULL;
    atn_error err = {0};
    atn_status st = atn_attn_file_open(path, &f, &err);
    if (st != ATN_OK) {
        if (f)
            fuzz_fail("a file handed out on error", NULL);
        fuzz_check_parse_error(st, &err, path);
        return 0;
    }
    atn_attn_file_info info = atn_attn_file_get_info(f);
    const atn_encoding *enc = atn_attn_file_encoding(f);
    if (info.n_layers < 1 || info.n_heads < 1 || info.n < 1 || !enc || enc->n != info.n)
        fuzz_fail("shape and tokens disagree", NULL);
    size_t len = 0;
    for (int32_t i = 0; i < enc->n; i++)
        len += strlen(enc->tokens[i].text);
    const atn_capture *cap = NULL;
    st = atn_attn_file_capture(f, &cap, NULL, NULL, &err);
    if (st != ATN_OK) {
        fuzz_check_parse_error(st, &err, path);
    } else {
        if (cap->n_layers != info.n_layers || cap->n_heads != info.n_heads || cap->n != info.n)
            fuzz_fail("the capture's shape differs from the info", NULL);
        size_t count = (size_t)cap->n_layers * cap->n_heads * cap->n * cap->n, nn = (size_t)cap->n * cap->n;
        float sum = 0;
        for (size_t i = 0; i < count; i++)
            sum += cap->attn[i];
        if (sum != sum || sum < 0)
            fuzz_fail("NaN or a negative value passed the checks", NULL);
        /* layers of different head counts (attn.L{l}): each count 1..H, the largest H, and an
           absent head zeros, never attention */
        int32_t most = 0;
        for (int32_t l = 0; cap->layer_heads && l < cap->n_layers; l++) {
            if (cap->layer_heads[l] < 1 || cap->layer_heads[l] > cap->n_heads)
                fuzz_fail("a layer's head count outside 1..H", NULL);
            most = cap->layer_heads[l] > most ? cap->layer_heads[l] : most;
            for (int32_t h = cap->layer_heads[l]; h < cap->n_heads; h++)
                for (size_t i = 0; i < nn; i++)
                    if (cap->attn[((size_t)l * cap->n_heads + h) * nn + i] != 0 || atn_capture_head_present(cap, l, h))
                        fuzz_fail("an absent head that is not zeros or is said present", NULL);
        }
        if (cap->layer_heads && most != cap->n_heads)
            fuzz_fail("H is not the largest layer's head count", NULL);
        const char *w = atn_attn_file_warning(f);
        if (w && !strstr(w, path))
            fuzz_fail("a warning that does not name the file", w);
    }
    atn_attn_file_free(f);
    return len == 0 ? 0 : 0;
}
