/* The fuzz targets without libFuzzer: feeds every file named on the command line (or
 * found in a folder named there) through LLVMFuzzerTestOneInput.  Built with gcc in the
 * normal meson build, so the seed corpora and every crash input once fixed run in
 * `make test` (and under the sanitizers in `make test-asan`). */
#include "fuzz-common.h"

#include <dirent.h>

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int run_file(const char *path) {
    size_t len;
    uint8_t *data = fuzz_read(path, &len);
    /* an exactly sized copy, so reads past the end are caught under ASan */
    uint8_t *exact = malloc(len ? len : 1);
    memcpy(exact, data, len);
    free(data);
    LLVMFuzzerTestOneInput(exact, len);
    free(exact);
    return 1;
}

int main(int argc, char **argv) {
    int n = 0;
    for (int i = 1; i < argc; i++) {
        struct stat sb;
        if (stat(argv[i], &sb) != 0) {
            perror(argv[i]);
            return 1;
        }
        if (!S_ISDIR(sb.st_mode)) {
            n += run_file(argv[i]);
            continue;
        }
        DIR *d = opendir(argv[i]);
        if (!d) {
            perror(argv[i]);
            return 1;
        }
        char **names = NULL;
        size_t count = 0;
        for (struct dirent *e; (e = readdir(d));) {
            if (e->d_name[0] == '.')
                continue;
            names = realloc(names, (count + 1) * sizeof *names);
            names[count++] = strdup(e->d_name);
        }
        closedir(d);
        qsort(names, count, sizeof *names, cmp_str);
        for (size_t k = 0; k < count; k++) {
            char path[8192];
            snprintf(path, sizeof path, "%s/%s", argv[i], names[k]);
            fprintf(stderr, "%s\n", path);
            n += run_file(path);
            free(names[k]);
        }
        free(names);
    }
    printf("%d inputs ran without a failed check\n", n);
    return n > 0 ? 0 : 1;
}
