/* Light or dark following the system, without libadwaita: the XDG desktop portal's
 * org.freedesktop.appearance color-scheme (GNOME, KDE, ...) sets GtkSettings'
 * gtk-application-prefer-dark-theme, now and whenever the user changes it.  Without a portal
 * the theme GTK picked stays (it already honours gtk-theme-name, e.g. Adwaita-dark). */
#pragma once

#include <gtk/gtk.h>

/* Starts following the system (asynchronously; never blocks, never fails loudly). */
void atn_color_scheme_follow_system(void);
