/* Where an attnscope program runs from (see install-paths.h). */
#include "core/install-paths.h"

#include "config.h"

#include <string.h>
#include <unistd.h>

void atn_exe_dir(char *buf, size_t len) {
    if (len == 0)
        return;
    ssize_t r = readlink("/proc/self/exe", buf, len - 1);
    if (r <= 0 || (size_t)r >= len - 1) {
        buf[0] = 0;
        return;
    }
    buf[r] = 0;
    char *slash = strrchr(buf, '/');
    if (slash)
        *slash = 0;
}

bool atn_running_uninstalled(void) {
    char dir[4096];
    atn_exe_dir(dir, sizeof dir);
    size_t bl = strlen(ATN_BUILD_DIR);
    return dir[0] && strncmp(dir, ATN_BUILD_DIR, bl) == 0 && (dir[bl] == '/' || dir[bl] == 0);
}
