/* The CUDA module as a file: it loads with every symbol resolved (RTLD_NOW), exports the
 * one entry point and nothing else of ours, speaks this program's backend ABI, and its
 * probe answers either "usable, with devices" or "not usable" with a reason that names the
 * driver or the device.  Also the loader's refusals of broken modules.
 * The entry point's name carries the ABI version, so a module of an older version (its
 * atn_cuda_backend_v1) is refused for the missing name before its table is read.
 * Usage: test-cuda-module MODULE FAKE_ABI FAKE_LAYOUT FAKE_NOENTRY FAKE_OLD
 * MODULE is "" when the build had no nvcc: then only the refusals are checked. */
#include "check.h"
#include "forward/backend.h"

#include <dlfcn.h>
#include <unistd.h>

static void check_refused(const char *path, const char *needle) {
    atn_error err = {0};
    const atn_backend *b = atn_backend_open_module(path, &err);
    CHECK_MSG(b == NULL, "%s was accepted", path);
    CHECK(err.status == ATN_E_DEVICE);
    CHECK_MSG(strstr(err.message, needle) != NULL, "%s: message \"%s\" lacks \"%s\"", path, err.message, needle);
    fprintf(stderr, "refused as expected: %s\n", err.message);
}

int main(int argc, char **argv) {
    if (argc != 6) {
        fprintf(stderr, "usage: %s MODULE FAKE_ABI FAKE_LAYOUT FAKE_NOENTRY FAKE_OLD\n", argv[0]);
        return 2;
    }
    char entry_name[64];
    snprintf(entry_name, sizeof entry_name, "atn_cuda_backend_v%u", (unsigned)ATN_BACKEND_ABI_VERSION);
    CHECK_MSG(strcmp(ATN_CUDA_ENTRY_POINT, entry_name) == 0 && ATN_BACKEND_ABI_VERSION > 1,
              "entry point %s for ABI version %u", ATN_CUDA_ENTRY_POINT, (unsigned)ATN_BACKEND_ABI_VERSION);
    check_refused(argv[5], "has no " ATN_CUDA_ENTRY_POINT);
    check_refused(argv[2], "ABI version");
    check_refused(argv[3], "struct sizes differ");
    check_refused(argv[4], "has no " ATN_CUDA_ENTRY_POINT);
    check_refused("/nonexistent/attnscope-cuda.so", "could not be loaded");
    char junk[] = "/tmp/attnscope-not-a-module-XXXXXX";   /* a text file is not a module either */
    int fd = mkstemp(junk);
    CHECK(fd >= 0);
    if (fd >= 0) {
        CHECK(write(fd, "not ELF\n", 8) == 8);
        close(fd);
        check_refused(junk, "could not be loaded");
        unlink(junk);
    }
    const char *path = argv[1];
    if (!path[0]) {
        check_summary("cuda-module");
        fprintf(stderr, "SKIP: this build has no CUDA module (nvcc was not found); only the refusals were checked\n");
        return check_failures ? 1 : 77;
    }

    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    CHECK_MSG(h != NULL, "dlopen %s: %s", path, dlerror());
    if (!h)
        return check_summary("cuda-module");
    atn_backend_entry_fn entry = (atn_backend_entry_fn)(uintptr_t)dlsym(h, ATN_CUDA_ENTRY_POINT);
    CHECK_MSG(entry != NULL, "no %s in %s", ATN_CUDA_ENTRY_POINT, path);
    /* the kernels' launchers and the table's functions stay inside the module */
    CHECK(dlsym(h, "atn_cu_softmax") == NULL);
    CHECK(dlsym(h, "cuda_forward") == NULL);
    if (!entry)
        return check_summary("cuda-module");
    const atn_backend *b = entry();
    CHECK(b != NULL);
    CHECK(b->abi_version == ATN_BACKEND_ABI_VERSION);
    static const atn_backend_layout want = ATN_BACKEND_LAYOUT_INIT;
    CHECK(memcmp(&b->layout, &want, sizeof want) == 0);
    CHECK_STR(b->name, "cuda");
    CHECK(b->probe && b->device_count && b->device_info && b->init && b->upload && b->forward && b->state_free);

    atn_error err = {0};
    const atn_backend *b2 = atn_backend_open_module(path, &err);
    CHECK_MSG(b2 == b, "the engine's loader refused it: %s", err.message);

    atn_error perr = {0};
    int score = b->probe(&perr);
    if (score <= 0) {
        fprintf(stderr, "probe: not usable here: %s\n", perr.message);
        CHECK(perr.status == ATN_E_DEVICE);
        CHECK_MSG(strstr(perr.message, "driver") || strstr(perr.message, "device"), "reason \"%s\"", perr.message);
        CHECK(b->device_count() == 0);
        atn_backend_device dev;
        CHECK(b->device_info(0, &dev, &err) != ATN_OK);
        CHECK(b->init(&err) == ATN_E_DEVICE);
    } else {
        int32_t count = b->device_count();
        CHECK(count > 0);
        atn_backend_device dev;
        CHECK_MSG(b->device_info(0, &dev, &err) == ATN_OK, "%s", err.message);
        fprintf(stderr, "probe: %d device(s); 0: %s, %.1f GiB, compute capability %d.%d; %s\n", count, dev.name,
                dev.total_bytes / 1073741824.0, dev.cc_major, dev.cc_minor, dev.runtime);
        CHECK(dev.name[0] != 0);
        CHECK(dev.total_bytes > 0);
        CHECK(dev.cc_major * 10 + dev.cc_minor >= 75);
        CHECK(b->device_info(count, &dev, &err) == ATN_E_INVALID);
    }
    /* the same answer the second time, without probing again */
    atn_error perr2 = {0};
    CHECK(b->probe(&perr2) == score);
    CHECK_STR(perr2.message, perr.message);
    return check_summary("cuda-module");
}
