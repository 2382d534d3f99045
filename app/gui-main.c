/* The GUI entry point: main() calls this when no sub-command is given (app/main.c declares
 * it weak, so a build without GTK still links).  Sub-commands never get here, so they never
 * need a display. */
#include <string.h>

#include "atn-application.h"
#include "atn-gui-bench.h"

int attnscope_gui_main(int argc, char **argv);

int attnscope_gui_main(int argc, char **argv) {
    atn_gui_init_i18n();
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--gui-bench"))
            return atn_gui_bench_main(argc, argv);
    g_autoptr(AtnApplication) app = atn_application_new();
    return g_application_run(G_APPLICATION(app), argc, argv);
}
