/* For the fuzz targets that go through the Hugging Face loader: a model folder in the
 * scratch folder made from one of the catalogue's good bases, one of whose files is
 * replaced by the fuzz input; a model that opens is run on a short text. */
#ifndef ATN_FUZZ_HF_COMMON_H
#define ATN_FUZZ_HF_COMMON_H

#include "fuzz-common.h"

/* Copies tests/bad/<base>/<files...> into the scratch folder once; returns the folder. */
static inline const char *fuzz_hf_folder(const char *base, const char *const *files) {
    static char dir[512];
    if (!dir[0]) {
        snprintf(dir, sizeof dir, "%s/%s", fuzz_tmp(), base);
        mkdir(dir, 0755);
        for (int i = 0; files[i]; i++) {
            char from[4096], to[1024];
            snprintf(from, sizeof from, "%s/tests/bad/%s/%s", fuzz_source_root(), base, files[i]);
            snprintf(to, sizeof to, "%s/%s", dir, files[i]);
            fuzz_copy(from, to);
        }
    }
    return dir;
}

/* Opens dir; errors must name the folder.  A model that opens runs one short text. */
static inline void fuzz_hf_open_and_run(const char *dir) {
    atn_error err = {0};
    atn_model *m = atn_model_open_hf(dir, NULL, NULL, &err);
    if (!m) {
        fuzz_check_parse_error(err.status, &err, dir);
        return;
    }
    atn_encoding *enc = NULL;
    atn_status st = atn_model_encode(m, "the cat sat on the mat", "hello world", &enc, &err);
    if (st == ATN_OK) {
        atn_run *run = atn_run_new(m);
        atn_run_options o;
        atn_run_options_init(&o);
        o.memory_limit = 64 << 20;
        st = atn_run_forward(run, enc, &o, &err);
        if (st != ATN_OK)
            fuzz_check_error(st, &err, NULL);
        atn_run_free(run);
    } else {
        fuzz_check_error(st, &err, NULL);
    }
    atn_encoding_free(enc);
    atn_model_free(m);
}

#endif
