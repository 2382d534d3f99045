/* The test model folders (tests/hf/models, made by tests/hf/gen_*.py) and the source tree
 * the tests read them from: shared by the C tests through test_common_dep. */
#ifndef ATN_TEST_MODELS_H
#define ATN_TEST_MODELS_H

#include <stddef.h>

/* "$ATN_SOURCE_ROOT/rel" (the test environment sets ATN_SOURCE_ROOT; "./rel" without it)
 * into buf (cut to size bytes); returns buf. */
char *source_path(char *buf, size_t size, const char *rel);
/* The folder of the generated model name, "$ATN_SOURCE_ROOT/tests/hf/models/NAME", into buf
 * as source_path does; returns buf. */
char *hf_model_path(char *buf, size_t size, const char *name);

#endif
