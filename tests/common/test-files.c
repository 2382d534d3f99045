/* Reading fixtures: see test-files.h. */
#include "test-files.h"

#include <stdio.h>
#include <stdlib.h>

char *slurp(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *b = NULL;
    long n = -1;
    if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0)
        b = malloc((size_t)n + 1);
    if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
        free(b);
        b = NULL;
    }
    fclose(f);
    if (!b)
        return NULL;
    b[n] = '\0';
    if (len)
        *len = (size_t)n;
    return b;
}

cJSON *read_json(const char *path) {
    char *t = slurp(path, NULL);
    cJSON *j = t ? cJSON_Parse(t) : NULL;
    free(t);
    if (!j)
        fprintf(stderr, "cannot read %s\n", path);
    return j;
}

int32_t *json_ints(const cJSON *a, int32_t *n) {
    *n = a ? cJSON_GetArraySize(a) : 0;
    int32_t *v = malloc(((size_t)*n + 1) * sizeof *v);
    int32_t i = 0;
    for (const cJSON *e = a ? a->child : NULL; v && e; e = e->next)
        v[i++] = (int32_t)e->valuedouble;
    return v;
}
