#define _GNU_SOURCE
/* The engine's one file reader (atn_read_file: whole files, pipes, the size limit, folders)
 * and its atomic writers (atn_write_file_atomic, atn_atomic_open/close: the old file stays
 * until the rename, a discarded write leaves nothing behind). */
#include "check.h"
#include "core/files.h"

#include <dirent.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static int entries(const char *dir) {
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");   /* the temporary is a dot file */
    if (d)
        closedir(d);
    return n;
}

int main(void) {
    char dir[] = "/tmp/atn-files-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char path[256];
    snprintf(path, sizeof path, "%s/a.txt", dir);
    atn_error err = {0};
    char *data;
    size_t len;

    /* write, read back */
    CHECK(atn_write_file_atomic(path, "hello\n", 6, &err) == ATN_OK);
    CHECK(atn_read_file(path, 100, &data, &len, &err) == ATN_OK);
    CHECK(len == 6 && memcmp(data, "hello\n", 7) == 0);   /* NUL-terminated */
    free(data);
    /* exactly at the limit, and one byte over */
    CHECK(atn_read_file(path, 6, &data, &len, &err) == ATN_OK && len == 6);
    free(data);
    CHECK(atn_read_file(path, 5, &data, &len, &err) == ATN_E_FORMAT && data == NULL);
    CHECK(strstr(err.message, "6 bytes is larger than the 5-byte limit") != NULL);
    CHECK(atn_read_file(dir, 100, &data, &len, &err) == ATN_E_IO && strstr(err.message, "not a regular file"));
    CHECK(atn_read_file("/nonexistent-dir/x", 100, &data, &len, &err) == ATN_E_IO &&
          strstr(err.message, "/nonexistent-dir/x: cannot open: No such file") != NULL);
    /* a pipe: no size to go by, read to the end (larger than the first buffer) */
    int fds[2];
    CHECK(pipe(fds) == 0);
    char big[200000];
    for (size_t i = 0; i < sizeof big; i++)
        big[i] = (char)('a' + i % 26);
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        size_t off = 0;
        while (off < sizeof big) {
            ssize_t w = write(fds[1], big + off, sizeof big - off);
            if (w <= 0)
                _exit(1);
            off += (size_t)w;
        }
        _exit(0);
    }
    close(fds[1]);
    char fdpath[64];
    snprintf(fdpath, sizeof fdpath, "/proc/self/fd/%d", fds[0]);
    CHECK(atn_read_file(fdpath, SIZE_MAX, &data, &len, &err) == ATN_OK);
    CHECK_MSG(len == sizeof big && memcmp(data, big, len) == 0, "pipe: %zu bytes", len);
    free(data);
    close(fds[0]);
    int wst = -1;
    CHECK(waitpid(pid, &wst, 0) == pid && WIFEXITED(wst) && WEXITSTATUS(wst) == 0);

    /* streaming: the old file stays until close(keep), and a discarded one leaves nothing */
    atn_atomic_file *af;
    CHECK(atn_atomic_open(path, &af, &err) == ATN_OK);
    fputs("new contents\n", atn_atomic_stream(af));
    CHECK(entries(dir) == 2);   /* a.txt and its temporary */
    CHECK(atn_read_file(path, 100, &data, &len, &err) == ATN_OK && strcmp(data, "hello\n") == 0);
    free(data);
    CHECK(atn_atomic_close(af, false, &err) == ATN_E_CANCELLED);
    CHECK(entries(dir) == 1);
    CHECK(atn_read_file(path, 100, &data, &len, &err) == ATN_OK && strcmp(data, "hello\n") == 0);
    free(data);
    CHECK(atn_atomic_open(path, &af, &err) == ATN_OK);
    fputs("new contents\n", atn_atomic_stream(af));
    CHECK(atn_atomic_close(af, true, &err) == ATN_OK);
    CHECK(entries(dir) == 1);
    CHECK(atn_read_file(path, 100, &data, &len, &err) == ATN_OK && strcmp(data, "new contents\n") == 0);
    free(data);
    /* refusals */
    CHECK(atn_atomic_open("/nonexistent-dir/a", &af, &err) == ATN_E_IO && af == NULL);
    CHECK(strstr(err.message, "/nonexistent-dir/a: cannot create a file there") != NULL);
    CHECK(atn_atomic_open(NULL, &af, &err) == ATN_E_INVALID && af == NULL);
    CHECK(atn_atomic_close(NULL, true, &err) == ATN_E_INVALID);
    CHECK(atn_atomic_stream(NULL) == NULL);
    CHECK(atn_write_file_atomic("", "x", 1, &err) == ATN_E_INVALID);
    CHECK(atn_write_file_atomic(dir, "x", 1, &err) == ATN_E_IO);
    CHECK_MSG(strstr(err.message, ": cannot write: Is a directory") != NULL, "%s", err.message);

    /* A device is written in place, and a failed write says why: a full device (our own node
     * when root may make one, so that a writer that renames cannot replace /dev/full). */
    char full[300];
    snprintf(full, sizeof full, "%s/full", dir);
    if (mknod(full, S_IFCHR | 0666, makedev(1, 7)) != 0)
        snprintf(full, sizeof full, "/dev/full");
    static char lots[1 << 17];   /* more than one stdio buffer */
    CHECK(atn_write_file_atomic(full, lots, sizeof lots, &err) == ATN_E_IO);
    CHECK_MSG(strstr(err.message, ": write failed: No space left on device") != NULL, "%s", err.message);
    CHECK(atn_write_file_atomic(full, "x", 1, &err) == ATN_E_IO);   /* only at the close */
    CHECK_MSG(strstr(err.message, ": write failed: No space left on device") != NULL, "%s", err.message);
    struct stat fs;
    CHECK(stat(full, &fs) == 0 && S_ISCHR(fs.st_mode));
    if (strcmp(full, "/dev/full"))
        unlink(full);

    /* a FIFO nobody writes to reads as empty instead of blocking open() for ever */
    {
        char fifo[300];
        snprintf(fifo, sizeof fifo, "%s/fifo", dir);
        CHECK(mkfifo(fifo, 0600) == 0);
        alarm(20);   /* a hang fails the test instead of stalling the suite */
        CHECK(atn_read_file(fifo, 100, &data, &len, &err) == ATN_OK && len == 0);
        alarm(0);
        free(data);
        unlink(fifo);
    }

    /* the weight files' opener: maps a regular file, refuses a FIFO without blocking, a
       folder, a file over the cap; an empty file is no mapping and no error */
    {
        void *map;
        size_t n;
        CHECK(atn_write_file_atomic(path, "weights!", 8, &err) == ATN_OK);
        CHECK(atn_map_file(path, 8, &map, &n, &err) == ATN_OK && map && n == 8 &&
              memcmp(map, "weights!", 8) == 0);
        munmap(map, n);
        CHECK(atn_map_file(path, 7, &map, &n, &err) == ATN_E_FORMAT && !map &&
              strstr(err.message, "8 bytes is larger than the 7-byte limit"));
        CHECK(atn_map_file(dir, 100, &map, &n, &err) == ATN_E_IO && !map &&
              strstr(err.message, "not a regular file"));
        CHECK(atn_map_file("/nonexistent-dir/x", 100, &map, &n, &err) == ATN_E_IO &&
              strstr(err.message, "/nonexistent-dir/x: cannot open: No such file"));
        CHECK(atn_write_file_atomic(path, "", 0, &err) == ATN_OK);
        CHECK(atn_map_file(path, 100, &map, &n, &err) == ATN_OK && !map && n == 0);
        char fifo[300];
        snprintf(fifo, sizeof fifo, "%s/fifo", dir);
        CHECK(mkfifo(fifo, 0600) == 0);
        alarm(20);
        CHECK(atn_map_file(fifo, 100, &map, &n, &err) == ATN_E_IO && !map &&
              strstr(err.message, "fifo: not a regular file"));
        alarm(0);
        unlink(fifo);
    }
    unlink(path);
    CHECK(rmdir(dir) == 0);
    return check_summary("files");
}
