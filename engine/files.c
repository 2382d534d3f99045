/* The engine's file reader and its atomic writers: a temporary file in the same folder,
 * renamed into place, so an interrupted export never leaves a half-written file where a
 * good one was.  The command line's output files and the window's exports go through the
 * same code (atn_atomic_open, atn_write_file_atomic). */
#include "files.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

atn_status atn_read_file(const char *path, size_t max, char **data, size_t *len, atn_error *err) {
    *data = NULL;
    *len = 0;
    FILE *f = fopen(path, "rb");
    if (!f)
        return atn_error_set(err, ATN_E_IO, "%s: cannot open: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fileno(f), &st) != 0 || S_ISDIR(st.st_mode)) {
        fclose(f);
        return atn_error_set(err, ATN_E_IO, "%s: not a regular file", path);
    }
    if (S_ISREG(st.st_mode) && (uintmax_t)st.st_size > max) {
        fclose(f);
        return atn_error_set(err, ATN_E_FORMAT, "%s: %jd bytes is larger than the %zu-byte limit", path,
                             (intmax_t)st.st_size, max);
    }
    /* the size is a hint (a pipe has none, a file may change): read to the end */
    size_t cap = S_ISREG(st.st_mode) ? (size_t)st.st_size + 1 : 65536, n = 0;
    char *buf = malloc(cap);
    atn_status rc = ATN_OK;
    while (buf) {
        size_t got = fread(buf + n, 1, cap - 1 - n, f);
        n += got;
        if (n > max) {
            rc = atn_error_set(err, ATN_E_FORMAT, "%s: %zu bytes is larger than the %zu-byte limit", path, n, max);
            break;
        }
        if (ferror(f)) {
            rc = atn_error_set(err, ATN_E_IO, "%s: cannot read: %s", path, strerror(errno ? errno : EIO));
            break;
        }
        if (n < cap - 1 || feof(f))
            break;
        int c = fgetc(f);   /* full: at the end, or more to come? */
        if (c == EOF)
            continue;       /* ferror / feof decide above */
        char *nb = cap <= SIZE_MAX / 2 ? realloc(buf, cap * 2) : NULL;
        if (!nb) {
            rc = atn_error_set(err, ATN_E_NOMEM, "%s: out of memory for %zu bytes", path, cap * 2);
            break;
        }
        buf = nb;
        cap *= 2;
        buf[n++] = (char)c;
    }
    fclose(f);
    if (!buf)
        return atn_error_set(err, ATN_E_NOMEM, "%s: out of memory for %zu bytes", path, cap);
    if (rc != ATN_OK) {
        free(buf);
        return rc;
    }
    buf[n] = '\0';
    *data = buf;
    *len = n;
    return ATN_OK;
}

/* ---- atomic writes ------------------------------------------------------------------ */

struct atn_atomic_file {
    FILE *f;
    char *tmp;
    char *path;
};

atn_status atn_atomic_open(const char *path, atn_atomic_file **out, atn_error *err) {
    *out = NULL;
    if (!path || !*path)
        return atn_error_set(err, ATN_E_INVALID, "no file name given");
    atn_status rc;
    atn_atomic_file *af = calloc(1, sizeof *af);
    size_t len = strlen(path) + 16;
    if (af)
        af->tmp = malloc(len), af->path = strdup(path);
    if (!af || !af->tmp || !af->path) {
        rc = atn_error_set(err, ATN_E_NOMEM, "out of memory");
        goto fail;
    }
    snprintf(af->tmp, len, "%s.tmpXXXXXX", path);
    int fd = mkstemp(af->tmp);
    if (fd < 0) {
        rc = atn_error_set(err, ATN_E_IO, "%s: cannot create a file there: %s", path, strerror(errno));
        goto fail;
    }
    /* mkstemp makes 0600; give the file the usual permissions */
    mode_t um = umask(0);
    umask(um);
    fchmod(fd, 0666 & ~um);
    af->f = fdopen(fd, "wb");
    if (!af->f) {
        rc = atn_error_set(err, ATN_E_IO, "%s: cannot write: %s", path, strerror(errno));
        close(fd);
        unlink(af->tmp);
        goto fail;
    }
    *out = af;
    return ATN_OK;
fail:
    if (af) {
        free(af->tmp);
        free(af->path);
        free(af);
    }
    return rc;
}

FILE *atn_atomic_stream(atn_atomic_file *af) { return af ? af->f : NULL; }

atn_status atn_atomic_close(atn_atomic_file *af, bool keep, atn_error *err) {
    if (!af)
        return atn_error_set(err, ATN_E_INVALID, "atn_atomic_close: no file");
    atn_status rc = ATN_OK;
    int e = 0;
    if (ferror(af->f))
        keep = false, e = EIO;
    if (fclose(af->f) != 0)
        keep = false, e = errno;
    if (keep && rename(af->tmp, af->path) != 0) {
        rc = atn_error_set(err, ATN_E_IO, "%s: cannot write: %s", af->path, strerror(errno));
        keep = false;
    } else if (!keep && e) {
        rc = atn_error_set(err, ATN_E_IO, "%s: write failed: %s", af->path, strerror(e));
    } else if (!keep) {
        rc = atn_error_set(err, ATN_E_CANCELLED, "%s: not written", af->path);
    }
    if (!keep)
        unlink(af->tmp);
    free(af->tmp);
    free(af->path);
    free(af);
    return rc;
}

atn_status atn_write_file_atomic(const char *path, const void *data, size_t len, atn_error *err) {
    atn_atomic_file *af;
    atn_status rc = atn_atomic_open(path, &af, err);
    if (rc != ATN_OK)
        return rc;
    if (len > 0 && fwrite(data, 1, len, af->f) != len) {
        int e = errno ? errno : EIO;
        atn_atomic_close(af, false, NULL);
        return atn_error_set(err, ATN_E_IO, "%s: write failed: %s", path, strerror(e));
    }
    return atn_atomic_close(af, true, err);
}
