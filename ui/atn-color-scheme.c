/* Following the system's light/dark preference through the desktop portal. */
#include "atn-color-scheme.h"

#define PORTAL_BUS "org.freedesktop.portal.Desktop"
#define PORTAL_PATH "/org/freedesktop/portal/desktop"
#define PORTAL_IFACE "org.freedesktop.portal.Settings"

static void apply(GVariant *value) {
    /* Read returns v(v(u)) on older portals, v(u) on newer ones: unwrap every variant */
    g_autoptr(GVariant) v = g_variant_ref(value);
    while (v && g_variant_is_of_type(v, G_VARIANT_TYPE_VARIANT)) {
        GVariant *inner = g_variant_get_variant(v);
        g_variant_unref(v);
        v = inner;
    }
    if (!v || !g_variant_is_of_type(v, G_VARIANT_TYPE_UINT32))
        return;
    guint32 scheme = g_variant_get_uint32(v);   /* 0 no preference, 1 dark, 2 light */
    GtkSettings *settings = gtk_settings_get_default();
    if (settings)
        g_object_set(settings, "gtk-application-prefer-dark-theme", scheme == 1, NULL);
}

static void on_changed(GDBusProxy *proxy, const char *sender, const char *signal, GVariant *params, gpointer data) {
    if (g_strcmp0(signal, "SettingChanged") != 0)
        return;
    const char *ns = NULL, *key = NULL;
    g_autoptr(GVariant) value = NULL;
    g_variant_get(params, "(&s&sv)", &ns, &key, &value);
    if (!g_strcmp0(ns, "org.freedesktop.appearance") && !g_strcmp0(key, "color-scheme"))
        apply(value);
}

static void on_read(GObject *source, GAsyncResult *res, gpointer data) {
    g_autoptr(GVariant) ret = g_dbus_proxy_call_finish(G_DBUS_PROXY(source), res, NULL);
    if (!ret)
        return;
    g_autoptr(GVariant) value = NULL;
    g_variant_get(ret, "(v)", &value);
    apply(value);
}

static void on_proxy(GObject *source, GAsyncResult *res, gpointer data) {
    GDBusProxy *proxy = g_dbus_proxy_new_for_bus_finish(res, NULL);
    if (!proxy)
        return;   /* no session bus or no portal: keep GTK's own choice */
    g_signal_connect(proxy, "g-signal", G_CALLBACK(on_changed), NULL);
    g_dbus_proxy_call(proxy, "Read", g_variant_new("(ss)", "org.freedesktop.appearance", "color-scheme"),
                      G_DBUS_CALL_FLAGS_NONE, 2000, NULL, on_read, NULL);
    /* the proxy lives as long as the process: it carries the change signal */
}

void atn_color_scheme_follow_system(void) {
    static gboolean started;
    if (started)
        return;
    started = TRUE;
    if (!g_getenv("DBUS_SESSION_BUS_ADDRESS"))
        return;   /* no session bus: GDBus would try to autolaunch one */
    g_dbus_proxy_new_for_bus(G_BUS_TYPE_SESSION, G_DBUS_PROXY_FLAGS_DO_NOT_AUTO_START_AT_CONSTRUCTION, NULL,
                             PORTAL_BUS, PORTAL_PATH, PORTAL_IFACE, NULL, on_proxy, NULL);
}
