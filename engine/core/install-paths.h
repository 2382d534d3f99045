/* Where an attnscope program runs from: the build tree or an install prefix.
 *
 * The uninstalled program (build/app/attnscope, the test programs) uses the source tree's
 * data/ and the build tree's modules; an installed one (/usr/bin/attnscope from the Debian
 * package) uses only the install prefix, even when a source tree with the same absolute
 * path happens to exist on the machine.  Thread-safe: no state beyond /proc/self/exe. */
#ifndef ATN_INSTALL_PATHS_H
#define ATN_INSTALL_PATHS_H

#include <stdbool.h>
#include <stddef.h>

/* The folder of the running program (/proc/self/exe without its last component) in buf;
 * "" when it cannot be read or does not fit in len bytes. */
void atn_exe_dir(char *buf, size_t len);

/* True when the running program lies inside the build tree this binary was built in
 * (ATN_BUILD_DIR): an uninstalled run. */
bool atn_running_uninstalled(void);

#endif
