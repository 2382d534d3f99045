/* Shared by the fuzz targets: a per-process scratch folder, file writing, and the
 * checks every target makes on an error (a message is set, it names the file, and the
 * returned status matches).  A broken promise is a crash (__builtin_trap), so libFuzzer
 * keeps the input and the gcc regression runner fails. */
#ifndef ATN_FUZZ_COMMON_H
#define ATN_FUZZ_COMMON_H

#include "attnscope.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef ATN_FUZZ_SOURCE_ROOT
#define ATN_FUZZ_SOURCE_ROOT "."
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static inline void fuzz_fail(const char *what, const char *detail) {
    fprintf(stderr, "fuzz check failed: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
    __builtin_trap();
}

/* The repository root: ATN_SOURCE_ROOT (meson's test environment) or the build's. */
static inline const char *fuzz_source_root(void) {
    const char *s = getenv("ATN_SOURCE_ROOT");
    return s && *s ? s : ATN_FUZZ_SOURCE_ROOT;
}

static char fuzz_tmp_dir[256];

static inline void fuzz_tmp_cleanup(void) {
    char cmd[320];
    if (fuzz_tmp_dir[0]) {
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", fuzz_tmp_dir);
        if (system(cmd) != 0)
            fprintf(stderr, "could not remove %s\n", fuzz_tmp_dir);
    }
}

/* One scratch folder per process, removed at exit. */
static inline const char *fuzz_tmp(void) {
    if (!fuzz_tmp_dir[0]) {
        const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
        snprintf(fuzz_tmp_dir, sizeof fuzz_tmp_dir, "%s/atn-fuzz-XXXXXX", base);
        if (!mkdtemp(fuzz_tmp_dir)) {
            perror("mkdtemp");
            exit(1);
        }
        atexit(fuzz_tmp_cleanup);
    }
    return fuzz_tmp_dir;
}

static inline void fuzz_write(const char *path, const void *data, size_t len) {
    FILE *f = fopen(path, "wb");
    if (!f || (len && fwrite(data, 1, len, f) != len) || fclose(f) != 0) {
        perror(path);
        exit(1);
    }
}

static inline void *fuzz_read(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        exit(1);
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    rewind(f);
    char *b = malloc((size_t)n + 1);
    if (!b || fread(b, 1, (size_t)n, f) != (size_t)n) {
        perror(path);
        exit(1);
    }
    b[n] = 0;
    fclose(f);
    *len = (size_t)n;
    return b;
}

static inline void fuzz_copy(const char *from, const char *to) {
    size_t len;
    void *b = fuzz_read(from, &len);
    fuzz_write(to, b, len);
    free(b);
}

/* An error must carry its status and a message; when must_name is not NULL the message
 * must contain it (the file the problem is in).  Out-of-memory messages are exempt from
 * naming. */
static inline void fuzz_check_error(atn_status st, const atn_error *err, const char *must_name) {
    if (st == ATN_OK)
        fuzz_fail("an error status of 0", NULL);
    if (err->status != st)
        fuzz_fail("err->status differs from the returned status", err->message);
    if (!err->message[0])
        fuzz_fail("an error without a message", NULL);
    if (!memchr(err->message, 0, sizeof err->message))
        fuzz_fail("an unterminated message", NULL);
    if (must_name && st != ATN_E_NOMEM && !strstr(err->message, must_name))
        fuzz_fail("the message does not name the file", err->message);
}

/* The same for a parser: fuzz inputs are small, so running out of memory means the parser
 * trusted a size from the file before checking it against the file. */
static inline void fuzz_check_parse_error(atn_status st, const atn_error *err, const char *must_name) {
    if (st == ATN_E_NOMEM)
        fuzz_fail("out of memory parsing a small input", err->message);
    fuzz_check_error(st, err, must_name);
}

#endif
