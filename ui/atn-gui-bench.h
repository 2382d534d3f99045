/* The GUI benchmark harness (`attnscope --gui-bench`): drives the real window headlessly
 * (under Xvfb) and times what a person waits for — from a keystroke to the redrawn Head
 * view, a layer/head switch, the Model view's thumbnails.  Prints a report (or JSON). */
#pragma once

#include <gtk/gtk.h>

int atn_gui_bench_main(int argc, char **argv);

/* Draws one widget as the next frame would — its snapshot (re-run for what was invalidated,
 * cached render nodes reused for the rest), then the window's renderer — and returns the
 * pixels.  The widget must be mapped and allocated.  (GtkWidgetPaintable would only replay
 * the last frame's node.) */
GdkTexture *atn_gui_render_widget(GtkWidget *widget);
