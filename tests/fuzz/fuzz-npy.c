/* Fuzz target: the .npy reader (atn_npy_read_f32).  The input is written to a file in
 * the scratch folder; a file that reads must give count = product(shape) floats. */
#include "fuzz-common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char path[512];
    snprintf(path, sizeof path, "%s/fuzz.npy", fuzz_tmp());
    fuzz_write(path, data, size);
    float *v = NULL;
    int64_t shape[8];
    int ndim = -1;
    atn_error err = {0};
    atn_status st = atn_npy_read_f32(path, &v, shape, &ndim, 8, &err);
    if (st != ATN_OK) {
        if (v)
            fuzz_fail("data handed out on error", NULL);
        fuzz_check_parse_error(st, &err, path);
        return 0;
    }
    if (ndim < 0 || ndim > 8)
        fuzz_fail("ndim out of range", NULL);
    uint64_t count = 1;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] < 0)
            fuzz_fail("a negative dimension", NULL);
        count *= (uint64_t)shape[i];
    }
    if (count * sizeof(float) > size)
        fuzz_fail("more floats than the file holds", NULL);
    float sum = 0;
    for (uint64_t i = 0; i < count; i++)
        sum += v[i];
    free(v);
    return sum != sum ? 0 : 0;
}
