/* The target entry and the stack picker (atn-encdec-widgets.h). */
#include "atn-encdec-widgets.h"

#include <glib/gi18n.h>

#include "atn-encdec.h"

/* ---- the target entry ------------------------------------------------------------------ */

struct _AtnTargetEntry {
    GtkWidget parent_instance;
    GtkWidget *box;
    GtkEntry *entry;
    AtnSession *session;
    gboolean syncing;
};

G_DEFINE_FINAL_TYPE(AtnTargetEntry, atn_target_entry, GTK_TYPE_WIDGET)

static void target_on_model(AtnSession *s, GParamSpec *p, AtnTargetEntry *self) {
    AtnModelHandle *h = atn_session_get_model(s);
    const atn_model *m = h && atn_model_handle_has_weights(h) ? atn_model_handle_get_model(h) : NULL;
    gtk_widget_set_visible(GTK_WIDGET(self), m && atn_model_is_encoder_decoder(m));
}

static void target_on_changed(GtkEditable *e, AtnTargetEntry *self) {
    if (!self->syncing && self->session)
        atn_session_set_target(self->session, gtk_editable_get_text(e));
}

static void atn_target_entry_dispose(GObject *object) {
    AtnTargetEntry *self = ATN_TARGET_ENTRY(object);
    atn_target_entry_set_session(self, NULL);
    g_clear_pointer(&self->box, gtk_widget_unparent);
    G_OBJECT_CLASS(atn_target_entry_parent_class)->dispose(object);
}

static void atn_target_entry_class_init(AtnTargetEntryClass *klass) {
    G_OBJECT_CLASS(klass)->dispose = atn_target_entry_dispose;
    gtk_widget_class_set_layout_manager_type(GTK_WIDGET_CLASS(klass), GTK_TYPE_BIN_LAYOUT);
}

static void atn_target_entry_init(AtnTargetEntry *self) {
    self->box = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 6);
    gtk_widget_set_parent(self->box, GTK_WIDGET(self));
    /* Translators: the label before the second entry of an encoder-decoder (T5, BART, Marian):
       the text the decoder reads, e.g. the translation */
    GtkWidget *label = gtk_label_new_with_mnemonic(_("_Target"));
    self->entry = GTK_ENTRY(gtk_entry_new());
    gtk_widget_set_hexpand(GTK_WIDGET(self->entry), TRUE);
    gtk_label_set_mnemonic_widget(GTK_LABEL(label), GTK_WIDGET(self->entry));
    gtk_entry_set_placeholder_text(self->entry, _("The decoder's text, e.g. the translation (empty: its start token alone)"));
    gtk_widget_set_tooltip_text(GTK_WIDGET(self->entry),
                                _("An encoder–decoder reads the sentence above as its source and this as its "
                                  "target: the decoder's input, starting with its start token"));
    gtk_box_append(GTK_BOX(self->box), label);
    gtk_box_append(GTK_BOX(self->box), GTK_WIDGET(self->entry));
    g_signal_connect(self->entry, "changed", G_CALLBACK(target_on_changed), self);
    gtk_widget_set_visible(GTK_WIDGET(self), FALSE);
}

GtkWidget *atn_target_entry_new(void) { return g_object_new(ATN_TYPE_TARGET_ENTRY, NULL); }

void atn_target_entry_set_session(AtnTargetEntry *self, AtnSession *session) {
    g_return_if_fail(ATN_IS_TARGET_ENTRY(self));
    if (self->session)
        g_signal_handlers_disconnect_by_data(self->session, self);
    g_set_object(&self->session, session);
    if (!session)
        return;
    g_signal_connect(session, "notify::model", G_CALLBACK(target_on_model), self);
    self->syncing = TRUE;
    gtk_editable_set_text(GTK_EDITABLE(self->entry), atn_session_get_target(session));
    self->syncing = FALSE;
    target_on_model(session, NULL, self);
}

GtkEntry *atn_target_entry_get_entry(AtnTargetEntry *self) {
    g_return_val_if_fail(ATN_IS_TARGET_ENTRY(self), NULL);
    return self->entry;
}

/* ---- the stack picker ------------------------------------------------------------------ */

struct _AtnStackPicker {
    GtkWidget parent_instance;
    GtkWidget *box;
    GtkToggleButton *buttons[3];
    AtnSession *session;
    gboolean syncing;
};

G_DEFINE_FINAL_TYPE(AtnStackPicker, atn_stack_picker, GTK_TYPE_WIDGET)

static void picker_sync(AtnStackPicker *self) {
    AtnResult *r = self->session ? atn_session_get_result(self->session) : NULL;
    gtk_widget_set_visible(GTK_WIDGET(self), atn_result_is_encdec(r));
    int stack = self->session ? atn_session_get_stack(self->session) : ATN_STACK_ENCODER;
    self->syncing = TRUE;
    for (int k = 0; k < 3; k++)
        gtk_toggle_button_set_active(self->buttons[k], k == stack);
    self->syncing = FALSE;
}

static void picker_on_session(AtnSession *s, GParamSpec *p, AtnStackPicker *self) { picker_sync(self); }

static void picker_on_toggled(GtkToggleButton *b, AtnStackPicker *self) {
    if (self->syncing || !self->session || !gtk_toggle_button_get_active(b))
        return;
    for (int k = 0; k < 3; k++)
        if (b == self->buttons[k])
            atn_session_set_stack(self->session, k);
}

static void atn_stack_picker_dispose(GObject *object) {
    AtnStackPicker *self = ATN_STACK_PICKER(object);
    atn_stack_picker_set_session(self, NULL);
    g_clear_pointer(&self->box, gtk_widget_unparent);
    G_OBJECT_CLASS(atn_stack_picker_parent_class)->dispose(object);
}

static void atn_stack_picker_class_init(AtnStackPickerClass *klass) {
    G_OBJECT_CLASS(klass)->dispose = atn_stack_picker_dispose;
    gtk_widget_class_set_layout_manager_type(GTK_WIDGET_CLASS(klass), GTK_TYPE_BIN_LAYOUT);
}

static void atn_stack_picker_init(AtnStackPicker *self) {
    self->box = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 0);
    gtk_widget_add_css_class(self->box, "linked");
    gtk_widget_set_parent(self->box, GTK_WIDGET(self));
    for (int k = 0; k < 3; k++) {
        self->buttons[k] = GTK_TOGGLE_BUTTON(gtk_toggle_button_new_with_label(atn_encdec_stack_label(k)));
        gtk_widget_set_tooltip_text(GTK_WIDGET(self->buttons[k]), atn_encdec_stack_title(k));
        if (k > 0)
            gtk_toggle_button_set_group(self->buttons[k], self->buttons[0]);
        g_signal_connect(self->buttons[k], "toggled", G_CALLBACK(picker_on_toggled), self);
        gtk_box_append(GTK_BOX(self->box), GTK_WIDGET(self->buttons[k]));
    }
    gtk_toggle_button_set_active(self->buttons[0], TRUE);
    gtk_widget_set_visible(GTK_WIDGET(self), FALSE);
}

GtkWidget *atn_stack_picker_new(void) { return g_object_new(ATN_TYPE_STACK_PICKER, NULL); }

void atn_stack_picker_set_session(AtnStackPicker *self, AtnSession *session) {
    g_return_if_fail(ATN_IS_STACK_PICKER(self));
    if (self->session)
        g_signal_handlers_disconnect_by_data(self->session, self);
    g_set_object(&self->session, session);
    if (!session)
        return;
    g_signal_connect(session, "notify::result", G_CALLBACK(picker_on_session), self);
    g_signal_connect(session, "notify::stack", G_CALLBACK(picker_on_session), self);
    picker_sync(self);
}

GtkToggleButton *atn_stack_picker_get_button(AtnStackPicker *self, int kind) {
    g_return_val_if_fail(ATN_IS_STACK_PICKER(self) && kind >= 0 && kind < 3, NULL);
    return self->buttons[kind];
}
