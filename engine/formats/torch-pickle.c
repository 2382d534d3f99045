/* The restricted unpickler (see torch-pickle.h).  Values live in one list the result owns;
 * containers hold pointers, so memo entries and shared storages are shared, and nothing
 * is ever walked recursively (a self-containing list is harmless). */
#include "formats/torch-pickle.h"

#include "core/name-map.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum {
    G_ODICT, G_REBUILD_V2, G_REBUILD, G_REBUILD_PARAM, G_FIRST_TYPE,
} global_kind;

static const struct {
    const char *module, *name;
    int kind;
    atn_st_dtype dtype;
} allowed[] = {
    {"collections", "OrderedDict", G_ODICT, 0},
    {"torch._utils", "_rebuild_tensor_v2", G_REBUILD_V2, 0},
    {"torch._utils", "_rebuild_tensor", G_REBUILD, 0},
    {"torch._utils", "_rebuild_parameter", G_REBUILD_PARAM, 0},
    {"torch", "FloatStorage", G_FIRST_TYPE, ATN_ST_F32},
    {"torch", "HalfStorage", G_FIRST_TYPE, ATN_ST_F16},
    {"torch", "BFloat16Storage", G_FIRST_TYPE, ATN_ST_BF16},
    {"torch", "DoubleStorage", G_FIRST_TYPE, ATN_ST_F64},
    {"torch", "LongStorage", G_FIRST_TYPE, ATN_ST_I64},
    {"torch", "IntStorage", G_FIRST_TYPE, ATN_ST_I32},
    {"torch", "ShortStorage", G_FIRST_TYPE, ATN_ST_I16},
    {"torch", "CharStorage", G_FIRST_TYPE, ATN_ST_I8},
    {"torch", "ByteStorage", G_FIRST_TYPE, ATN_ST_U8},
    {"torch", "BoolStorage", G_FIRST_TYPE, ATN_ST_BOOL},
    {"torch", "float32", G_FIRST_TYPE, ATN_ST_F32},
    {"torch", "float16", G_FIRST_TYPE, ATN_ST_F16},
    {"torch", "bfloat16", G_FIRST_TYPE, ATN_ST_BF16},
    {"torch", "float64", G_FIRST_TYPE, ATN_ST_F64},
    {"torch", "int64", G_FIRST_TYPE, ATN_ST_I64},
    {"torch", "int32", G_FIRST_TYPE, ATN_ST_I32},
    {"torch", "int16", G_FIRST_TYPE, ATN_ST_I16},
    {"torch", "int8", G_FIRST_TYPE, ATN_ST_I8},
    {"torch", "uint8", G_FIRST_TYPE, ATN_ST_U8},
    {"torch", "bool", G_FIRST_TYPE, ATN_ST_BOOL},
};
enum { N_ALLOWED = sizeof allowed / sizeof allowed[0] };

struct atn_pickle {
    atn_pk_value **all;        /* every value made, for freeing */
    size_t n_all, cap_all;
    atn_pk_value *result;
    atn_pk_storage *storages;
    int32_t n_storages, cap_storages;
    atn_pk_tensor *tensors;
    int32_t n_tensors, cap_tensors;
};

typedef struct unpickler {
    const char *origin;
    const uint8_t *buf;
    size_t len, pos, op_at;
    atn_error *err;
    atn_pickle *p;
    atn_pk_value **stack;
    size_t sp, cap_stack;
    size_t *marks;
    size_t n_marks, cap_marks;
    atn_pk_value **memo;
    size_t cap_memo, memo_len;   /* memo_len: slots set (MEMOIZE's next index) */
    atn_name_map by_key;         /* storage key -> index (the engine's keyed table: the keys
                                    come from the file) */
    atn_status last;             /* the status of the last error set */
} unpickler;

static atn_status fail(unpickler *U, atn_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static atn_status fail(unpickler *U, atn_status st, const char *fmt, ...) {
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    U->last = st;
    return atn_error_set(U->err, st, "%s: byte %zu: %s", U->origin, U->op_at, msg);
}

static atn_status nomem(unpickler *U) {
    U->last = ATN_E_NOMEM;
    return atn_error_set(U->err, ATN_E_NOMEM, "%s: out of memory unpickling", U->origin);
}

static bool grow(void **ptr, size_t *cap, size_t need, size_t size) {
    if (need <= *cap)
        return true;
    size_t c = *cap ? *cap : 16;
    while (c < need)
        c *= 2;
    void *q = realloc(*ptr, c * size);
    if (!q)
        return false;
    *ptr = q;
    *cap = c;
    return true;
}

static const char *kind_name(const atn_pk_value *v) {
    static const char *const names[] = {
        [ATN_PK_NONE] = "None", [ATN_PK_BOOL] = "a bool", [ATN_PK_INT] = "an int",
        [ATN_PK_BIGINT] = "an int", [ATN_PK_FLOAT] = "a float", [ATN_PK_STR] = "a string",
        [ATN_PK_TUPLE] = "a tuple", [ATN_PK_LIST] = "a list", [ATN_PK_DICT] = "a dict",
        [ATN_PK_GLOBAL] = "a global", [ATN_PK_STORAGE] = "a storage",
        [ATN_PK_TENSOR] = "a tensor",
    };
    return names[v->kind];
}

static atn_pk_value *make(unpickler *U, atn_pk_kind kind) {
    atn_pickle *p = U->p;
    if (p->n_all >= ATN_PK_MAX_OBJECTS) {
        fail(U, ATN_E_FORMAT, "more than %d values (the limit)", ATN_PK_MAX_OBJECTS);
        return NULL;
    }
    atn_pk_value *v = calloc(1, sizeof *v);
    if (!v || !grow((void **)&p->all, &p->cap_all, p->n_all + 1, sizeof *p->all)) {
        free(v);
        nomem(U);
        return NULL;
    }
    p->all[p->n_all++] = v;
    v->kind = kind;
    return v;
}

static atn_status push(unpickler *U, atn_pk_value *v) {
    if (!v)
        return U->last ? U->last : ATN_E_NOMEM;
    if (U->sp >= ATN_PK_MAX_STACK)
        return fail(U, ATN_E_FORMAT, "the stack is deeper than %d values (the limit)",
                    ATN_PK_MAX_STACK);
    if (!grow((void **)&U->stack, &U->cap_stack, U->sp + 1, sizeof *U->stack))
        return nomem(U);
    U->stack[U->sp++] = v;
    return ATN_OK;
}

/* The bottom of the current mark frame (0 without a mark). */
static size_t frame(const unpickler *U) { return U->n_marks ? U->marks[U->n_marks - 1] : 0; }

static atn_status pop(unpickler *U, atn_pk_value **v, const char *op) {
    if (U->sp <= frame(U))
        return fail(U, ATN_E_FORMAT, "%s with an empty stack", op);
    *v = U->stack[--U->sp];
    return ATN_OK;
}

static atn_status top(unpickler *U, atn_pk_value **v, const char *op) {
    if (U->sp <= frame(U))
        return fail(U, ATN_E_FORMAT, "%s with an empty stack", op);
    *v = U->stack[U->sp - 1];
    return ATN_OK;
}

static atn_status add_item(unpickler *U, atn_pk_value *c, atn_pk_value *item) {
    if (!grow((void **)&c->items, &c->cap, c->n + 1, sizeof *c->items))
        return nomem(U);
    c->items[c->n++] = item;
    if (item->depth + 1 > c->depth)
        c->depth = item->depth + 1;
    if (c->depth > ATN_PK_MAX_NESTING)
        return fail(U, ATN_E_FORMAT, "containers nested deeper than %d (the limit)",
                    ATN_PK_MAX_NESTING);
    return ATN_OK;
}

static atn_status need(unpickler *U, size_t n) {
    if (U->len - U->pos < n)
        return atn_error_set(U->err, ATN_E_FORMAT, "%s: truncated: the pickle ends inside the "
                             "opcode at byte %zu", U->origin, U->op_at);
    return ATN_OK;
}

static uint64_t rd_le(const uint8_t *b, int n) {
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--)
        v = v << 8 | b[i];
    return v;
}

static atn_status push_int(unpickler *U, int64_t i) {
    atn_pk_value *v = make(U, ATN_PK_INT);
    if (v)
        v->i = i;
    return push(U, v);
}

static atn_status push_str(unpickler *U, size_t n) {
    atn_status st;
    if (n > ATN_PK_MAX_STRING)
        return fail(U, ATN_E_FORMAT, "a string of %zu bytes (the limit is %d)", n,
                    ATN_PK_MAX_STRING);
    if ((st = need(U, n)) != ATN_OK)
        return st;
    atn_pk_value *v = make(U, ATN_PK_STR);
    if (!v)
        return U->last ? U->last : ATN_E_NOMEM;
    char *s = malloc(n + 1);
    if (!s)
        return nomem(U);
    memcpy(s, U->buf + U->pos, n);
    s[n] = '\0';
    v->s = s;
    v->n = n;
    U->pos += n;
    return push(U, v);
}

/* A printable copy of a global's module or name for messages. */
static void shown(char *out, size_t size, const char *s) {
    size_t j = 0;
    for (; *s && j + 1 < size; s++)
        out[j++] = (unsigned char)*s >= 0x20 && (unsigned char)*s < 0x7f ? *s : '?';
    out[j] = '\0';
}

static atn_status push_global(unpickler *U, const char *module, const char *name) {
    for (int i = 0; i < N_ALLOWED; i++) {
        if (strcmp(allowed[i].module, module) == 0 && strcmp(allowed[i].name, name) == 0) {
            atn_pk_value *v = make(U, ATN_PK_GLOBAL);
            if (v)
                v->i = i;
            return push(U, v);
        }
    }
    char m[128], n[128];
    shown(m, sizeof m, module);
    shown(n, sizeof n, name);
    return atn_error_set(U->err, ATN_E_UNSUPPORTED, "%s: global %s.%s is not allowed (a "
                         "state_dict uses only collections.OrderedDict, torch._utils."
                         "_rebuild_tensor_v2 and the torch storage types)", U->origin, m, n);
}

static atn_status read_line(unpickler *U, char *out, size_t size) {
    size_t i = 0;
    while (U->pos < U->len && U->buf[U->pos] != '\n') {
        if (i + 1 >= size)
            return fail(U, ATN_E_FORMAT, "GLOBAL with a name longer than %zu bytes", size - 1);
        out[i++] = (char)U->buf[U->pos++];
    }
    if (U->pos >= U->len)
        return atn_error_set(U->err, ATN_E_FORMAT, "%s: truncated: the pickle ends inside the "
                             "GLOBAL at byte %zu", U->origin, U->op_at);
    U->pos++;
    out[i] = '\0';
    return ATN_OK;
}

static atn_status memo_put(unpickler *U, uint64_t idx) {
    atn_pk_value *v = NULL;
    atn_status st;
    if ((st = top(U, &v, "PUT")) != ATN_OK)
        return st;
    if (idx >= ATN_PK_MAX_MEMO)
        return fail(U, ATN_E_FORMAT, "memo index %llu is too large (the limit is %d)",
                    (unsigned long long)idx, ATN_PK_MAX_MEMO);
    size_t old = U->cap_memo;
    if (!grow((void **)&U->memo, &U->cap_memo, (size_t)idx + 1, sizeof *U->memo))
        return nomem(U);
    memset(U->memo + old, 0, (U->cap_memo - old) * sizeof *U->memo);
    if (!U->memo[idx])
        U->memo_len++;
    U->memo[idx] = v;
    return ATN_OK;
}

static atn_status memo_get(unpickler *U, uint64_t idx) {
    if (idx >= U->cap_memo || !U->memo[idx])
        return fail(U, ATN_E_FORMAT, "GET of memo slot %llu, which was never set",
                    (unsigned long long)idx);
    return push(U, U->memo[idx]);
}

/* The items above the top mark, which is removed; n gets their count. */
static atn_status pop_mark(unpickler *U, size_t *first, const char *op) {
    if (!U->n_marks)
        return fail(U, ATN_E_FORMAT, "%s without a MARK", op);
    *first = U->marks[--U->n_marks];
    return ATN_OK;
}

static atn_status make_tuple(unpickler *U, size_t first) {
    atn_pk_value *t = make(U, ATN_PK_TUPLE);
    atn_status st;
    if (!t)
        return U->last ? U->last : ATN_E_NOMEM;
    for (size_t i = first; i < U->sp; i++)
        if ((st = add_item(U, t, U->stack[i])) != ATN_OK)
            return st;
    U->sp = first;
    return push(U, t);
}

static bool is_int(const atn_pk_value *v) { return v->kind == ATN_PK_INT; }

static atn_status persistent_load(unpickler *U, atn_pk_value *pid) {
    atn_pickle *p = U->p;
    if (pid->kind != ATN_PK_TUPLE)
        return fail(U, ATN_E_FORMAT, "a persistent id that is %s, not a storage tuple "
                    "('storage', type, key, location, numel)", kind_name(pid));
    if (pid->n != 5 && pid->n != 6)
        return fail(U, ATN_E_FORMAT, "a persistent id tuple of %zu items, not a storage tuple "
                    "('storage', type, key, location, numel)", pid->n);
    atn_pk_value **it = pid->items;
    if (it[0]->kind != ATN_PK_STR || strcmp(it[0]->s, "storage") != 0)
        return fail(U, ATN_E_FORMAT, "a persistent id whose first item is not 'storage'");
    if (it[1]->kind != ATN_PK_GLOBAL || allowed[it[1]->i].kind != G_FIRST_TYPE)
        return fail(U, ATN_E_FORMAT, "a persistent id whose storage type is %s, not a torch "
                    "storage type", it[1]->kind == ATN_PK_GLOBAL ? allowed[it[1]->i].name
                                                                  : kind_name(it[1]));
    if (it[2]->kind != ATN_PK_STR || it[3]->kind != ATN_PK_STR || !is_int(it[4]) ||
        it[4]->i < 0)
        return fail(U, ATN_E_FORMAT, "a persistent id with a malformed key, location or size "
                    "(expected a string, a string and a non-negative int)");
    const char *key = it[2]->s, *root = key;
    uint64_t numel = (uint64_t)it[4]->i, view_offset = 0;
    if (pid->n == 6 && it[5]->kind != ATN_PK_NONE) {
        const atn_pk_value *vm = it[5];
        if (vm->kind != ATN_PK_TUPLE || vm->n != 3 || vm->items[0]->kind != ATN_PK_STR ||
            !is_int(vm->items[1]) || !is_int(vm->items[2]) || vm->items[1]->i < 0 ||
            vm->items[2]->i < 0)
            return fail(U, ATN_E_FORMAT, "a storage view that is not (key, offset, size)");
        key = vm->items[0]->s;
        view_offset = (uint64_t)vm->items[1]->i;
        uint64_t view_numel = (uint64_t)vm->items[2]->i;
        if (view_offset > numel || view_numel > numel - view_offset)
            return fail(U, ATN_E_FORMAT, "storage view '%.100s' (%llu elements at %llu) is "
                        "outside its storage '%.100s' of %llu elements", key,
                        (unsigned long long)view_numel, (unsigned long long)view_offset, root,
                        (unsigned long long)numel);
        numel = view_numel;
    }
    atn_st_dtype dtype = allowed[it[1]->i].dtype;
    size_t key_len = strlen(key);
    int32_t idx = atn_name_map_get_n(&U->by_key, key, key_len);
    if (idx >= 0) {
        const atn_pk_storage *s = &p->storages[idx];
        if (s->dtype != dtype || s->numel != numel || strcmp(s->root_key, root) != 0 ||
            s->view_offset != view_offset)
            return fail(U, ATN_E_FORMAT, "storage '%.100s' is named twice with different "
                        "types or sizes", key);
    } else {
        if (p->n_storages >= ATN_PK_MAX_STORAGES)
            return fail(U, ATN_E_FORMAT, "more than %d storages (the limit)",
                        ATN_PK_MAX_STORAGES);
        size_t cap = (size_t)p->cap_storages;
        if (!grow((void **)&p->storages, &cap, (size_t)p->n_storages + 1, sizeof *p->storages))
            return nomem(U);
        p->cap_storages = (int32_t)cap;
        idx = p->n_storages++;
        p->storages[idx] = (atn_pk_storage){key, root, dtype, numel, view_offset};
        if (atn_name_map_put_n(&U->by_key, key, key_len, idx, false, NULL) < 0)
            return nomem(U);
    }
    atn_pk_value *v = make(U, ATN_PK_STORAGE);
    if (v)
        v->i = idx;
    return push(U, v);
}

static atn_status int_tuple(unpickler *U, const atn_pk_value *t, int64_t *out, int *n,
                            const char *what) {
    if (t->kind != ATN_PK_TUPLE && t->kind != ATN_PK_LIST)
        return fail(U, ATN_E_FORMAT, "a tensor whose %s is %s, not a tuple", what,
                    kind_name(t));
    if (t->n > ATN_ST_MAX_DIMS)
        return fail(U, ATN_E_FORMAT, "a tensor with %zu dimensions (at most %d)", t->n,
                    ATN_ST_MAX_DIMS);
    for (size_t i = 0; i < t->n; i++) {
        if (!is_int(t->items[i]) || t->items[i]->i < 0)
            return fail(U, ATN_E_FORMAT, "a tensor whose %s[%zu] is %s (expected a "
                        "non-negative int)", what, i,
                        is_int(t->items[i]) ? "negative" : kind_name(t->items[i]));
        out[i] = t->items[i]->i;
    }
    *n = (int)t->n;
    return ATN_OK;
}

static atn_status rebuild_tensor(unpickler *U, const atn_pk_value *args, int kind) {
    atn_pickle *p = U->p;
    const char *fn = allowed[kind == G_REBUILD_V2 ? 1 : 2].name;
    bool ok = args->n >= 4 && (kind == G_REBUILD_V2 ? args->n == 6 || args->n == 7
                                                    : args->n == 4);
    if (!ok)
        return fail(U, ATN_E_FORMAT, "%s called with %zu arguments", fn, args->n);
    atn_pk_value **a = args->items;
    if (a[0]->kind != ATN_PK_STORAGE)
        return fail(U, ATN_E_FORMAT, "%s called on %s, not a storage", fn, kind_name(a[0]));
    if (!is_int(a[1]) || a[1]->i < 0)
        return fail(U, ATN_E_FORMAT, "%s with a storage offset that is %s", fn,
                    is_int(a[1]) ? "negative" : kind_name(a[1]));
    atn_pk_tensor t = {.storage = (int32_t)a[0]->i, .offset = (uint64_t)a[1]->i};
    int nd_stride = 0;
    atn_status st;
    if ((st = int_tuple(U, a[2], t.shape, &t.ndim, "size")) != ATN_OK ||
        (st = int_tuple(U, a[3], t.stride, &nd_stride, "stride")) != ATN_OK)
        return st;
    if (nd_stride != t.ndim)
        return fail(U, ATN_E_FORMAT, "a tensor with %d sizes but %d strides", t.ndim,
                    nd_stride);
    if (p->n_tensors >= ATN_PK_MAX_TENSORS)
        return fail(U, ATN_E_FORMAT, "more than %d tensors (the limit)", ATN_PK_MAX_TENSORS);
    size_t cap = (size_t)p->cap_tensors;
    if (!grow((void **)&p->tensors, &cap, (size_t)p->n_tensors + 1, sizeof *p->tensors))
        return nomem(U);
    p->cap_tensors = (int32_t)cap;
    p->tensors[p->n_tensors] = t;
    atn_pk_value *v = make(U, ATN_PK_TENSOR);
    if (v)
        v->i = p->n_tensors++;
    return push(U, v);
}

static atn_status reduce(unpickler *U) {
    atn_pk_value *args = NULL, *fn = NULL;
    atn_status st;
    if ((st = pop(U, &args, "REDUCE")) || (st = pop(U, &fn, "REDUCE")))
        return st;
    if (fn->kind != ATN_PK_GLOBAL)
        return fail(U, ATN_E_FORMAT, "REDUCE calls %s, which is not a callable", kind_name(fn));
    if (args->kind != ATN_PK_TUPLE)
        return fail(U, ATN_E_FORMAT, "REDUCE of %s.%s with %s as its arguments",
                    allowed[fn->i].module, allowed[fn->i].name, kind_name(args));
    switch (allowed[fn->i].kind) {
    case G_ODICT:
        if (args->n != 0)
            return fail(U, ATN_E_FORMAT, "collections.OrderedDict called with %zu arguments "
                        "(a state_dict calls it with none)", args->n);
        return push(U, make(U, ATN_PK_DICT));
    case G_REBUILD_V2:
    case G_REBUILD:
        return rebuild_tensor(U, args, allowed[fn->i].kind);
    case G_REBUILD_PARAM:
        if (args->n != 3 || args->items[0]->kind != ATN_PK_TENSOR)
            return fail(U, ATN_E_FORMAT, "torch._utils._rebuild_parameter called with %zu "
                        "arguments (expected a tensor, requires_grad, hooks)", args->n);
        return push(U, args->items[0]);
    default:
        return fail(U, ATN_E_FORMAT, "REDUCE calls %s.%s, which a state_dict never calls",
                    allowed[fn->i].module, allowed[fn->i].name);
    }
}

static atn_status setitems(unpickler *U, size_t first, const char *op) {
    if (first == 0 || ((U->sp - first) & 1))
        return fail(U, ATN_E_FORMAT, "%s with an odd number of items or no dict", op);
    atn_pk_value *d = U->stack[first - 1];
    if (d->kind != ATN_PK_DICT)
        return fail(U, ATN_E_FORMAT, "%s on %s, not a dict", op, kind_name(d));
    atn_status st;
    for (size_t i = first; i < U->sp; i++)
        if ((st = add_item(U, d, U->stack[i])) != ATN_OK)
            return st;
    U->sp = first;
    return ATN_OK;
}

static atn_status appends(unpickler *U, size_t first, const char *op) {
    if (first == 0)
        return fail(U, ATN_E_FORMAT, "%s with no list", op);
    atn_pk_value *l = U->stack[first - 1];
    if (l->kind != ATN_PK_LIST)
        return fail(U, ATN_E_FORMAT, "%s on %s, not a list", op, kind_name(l));
    atn_status st;
    for (size_t i = first; i < U->sp; i++)
        if ((st = add_item(U, l, U->stack[i])) != ATN_OK)
            return st;
    U->sp = first;
    return ATN_OK;
}

static atn_status run(unpickler *U) {
    atn_status st = ATN_OK;
    char module[256], name[256];
    for (;;) {
        U->op_at = U->pos;
        if (U->pos >= U->len)
            return atn_error_set(U->err, ATN_E_FORMAT, "%s: truncated: the pickle ends at byte "
                                 "%zu without a STOP", U->origin, U->pos);
        uint8_t op = U->buf[U->pos++];
        atn_pk_value *v = NULL, *w = NULL;
        size_t first = 0;
        switch (op) {
        case 0x80: /* PROTO */
            if ((st = need(U, 1)))
                return st;
            if (U->buf[U->pos] > 5)
                return fail(U, ATN_E_FORMAT, "pickle protocol %u (at most 5 is known)",
                            U->buf[U->pos]);
            U->pos++;
            break;
        case 0x95: /* FRAME: a length hint */
            if ((st = need(U, 8)))
                return st;
            U->pos += 8;
            break;
        case '.': /* STOP */
            if (U->sp != 1 || U->n_marks)
                return fail(U, ATN_E_FORMAT, "STOP with %zu values and %zu marks on the stack "
                            "(expected one value)", U->sp, U->n_marks);
            U->p->result = U->stack[0];
            return ATN_OK;
        case '(': /* MARK */
            if (U->n_marks >= ATN_PK_MAX_STACK)
                return fail(U, ATN_E_FORMAT, "more than %d nested MARKs (the limit)",
                            ATN_PK_MAX_STACK);
            if (!grow((void **)&U->marks, &U->cap_marks, U->n_marks + 1, sizeof *U->marks))
                return nomem(U);
            U->marks[U->n_marks++] = U->sp;
            break;
        case '}': st = push(U, make(U, ATN_PK_DICT)); break;
        case ']': st = push(U, make(U, ATN_PK_LIST)); break;
        case ')': st = push(U, make(U, ATN_PK_TUPLE)); break;
        case 'N': st = push(U, make(U, ATN_PK_NONE)); break;
        case 0x88: /* NEWTRUE */
        case 0x89: /* NEWFALSE */
            if ((v = make(U, ATN_PK_BOOL)))
                v->i = op == 0x88;
            st = push(U, v);
            break;
        case 't': /* TUPLE */
            if (!(st = pop_mark(U, &first, "TUPLE")))
                st = make_tuple(U, first);
            break;
        case 0x85: case 0x86: case 0x87: { /* TUPLE1..3 */
            size_t n = (size_t)(op - 0x84);
            if (U->sp < frame(U) + n)
                return fail(U, ATN_E_FORMAT, "TUPLE%zu with too few values", n);
            st = make_tuple(U, U->sp - n);
            break;
        }
        case 'J': /* BININT */
            if ((st = need(U, 4)))
                return st;
            st = push_int(U, (int32_t)(uint32_t)rd_le(U->buf + U->pos, 4));
            U->pos += 4;
            break;
        case 'K': /* BININT1 */
            if ((st = need(U, 1)))
                return st;
            st = push_int(U, U->buf[U->pos++]);
            break;
        case 'M': /* BININT2 */
            if ((st = need(U, 2)))
                return st;
            st = push_int(U, (int64_t)rd_le(U->buf + U->pos, 2));
            U->pos += 2;
            break;
        case 0x8a: { /* LONG1 */
            if ((st = need(U, 1)))
                return st;
            size_t n = U->buf[U->pos++];
            if ((st = need(U, n)))
                return st;
            const uint8_t *b = U->buf + U->pos;
            U->pos += n;
            if (n <= 8) {
                uint64_t u = n ? rd_le(b, (int)n) : 0;
                if (n && n < 8 && (b[n - 1] & 0x80))
                    u |= ~(uint64_t)0 << (8 * n);
                st = push_int(U, (int64_t)u);
            } else {
                if (!(v = make(U, ATN_PK_BIGINT)))
                    return U->last ? U->last : ATN_E_NOMEM;
                char *s = malloc(n);
                if (!s)
                    return nomem(U);
                memcpy(s, b, n);
                v->s = s;
                v->n = n;
                st = push(U, v);
            }
            break;
        }
        case 'G': { /* BINFLOAT, big-endian */
            if ((st = need(U, 8)))
                return st;
            uint64_t u = 0;
            for (int i = 0; i < 8; i++)
                u = u << 8 | U->buf[U->pos + (size_t)i];
            U->pos += 8;
            if ((v = make(U, ATN_PK_FLOAT)))
                memcpy(&v->f, &u, sizeof v->f);
            st = push(U, v);
            break;
        }
        case 'X': /* BINUNICODE */
        case 'T': /* BINSTRING */
        case 'B': /* BINBYTES */
            if ((st = need(U, 4)))
                return st;
            {
                uint64_t n = rd_le(U->buf + U->pos, 4);
                U->pos += 4;
                st = push_str(U, (size_t)n);
            }
            break;
        case 0x8c: /* SHORT_BINUNICODE */
        case 'U':  /* SHORT_BINSTRING */
        case 'C':  /* SHORT_BINBYTES */
            if ((st = need(U, 1)))
                return st;
            st = push_str(U, U->buf[U->pos++]);
            break;
        case 'q': /* BINPUT */
            if ((st = need(U, 1)))
                return st;
            st = memo_put(U, U->buf[U->pos++]);
            break;
        case 'r': /* LONG_BINPUT */
            if ((st = need(U, 4)))
                return st;
            st = memo_put(U, rd_le(U->buf + U->pos, 4));
            U->pos += 4;
            break;
        case 0x94: /* MEMOIZE */
            st = memo_put(U, U->memo_len);
            break;
        case 'h': /* BINGET */
            if ((st = need(U, 1)))
                return st;
            st = memo_get(U, U->buf[U->pos++]);
            break;
        case 'j': /* LONG_BINGET */
            if ((st = need(U, 4)))
                return st;
            st = memo_get(U, rd_le(U->buf + U->pos, 4));
            U->pos += 4;
            break;
        case 'c': /* GLOBAL */
            if ((st = read_line(U, module, sizeof module)) ||
                (st = read_line(U, name, sizeof name)))
                return st;
            st = push_global(U, module, name);
            break;
        case 0x93: /* STACK_GLOBAL */
            if ((st = pop(U, &w, "STACK_GLOBAL")) || (st = pop(U, &v, "STACK_GLOBAL")))
                return st;
            if (v->kind != ATN_PK_STR || w->kind != ATN_PK_STR)
                return fail(U, ATN_E_FORMAT, "STACK_GLOBAL of %s and %s", kind_name(v),
                            kind_name(w));
            st = push_global(U, v->s, w->s);
            break;
        case 'Q': /* BINPERSID */
            if (!(st = pop(U, &v, "BINPERSID")))
                st = persistent_load(U, v);
            break;
        case 'R': /* REDUCE */
            st = reduce(U);
            break;
        case 'b': /* BUILD: a state_dict's _metadata; nothing is set */
            if ((st = pop(U, &w, "BUILD")) || (st = top(U, &v, "BUILD")))
                return st;
            if (v->kind != ATN_PK_DICT && v->kind != ATN_PK_TENSOR)
                return fail(U, ATN_E_FORMAT, "BUILD on %s", kind_name(v));
            break;
        case 's': /* SETITEM */
            if (U->sp < frame(U) + 3)
                return fail(U, ATN_E_FORMAT, "SETITEM with too few values");
            st = setitems(U, U->sp - 2, "SETITEM");
            break;
        case 'u': /* SETITEMS */
            if (!(st = pop_mark(U, &first, "SETITEMS")))
                st = setitems(U, first, "SETITEMS");
            break;
        case 'a': /* APPEND */
            if (U->sp < frame(U) + 2)
                return fail(U, ATN_E_FORMAT, "APPEND with too few values");
            st = appends(U, U->sp - 1, "APPEND");
            break;
        case 'e': /* APPENDS */
            if (!(st = pop_mark(U, &first, "APPENDS")))
                st = appends(U, first, "APPENDS");
            break;
        case '0': /* POP */
            if (U->sp > frame(U))
                U->sp--;
            else if (!(st = pop_mark(U, &first, "POP")))
                U->sp = first;
            break;
        case '1': /* POP_MARK */
            if (!(st = pop_mark(U, &first, "POP_MARK")))
                U->sp = first;
            break;
        case '2': /* DUP */
            if (!(st = top(U, &v, "DUP")))
                st = push(U, v);
            break;
        default: {
            char c[16];
            if (op >= 0x21 && op < 0x7f)
                snprintf(c, sizeof c, "'%c'", op);
            else
                snprintf(c, sizeof c, "0x%02x", op);
            return fail(U, ATN_E_FORMAT, "opcode %s is not allowed (not one a state_dict "
                        "uses)", c);
        }
        }
        if (st != ATN_OK)
            return st;
    }
}

atn_status atn_pickle_load(const char *origin, const void *buf, size_t len, size_t *used,
                           atn_pickle **out, atn_error *err) {
    *out = NULL;
    unpickler U = {.origin = origin, .buf = buf, .len = len, .err = err};
    if (!(U.p = calloc(1, sizeof *U.p)))
        return atn_error_set(err, ATN_E_NOMEM, "%s: out of memory unpickling", origin);
    atn_status st = run(&U);
    free(U.stack);
    free(U.marks);
    free(U.memo);
    atn_name_map_clear(&U.by_key);
    if (st != ATN_OK) {
        atn_pickle_free(U.p);
        return st;
    }
    if (used)
        *used = U.pos;
    *out = U.p;
    return ATN_OK;
}

void atn_pickle_free(atn_pickle *p) {
    if (!p)
        return;
    for (size_t i = 0; i < p->n_all; i++) {
        atn_pk_value *v = p->all[i];
        if (v->kind == ATN_PK_STR || v->kind == ATN_PK_BIGINT)
            free((void *)v->s);
        free(v->items);
        free(v);
    }
    free(p->all);
    free(p->storages);
    free(p->tensors);
    free(p);
}

const atn_pk_value *atn_pickle_result(const atn_pickle *p) { return p->result; }
int32_t atn_pickle_n_storages(const atn_pickle *p) { return p->n_storages; }
const atn_pk_storage *atn_pickle_storage(const atn_pickle *p, int32_t i) {
    return i >= 0 && i < p->n_storages ? &p->storages[i] : NULL;
}
int32_t atn_pickle_n_tensors(const atn_pickle *p) { return p->n_tensors; }
const atn_pk_tensor *atn_pickle_tensor(const atn_pickle *p, int32_t i) {
    return i >= 0 && i < p->n_tensors ? &p->tensors[i] : NULL;
}
