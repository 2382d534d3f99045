/* The test model folders: see test-models.h. */
#include "test-models.h"

#include <stdio.h>
#include <stdlib.h>

char *source_path(char *buf, size_t size, const char *rel) {
    const char *src = getenv("ATN_SOURCE_ROOT");
    snprintf(buf, size, "%s/%s", src ? src : ".", rel);
    return buf;
}

char *hf_model_path(char *buf, size_t size, const char *name) {
    const char *src = getenv("ATN_SOURCE_ROOT");
    snprintf(buf, size, "%s/tests/hf/models/%s", src ? src : ".", name);
    return buf;
}
