/* The Model view (ui/atn-model-grid-view.c) in a real window under Xvfb: clicking a head
 * opens it in the Head view.
 *
 * Run with --tap (meson does).  Without a display it reports "1..0 # SKIP no display". */
#include "ui-test-util.h"

/* Model view: clicking a thumbnail opens that head in the Head view. */
static void test_model_grid_click(void) {
    AtnWindow *win = new_window();
    open_and_wait(win, f32_model);
    type_and_wait(win, "the cat sat");
    show_view(win, "model");
    GtkWidget *view = atn_window_get_view_widget(win, "model");
    AtnModelGrid *grid = atn_model_grid_view_get_grid(ATN_MODEL_GRID_VIEW(view));
    int w = 0, h = 0;
    g_autoptr(GBytes) pix = render_widget(view, &w, &h);
    gboolean clicked = FALSE;
    int gw = gtk_widget_get_width(GTK_WIDGET(grid)), gh = gtk_widget_get_height(GTK_WIDGET(grid));
    for (int y = 0; y < gh && !clicked; y += 3)
        for (int x = 0; x < gw && !clicked; x += 3) {
            int l, hd;
            if (atn_model_grid_head_at(grid, x, y, &l, &hd) && l == 1 && hd == 2) {
                click(GTK_WIDGET(grid), x + 4, y + 4);
                clicked = TRUE;
            }
        }
    g_assert_true(clicked);
    AtnSession *s = atn_window_get_session(win);
    g_assert_cmpint(atn_session_get_layer(s), ==, 1);
    g_assert_cmpint(atn_session_get_head(s), ==, 2);
    g_assert_cmpstr(atn_window_get_view(win), ==, "head");
    destroy_window(win);
}

int main(int argc, char **argv) {
    if (!ui_test_init(&argc, &argv))
        return 0;
    g_test_add_func("/ui/model-grid-click", test_model_grid_click);
    return g_test_run();
}
