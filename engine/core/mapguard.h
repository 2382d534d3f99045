/* A model's weights never depend on the file staying as it was.  Weights are used in place
 * from a read-only file mapping (zero-copy open); a file that shrinks under it (truncated, or
 * overwritten in place by cp) would kill the process with SIGBUS on the next read.  The guard:
 * a process-wide SIGBUS handler that, for an address inside a registered mapping, maps
 * anonymous zero pages over the rest of that mapping, raises the mapping's flag and returns,
 * so the read goes on with zeros; the run then ends with "the file changed while open" (the
 * caller checks the flag after each forward), and before each forward the files are stat'ed
 * (size, mtime, inode) so a file rewritten in place is refused too.  A SIGBUS outside every
 * registered mapping goes to the handler that was there before (default: the process ends). */
#ifndef ATN_MAPGUARD_H
#define ATN_MAPGUARD_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

enum { ATN_MAPGUARD_MAX = 1024 };   /* mappings guarded at once (more: unguarded) */

/* Guards [ptr, ptr + len): a SIGBUS there sets *flag to 1.  False when the table is full or
 * the handler cannot be installed (the mapping is then used unguarded, as before). */
bool atn_mapguard_add(const void *ptr, size_t len, volatile sig_atomic_t *flag);
/* Stops guarding the mapping at ptr (call before munmap). */
void atn_mapguard_remove(const void *ptr);

#endif
