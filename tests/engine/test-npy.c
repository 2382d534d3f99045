#define _GNU_SOURCE
/* .npy writing: the exact bytes of NumPy's format v1.0 header, and a round trip. */
#include "check.h"
#include "attnscope.h"

#include <stdlib.h>
#include <unistd.h>

int main(void) {
    char dir[] = "/tmp/atn-npy-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char path[256];
    snprintf(path, sizeof path, "%s/a.npy", dir);
    float data[6] = {1, 2, 3, 4, 5, 6.5f};
    int64_t shape[2] = {2, 3};
    atn_error err = {0};
    CHECK(atn_npy_write_f32(path, data, shape, 2, &err) == ATN_OK);
    FILE *f = fopen(path, "rb");
    unsigned char buf[256];
    size_t got = fread(buf, 1, sizeof buf, f);
    fclose(f);
    /* numpy.save(np.arange(...).reshape(2,3).astype('<f4')) writes exactly this header */
    const char *want = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
    CHECK(got == 128 + 24);
    CHECK(memcmp(buf, "\x93NUMPY\x01\x00", 8) == 0);
    CHECK(buf[8] + 256 * buf[9] == 118);
    CHECK(memcmp(buf + 10, want, strlen(want)) == 0);
    CHECK(buf[127] == '\n');
    float *back;
    int64_t s2[4];
    int nd;
    CHECK(atn_npy_read_f32(path, &back, s2, &nd, 4, &err) == ATN_OK);
    CHECK(nd == 2 && s2[0] == 2 && s2[1] == 3);
    CHECK_ARRAY_NEAR("round trip", back, data, 6, 0);
    free(back);
    int64_t one[1] = {6};
    CHECK(atn_npy_write_f32(path, data, one, 1, &err) == ATN_OK);
    f = fopen(path, "rb");
    got = fread(buf, 1, sizeof buf, f);
    fclose(f);
    CHECK(memmem(buf, got, "'shape': (6,), }", 16) != NULL);
    /* no temporary file is left behind, and a write into a missing folder fails cleanly */
    CHECK(atn_npy_write_f32("/nonexistent-dir/a.npy", data, one, 1, &err) == ATN_E_IO);
    CHECK(strstr(err.message, "/nonexistent-dir/a.npy") != NULL);
    unlink(path);
    CHECK(rmdir(dir) == 0);
    return check_summary("npy");
}
