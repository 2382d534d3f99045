/* The engine's file reader and its atomic writers: a temporary file in the same folder,
 * renamed into place, so an interrupted export never leaves a half-written file where a
 * good one was.  The command line's output files and the window's exports go through the
 * same code (atn_atomic_open, atn_write_file_atomic). */
#define _GNU_SOURCE   /* fopencookie */
#include "core/files.h"
#include "core/input-guard.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

atn_status atn_read_file(const char *path, size_t max, char **data, size_t *len, atn_error *err) {
    *data = NULL;
    *len = 0;
    /* O_NONBLOCK: opening a FIFO nobody writes to would otherwise block for ever; cleared
       once open, so a pipe with a writer is read to its end (one without reads as empty) */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return atn_error_set(err, ATN_E_IO, "%s: cannot open: %s", path, strerror(errno));
    int fl = fcntl(fd, F_GETFL);
    if (fl != -1)
        fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    FILE *f = fdopen(fd, "rb");
    if (!f) {
        int e = errno;
        close(fd);
        return atn_error_set(err, ATN_E_NOMEM, "%s: cannot open: %s", path, strerror(e));
    }
    struct stat st;
    if (fstat(fileno(f), &st) != 0 || S_ISDIR(st.st_mode)) {
        fclose(f);
        return atn_error_set(err, ATN_E_IO, "%s: not a regular file", path);
    }
    atn_input_guard_note_stat(&st, path);
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

atn_status atn_map_file(const char *path, size_t max, void **map, size_t *len, atn_error *err) {
    *map = NULL;
    *len = 0;
    /* a FIFO (or a device) named as a weight file would block open() for ever: look first,
       and open without blocking in case one was swapped in between (fstat refuses it then) */
    struct stat sb;
    if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode))
        return atn_error_set(err, ATN_E_IO, "%s: not a regular file", path);
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return atn_error_set(err, ATN_E_IO, "%s: cannot open: %s", path, strerror(errno));
    if (fstat(fd, &sb) != 0) {
        int e = errno;
        close(fd);
        return atn_error_set(err, ATN_E_IO, "%s: cannot stat: %s", path, strerror(e));
    }
    if (!S_ISREG(sb.st_mode)) {
        close(fd);
        return atn_error_set(err, ATN_E_IO, "%s: not a regular file", path);
    }
    atn_input_guard_note_stat(&sb, path);
    if ((uintmax_t)sb.st_size > max) {
        close(fd);
        return atn_error_set(err, ATN_E_FORMAT, "%s: %jd bytes is larger than the %zu-byte limit",
                             path, (intmax_t)sb.st_size, max);
    }
    size_t n = (size_t)sb.st_size;
    if (n == 0) {
        close(fd);
        return ATN_OK;
    }
    void *m = mmap(NULL, n, PROT_READ, MAP_PRIVATE, fd, 0);
    int e = errno;
    close(fd);
    if (m == MAP_FAILED)
        return atn_error_set(err, ATN_E_IO, "%s: cannot map %zu bytes: %s", path, n, strerror(e));
    *map = m;
    *len = n;
    return ATN_OK;
}

atn_status atn_probe_file(const char *path, bool *found, atn_error *err) {
    struct stat st;
    *found = false;
    if (stat(path, &st) != 0) {
        int e = errno;
        char to[512];
        ssize_t n;
        if (e == ENOENT && lstat(path, &st) == 0 && S_ISLNK(st.st_mode) &&
            (n = readlink(path, to, sizeof to - 1)) >= 0) {
            to[n] = '\0';
            return atn_error_set(err, ATN_E_IO, "%s: a broken symbolic link (to %s)", path, to);
        }
        if (e == ENOENT)
            return ATN_OK;
        return atn_error_set(err, ATN_E_IO, "%s: cannot open: %s", path, strerror(e));
    }
    if (!S_ISREG(st.st_mode))
        return atn_error_set(err, ATN_E_IO, "%s: not a regular file", path);
    *found = true;
    return ATN_OK;
}

/* ---- atomic writes ------------------------------------------------------------------ */

/* A regular file (or a missing one) is replaced atomically: a temporary ".atn-XXXXXX" in the
 * target's folder (short, so any legal file name still fits NAME_MAX), given the old file's
 * mode (and, for root, its owner), renamed over it.  A symlink is followed so that its target
 * is replaced and the link stays.  Anything else that exists (a device such as /dev/null, a
 * FIFO, a terminal) is written directly, as are "-" (standard output) and names that lead
 * into /proc (/dev/stdout, /dev/fd/N): renaming over those would replace the node itself.
 * The stream is a stdio cookie over the descriptor so that the system's reason for a failed
 * write (ENOSPC, EIO ...) survives to the message. */
struct atn_atomic_file {
    FILE *f;
    int fd;
    int werr;      /* errno of the first failed write, 0 if none */
    bool direct;   /* written in place: no temporary, no rename */
    char *tmp;     /* the temporary file (atomic only) */
    char *target;  /* what is renamed over: path with its symlinks followed */
    char *name;    /* the name as given, for messages */
};

static ssize_t cookie_write(void *c, const char *buf, size_t size) {
    atn_atomic_file *af = c;
    size_t done = 0;
    while (done < size) {
        ssize_t w = write(af->fd, buf + done, size - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            if (!af->werr)
                af->werr = w < 0 ? errno : EIO;
            errno = af->werr;
            return done > 0 ? (ssize_t)done : 0;
        }
        done += (size_t)w;
    }
    return (ssize_t)done;
}

/* dirname of path as a new string ("." when it has no slash) */
static char *dir_of(const char *path) {
    const char *slash = strrchr(path, '/');
    if (!slash)
        return strdup(".");
    if (slash == path)
        return strdup("/");
    return strndup(path, (size_t)(slash - path));
}

/* Follows path's symlinks (also dangling ones) to the name a rename must replace.  *via_proc
 * is set when a link leads into /proc (the /dev/stdout family).  NULL with errno set
 * (ELOOP, ENOMEM) on failure. */
static char *follow_links(const char *path, bool *via_proc) {
    char *cur = strdup(path);
    *via_proc = strncmp(path, "/proc/", 6) == 0;
    for (int hops = 0; cur; hops++) {
        struct stat ls;
        if (lstat(cur, &ls) != 0 || !S_ISLNK(ls.st_mode))
            return cur;
        if (hops == 40) {
            free(cur);
            errno = ELOOP;
            return NULL;
        }
        char link[4096];
        ssize_t n = readlink(cur, link, sizeof link - 1);
        if (n < 0)
            return cur;
        link[n] = '\0';
        char *next;
        if (link[0] == '/') {
            next = strdup(link);
        } else {
            char *dir = dir_of(cur);
            size_t len = dir ? strlen(dir) + strlen(link) + 2 : 0;
            next = dir ? malloc(len) : NULL;
            if (next)
                snprintf(next, len, "%s/%s", dir, link);
            free(dir);
        }
        free(cur);
        cur = next;
        if (cur && strncmp(cur, "/proc/", 6) == 0)
            *via_proc = true;
    }
    errno = ENOMEM;
    return NULL;
}

static void atomic_free(atn_atomic_file *af) {
    if (!af)
        return;
    free(af->tmp);
    free(af->target);
    free(af->name);
    free(af);
}

atn_status atn_atomic_open(const char *path, atn_atomic_file **out, atn_error *err) {
    *out = NULL;
    if (!path || !*path)
        return atn_error_set(err, ATN_E_INVALID, "no file name given");
    atn_status rc;
    atn_atomic_file *af = calloc(1, sizeof *af);
    if (!af || !(af->name = strdup(path))) {
        atomic_free(af);
        return atn_error_set(err, ATN_E_NOMEM, "out of memory");
    }
    af->fd = -1;
    bool via_proc = false;
    struct stat st;
    bool exists = false;
    if (!strcmp(path, "-")) {
        fflush(stdout);   /* what the program printed before comes first */
        af->direct = true;
        af->fd = STDOUT_FILENO;
    } else {
        af->target = follow_links(path, &via_proc);
        if (!af->target) {
            rc = atn_error_set(err, errno == ENOMEM ? ATN_E_NOMEM : ATN_E_IO, "%s: cannot write: %s", path,
                               strerror(errno));
            goto fail;
        }
        exists = stat(af->target, &st) == 0;
        if (exists && S_ISDIR(st.st_mode)) {
            rc = atn_error_set(err, ATN_E_IO, "%s: cannot write: %s", path, strerror(EISDIR));
            goto fail;
        }
        if (exists && (rc = atn_input_guard_check(&st, path, err)) != ATN_OK)
            goto fail;
        if (exists && S_ISREG(st.st_mode) && !via_proc && access(af->target, W_OK) != 0) {
            /* a read-only file is refused, as the shell's > does, though a rename could replace it */
            rc = atn_error_set(err, ATN_E_IO, "%s: cannot write: %s", path, strerror(errno));
            goto fail;
        }
        if (via_proc || (exists && !S_ISREG(st.st_mode))) {
            /* a device, FIFO or one of the process's own descriptors: write in place */
            af->direct = true;
            int flags = O_WRONLY | O_NOCTTY | O_CLOEXEC | (exists && S_ISREG(st.st_mode) ? O_APPEND : 0);
            af->fd = open(path, flags);   /* a FIFO waits for its reader; a signal ends the wait */
            if (af->fd < 0) {
                rc = atn_error_set(err, ATN_E_IO, "%s: cannot open: %s", path, strerror(errno));
                goto fail;
            }
        }
    }
    if (!af->direct) {
        char *dir = dir_of(af->target);
        size_t len = dir ? strlen(dir) + 16 : 0;
        af->tmp = dir ? malloc(len) : NULL;
        if (af->tmp)
            snprintf(af->tmp, len, "%s/.atn-XXXXXX", dir);
        free(dir);
        if (!af->tmp) {
            rc = atn_error_set(err, ATN_E_NOMEM, "out of memory");
            goto fail;
        }
        af->fd = mkstemp(af->tmp);
        if (af->fd < 0) {
            rc = atn_error_set(err, ATN_E_IO, "%s: cannot create a file there: %s", path, strerror(errno));
            goto fail;
        }
        if (exists) {
            /* the replacement keeps what the old file had: its mode, and (root only) its owner */
            if (geteuid() == 0 && fchown(af->fd, st.st_uid, st.st_gid) != 0) {
                /* not fatal: a file system without owners */
            }
            fchmod(af->fd, st.st_mode & 07777);
        } else {
            /* mkstemp makes 0600; give a new file the usual permissions */
            mode_t um = umask(0);
            umask(um);
            fchmod(af->fd, 0666 & ~um);
        }
    }
    static const cookie_io_functions_t io = {.write = cookie_write};
    af->f = fopencookie(af, "w", io);
    if (!af->f) {
        rc = atn_error_set(err, ATN_E_NOMEM, "%s: out of memory", path);
        goto fail;
    }
    *out = af;
    return ATN_OK;
fail:
    if (af->fd >= 0 && af->fd != STDOUT_FILENO)
        close(af->fd);
    if (af->tmp && af->fd >= 0)
        unlink(af->tmp);
    atomic_free(af);
    return rc;
}

FILE *atn_atomic_stream(atn_atomic_file *af) { return af ? af->f : NULL; }

atn_status atn_atomic_close(atn_atomic_file *af, bool keep, atn_error *err) {
    if (!af)
        return atn_error_set(err, ATN_E_INVALID, "atn_atomic_close: no file");
    atn_status rc = ATN_OK;
    int e = 0;
    if (fflush(af->f) != 0 || ferror(af->f))
        e = af->werr ? af->werr : EIO;
    fclose(af->f);
    if (af->fd != STDOUT_FILENO && close(af->fd) != 0 && !e && errno != EINTR)
        e = errno;
    if (e)
        keep = false;
    if (keep && !af->direct && rename(af->tmp, af->target) != 0) {
        rc = atn_error_set(err, ATN_E_IO, "%s: cannot write: %s", af->name, strerror(errno));
        keep = false;
    } else if (e) {
        rc = atn_error_set(err, ATN_E_IO, "%s: write failed: %s", af->name, strerror(e));
    } else if (!keep) {
        rc = atn_error_set(err, ATN_E_CANCELLED, "%s: not written", af->name);
    }
    if (!keep && !af->direct)
        unlink(af->tmp);
    atomic_free(af);
    return rc;
}

atn_status atn_write_file_atomic(const char *path, const void *data, size_t len, atn_error *err) {
    atn_atomic_file *af;
    atn_status rc = atn_atomic_open(path, &af, err);
    if (rc != ATN_OK)
        return rc;
    fwrite(data, 1, len, af->f);   /* a failed write shows at the close, with its reason */
    return atn_atomic_close(af, true, err);
}
