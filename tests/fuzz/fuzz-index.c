/* Fuzz target: the sharded index model.safetensors.index.json, through the Hugging Face
 * loader on a folder with the catalogue's two good shards; the input is the index. */
#include "fuzz-hf-common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static const char *const files[] = {"config.json", "vocab.txt",
                                        "model-00001-of-00002.safetensors",
                                        "model-00002-of-00002.safetensors", NULL};
    const char *dir = fuzz_hf_folder("base-sharded", files);
    char path[1024];
    snprintf(path, sizeof path, "%s/model.safetensors.index.json", dir);
    fuzz_write(path, data, size);
    fuzz_hf_open_and_run(dir);
    return 0;
}
