/* AtnApplication: the GtkApplication — app actions (preferences, about, quit), keyboard
 * accelerators, the stylesheet, translations, and the command-line options of the window
 * (--model, --text, --view). */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define ATN_TYPE_APPLICATION (atn_application_get_type())
G_DECLARE_FINAL_TYPE(AtnApplication, atn_application, ATN, APPLICATION, GtkApplication)

AtnApplication *atn_application_new(void);

/* Binds the gettext domain to the build tree's po/ when running uninstalled (the program
 * lives under the build folder), else to the installed locale folder.  Call once, early. */
void atn_gui_init_i18n(void);
/* The language the interface speaks, as a tag: "en" untranslated, "zh-cn" in Chinese (the
 * translation says; the locale may be C.UTF-8).  After atn_gui_init_i18n. */
const char *atn_gui_language(void);
/* Loads the stylesheet for the default display (once; the application does it at startup). */
void atn_gui_load_css(void);

G_END_DECLS
