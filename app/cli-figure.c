/* The command line's one figure writer: see cli-figure.h. */
#include "cli-figure.h"
#include "cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int cli_write_figure(const char *path, atn_output_format fmt, double width, double height,
                     double scale, atn_draw_fn draw, void *user, const char *folder) {
    atn_error err = {0};
    unsigned char *data = NULL;
    size_t len = 0;
    if (atn_render_to_memory(fmt, width, height, scale, draw, user, &data, &len, &err)) {
        atn_error_prefix(&err, "%s", path);
        return cli_fail(&err);
    }
    if (folder && mkdir(folder, 0777) != 0 && errno != EEXIST) {
        cli_error("%s: cannot create the folder: %s", folder, strerror(errno));
        free(data);
        return CLI_EXIT_USAGE;
    }
    cli_atomic_file af;
    bool ok = cli_atomic_open(&af, path);
    if (ok) {
        fwrite(data, 1, len, af.f);   /* a failed write shows at the close */
        ok = cli_atomic_close(&af, true);
    }
    free(data);
    return ok || cli_interrupted() ? CLI_EXIT_OK : CLI_EXIT_USAGE;
}
