/* Output onto input: a command given "-o config.json" inside its own model folder (or its
 * corpus as the output) would replace the file it reads.  While the guard is on, every
 * regular file the engine reads is remembered by device and inode, and the atomic writer
 * refuses to replace one of them.  Only the command line turns it on: the window reads and
 * saves the same toy model on purpose. */
#include "core/input-guard.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

typedef struct input_file {
    dev_t dev;
    ino_t ino;
    char *path;
} input_file;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static bool enabled;
static input_file *files;
static size_t n_files, cap_files;

void atn_input_guard_enable(void) {
    pthread_mutex_lock(&lock);
    enabled = true;
    pthread_mutex_unlock(&lock);
}

void atn_input_guard_note_stat(const struct stat *st, const char *path) {
    if (!S_ISREG(st->st_mode))
        return;
    pthread_mutex_lock(&lock);
    bool known = !enabled;
    for (size_t i = 0; i < n_files && !known; i++)
        known = files[i].dev == st->st_dev && files[i].ino == st->st_ino;
    if (!known && n_files == cap_files) {
        size_t cap = cap_files ? cap_files * 2 : 16;
        input_file *nf = realloc(files, cap * sizeof *nf);
        if (nf) {
            files = nf;
            cap_files = cap;
        }
    }
    if (!known && n_files < cap_files) {
        char *p = strdup(path);
        if (p)
            files[n_files++] = (input_file){st->st_dev, st->st_ino, p};
    }
    pthread_mutex_unlock(&lock);
}

void atn_input_guard_note(const char *path) {
    struct stat st;
    if (path && stat(path, &st) == 0)
        atn_input_guard_note_stat(&st, path);
}

void atn_input_guard_forget(const char *path) {
    struct stat st;
    if (!path || stat(path, &st) != 0)
        return;
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < n_files; i++)
        if (files[i].dev == st.st_dev && files[i].ino == st.st_ino) {
            free(files[i].path);
            files[i] = files[--n_files];
            break;
        }
    pthread_mutex_unlock(&lock);
}

atn_status atn_input_guard_check(const struct stat *st, const char *out, atn_error *err) {
    atn_status rc = ATN_OK;
    pthread_mutex_lock(&lock);
    for (size_t i = 0; enabled && i < n_files; i++)
        if (files[i].dev == st->st_dev && files[i].ino == st->st_ino) {
            rc = atn_error_set(err, ATN_E_INVALID,
                               "%s: is one of this command's inputs (%s); write the output elsewhere", out,
                               files[i].path);
            break;
        }
    pthread_mutex_unlock(&lock);
    return rc;
}
