/* A model's weights never depend on the file staying as it was (engine/core/mapguard.c,
 * atn_model_check_files).  On a copy of tests/hf/models/f32, whose F32 weights are used in
 * place from the mapping: truncating the file makes a read of the last word embedding (a
 * SIGBUS before) read 0 and raise the model's flag; a run then ends with "the file changed
 * while the model was open"; a second copy rewritten in place with the same size (as cp
 * does) is refused before the forward (its modification time changed); freeing the models
 * works, and an ordinary SIGBUS outside any model mapping still goes to the handler before ours
 * (the default: the child dies of SIGBUS; under ASan, ASan's report). */
#define _GNU_SOURCE
#include "check.h"
#include "core/model-private.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void copy_model(const char *src, const char *dst) {
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && cp -r '%s' '%s'", dst, src, dst);
    CHECK(system(cmd) == 0);
}

static atn_status run_once(atn_model *m, atn_error *err) {
    atn_encoding *enc = NULL;
    atn_status st = atn_model_encode(m, "the cat sat", NULL, &enc, err);
    atn_run *run = atn_run_new(m);
    if (st == ATN_OK)
        st = atn_run_forward(run, enc, NULL, err);
    atn_run_free(run);
    atn_encoding_free(enc);
    return st;
}

int main(void) {
    const char *src = getenv("ATN_SOURCE_ROOT");
    char model[4096], a[256], b[256], file[512];
    snprintf(model, sizeof model, "%s/tests/hf/models/f32", src ? src : ".");
    snprintf(a, sizeof a, "/tmp/atn-mapguard-%d-a", (int)getpid());
    snprintf(b, sizeof b, "/tmp/atn-mapguard-%d-b", (int)getpid());
    copy_model(model, a);
    copy_model(model, b);
    atn_error err = {0};

    /* truncated under the model: the read goes on (zeros), the flag is up, runs are refused */
    atn_model *m = atn_model_open(a, NULL, NULL, &err);
    CHECK_MSG(m != NULL, "%s", err.message);
    if (!m)
        return check_summary("engine-mapguard");
    CHECK(run_once(m, &err) == ATN_OK);
    const atn_config *c = &m->cfg;
    const volatile float *last = m->w.word_emb + (size_t)c->vocab_size * c->d_model - 1;
    CHECK(*last != 0.0f);   /* a real weight, read from the mapping */
    snprintf(file, sizeof file, "%s/model.safetensors", a);
    CHECK(truncate(file, 200) == 0);
    CHECK(*last == 0.0f);   /* SIGBUS before the guard */
    CHECK(m->file_changed == 1);
    CHECK(run_once(m, &err) == ATN_E_IO);
    char want[600];
    snprintf(want, sizeof want, "%s: the file changed while the model was open (it is now 200 bytes, was ",
             file);
    CHECK_MSG(strncmp(err.message, want, strlen(want)) == 0 && strstr(err.message, "reopen the model"), "%s",
              err.message);
    atn_model_free(m);

    /* rewritten in place, same size (cp over it): refused before the forward */
    m = atn_model_open(b, NULL, NULL, &err);
    CHECK(m != NULL && run_once(m, &err) == ATN_OK);
    snprintf(file, sizeof file, "%s/model.safetensors", b);
    struct timespec pause = {0, 20 * 1000 * 1000};
    nanosleep(&pause, NULL);   /* a new modification time even on coarse clocks */
    char cmd[10000];
    snprintf(cmd, sizeof cmd, "cp '%s/model.safetensors' '%s.tmp' && cp '%s.tmp' '%s' && rm '%s.tmp'", model, file,
             file, file, file);
    CHECK(system(cmd) == 0);
    CHECK(m && run_once(m, &err) == ATN_E_IO);
    CHECK_MSG(strstr(err.message, "the file changed while the model was open (it is now 86264 bytes, was 86264)"),
              "%s", err.message);
    atn_model_free(m);

    /* a SIGBUS elsewhere still ends the process (in a child: a mapping of an empty file) */
    pid_t pid = fork();
    if (pid == 0) {
        char empty[300];
        snprintf(empty, sizeof empty, "%s/empty", a);
        int fd = open(empty, O_RDWR | O_CREAT | O_TRUNC, 0600);
        volatile const char *p = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
        (void)*p;
        _exit(0);
    }
    int status = 0;
    CHECK(waitpid(pid, &status, 0) == pid);
#ifdef __SANITIZE_ADDRESS__   /* the handler before ours is ASan's: it reports, then exits 1 or
                                 aborts (abort_on_error in ASAN_OPTIONS) */
    CHECK_MSG((WIFEXITED(status) && WEXITSTATUS(status) != 0) || (WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT),
              "status %d", status);
#else
    CHECK_MSG(WIFSIGNALED(status) && WTERMSIG(status) == SIGBUS, "status %d", status);
#endif

    snprintf(cmd, sizeof cmd, "rm -rf '%s' '%s'", a, b);
    CHECK(system(cmd) == 0);
    return check_summary("engine-mapguard");
}
