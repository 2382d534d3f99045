/* Downloading from the Hugging Face Hub into the shared cache with libcurl (hub.h).
 *
 * The requests and headers are huggingface_hub's (file_download.py, hf_api.py):
 *   GET  ENDPOINT/api/models/ID/revision/REV?blobs=true   the commit ("sha") and the files
 *        ("siblings": rfilename, size, lfs {sha256, size})
 *   HEAD ENDPOINT/ID/resolve/COMMIT/FILE                   without following redirects to
 *        another host (relative ones, a renamed repository, are followed): X-Repo-Commit,
 *        X-Linked-Etag or ETag (the blob's name), X-Linked-Size or Content-Length, and
 *        Location (the CDN) for LFS files
 *   GET  the Location (or the resolve URL)                 redirects followed; "Range:
 *        bytes=N-" to resume a .incomplete blob
 * with "Authorization: Bearer TOKEN" on the Hub's own host only.
 * Over 1,000 lines on purpose: one protocol, read top to bottom beside huggingface_hub's
 * file_download.py (environment, HTTP, the plan, the download into the cache). */
#define _GNU_SOURCE
#include "hub.h"

#include "hf-cache.h"
#include "core/json.h"   /* the engine's one JSON parser (docs/ARCHITECTURE.md, "Layers") */
#include "sha1.h"
#include "sha256.h"

#include <cjson/cJSON.h>
#include <curl/curl.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "config.h"

enum { PATHN = 4096, URLN = 8192, SMALL_MAX = 16 << 20, RETRIES = 5 };

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static void curl_init_once(void) { curl_global_init(CURL_GLOBAL_DEFAULT); }

/* ---- environment -------------------------------------------------------------------- */

bool atn_hub_offline(void) {
    const char *v = getenv("HF_HUB_OFFLINE");
    if (!v)
        return false;
    return !strcasecmp(v, "1") || !strcasecmp(v, "true") || !strcasecmp(v, "yes") || !strcasecmp(v, "on");
}

static void trim(char *s) {
    size_t n = strlen(s);
    while (n > 0 && isspace((unsigned char)s[n - 1]))
        s[--n] = '\0';
    size_t k = 0;
    while (s[k] && isspace((unsigned char)s[k]))
        k++;
    memmove(s, s + k, n - k + 1);
}

/* HF_TOKEN, HUGGING_FACE_HUB_TOKEN, then the token file; "" when none. */
static void read_token(char *out, size_t len) {
    out[0] = '\0';
    const char *v = getenv("HF_TOKEN");
    if (!v || !*v)
        v = getenv("HUGGING_FACE_HUB_TOKEN");
    if (v && *v) {
        snprintf(out, len, "%s", v);
        trim(out);
        return;
    }
    char path[PATHN];
    const char *tp = getenv("HF_TOKEN_PATH"), *home = getenv("HF_HOME"), *xdg = getenv("XDG_CACHE_HOME"),
               *uh = getenv("HOME");
    int k;
    if (tp && *tp)
        k = snprintf(path, sizeof path, "%s", tp);
    else if (home && *home)
        k = snprintf(path, sizeof path, "%s/token", home);
    else if (xdg && *xdg)
        k = snprintf(path, sizeof path, "%s/huggingface/token", xdg);
    else if (uh && *uh)
        k = snprintf(path, sizeof path, "%s/.cache/huggingface/token", uh);
    else
        return;
    if (k < 0 || (size_t)k >= sizeof path)
        return;
    if (path[0] == '~' && path[1] == '/' && uh) {
        char tmp[PATHN];
        if (snprintf(tmp, sizeof tmp, "%s%s", uh, path + 1) >= (int)sizeof tmp)
            return;
        memcpy(path, tmp, sizeof path);
    }
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    size_t n = fread(out, 1, len - 1, f);
    out[n] = '\0';
    fclose(f);
    trim(out);
    /* one line: a token never holds a newline */
    char *nl = strpbrk(out, "\r\n");
    if (nl)
        *nl = '\0';
}

/* HF_ENDPOINT without a trailing '/'.  A "user:password@" in it is taken out into userinfo
 * (given to libcurl for the endpoint's own host only): it never appears in a URL the
 * messages show. */
static void endpoint_of(char *out, size_t len, char *userinfo, size_t ulen) {
    const char *v = getenv("HF_ENDPOINT");
    snprintf(out, len, "%s", v && *v ? v : "https://huggingface.co");
    userinfo[0] = '\0';
    char *host = strstr(out, "://");
    host = host ? host + 3 : out;
    size_t auth_len = strcspn(host, "/?#");
    char *at = memrchr(host, '@', auth_len);
    if (at) {
        snprintf(userinfo, ulen, "%.*s", (int)(at - host), host);
        memmove(host, at + 1, strlen(at + 1) + 1);
    }
    size_t n = strlen(out);
    while (n > 0 && out[n - 1] == '/')
        out[--n] = '\0';
}

/* Percent-encoding as Python's quote(s, safe=keep) ('/' kept for file names, not for
 * revisions). */
static bool quote(const char *s, bool keep_slash, char *out, size_t len) {
    static const char hex[] = "0123456789ABCDEF";
    size_t k = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        bool plain = isalnum(*p) || *p == '_' || *p == '.' || *p == '-' || *p == '~' || (keep_slash && *p == '/');
        if (k + 4 >= len)
            return false;
        if (plain) {
            out[k++] = (char)*p;
        } else {
            out[k++] = '%';
            out[k++] = hex[*p >> 4];
            out[k++] = hex[*p & 15];
        }
    }
    out[k] = '\0';
    return true;
}

/* ---- HTTP --------------------------------------------------------------------------- */

typedef struct headers {
    char commit[64], etag[160], linked_etag[160], location[URLN], error_code[64], error_message[512];
    char content_encoding[64];   /* "" or "identity" is what was asked for */
    int64_t content_length, linked_size;
} headers;

typedef struct membuf {
    char *data;
    size_t len, cap, max;
    bool too_big;
} membuf;

typedef struct xfer {
    /* writing to a file */
    FILE *f;
    const char *path;
    int write_errno;
    int64_t written;          /* bytes written this request */
    int64_t size;             /* the announced size of the file; -1: unknown */
    int64_t have;             /* what the file held before: a 206 answer may add size - have,
                                 a 200 (the Range ignored) size */
    CURL *curl;
    bool over_cap;
    const headers *h;         /* this request's headers (Content-Encoding) */
    bool encoded;
    /* progress */
    atn_hub_progress_fn progress;
    void *user_data;
    atn_hub_progress *p;
    int64_t base_file, base_all;   /* done before this request */
    bool cancelled;
    double samples_t[16];
    int64_t samples_b[16];
    int n_samples;
    double last_report;
} xfer;

static void headers_reset(headers *h) {
    memset(h, 0, sizeof *h);
    h->content_length = h->linked_size = -1;
}

static bool header_is(const char *line, size_t n, const char *name, const char **value, size_t *vn) {
    size_t k = strlen(name);
    if (n <= k || strncasecmp(line, name, k) != 0 || line[k] != ':')
        return false;
    const char *v = line + k + 1;
    const char *end = line + n;
    while (v < end && (*v == ' ' || *v == '\t'))
        v++;
    while (end > v && (end[-1] == '\r' || end[-1] == '\n' || end[-1] == ' '))
        end--;
    *value = v;
    *vn = (size_t)(end - v);
    return true;
}

static void copy_value(char *dst, size_t len, const char *v, size_t vn) {
    if (vn >= len)
        vn = len - 1;
    memcpy(dst, v, vn);
    dst[vn] = '\0';
}

static size_t on_header(char *line, size_t size, size_t nitems, void *ud) {
    headers *h = ud;
    size_t n = size * nitems;
    const char *v;
    size_t vn;
    if (n >= 5 && !strncmp(line, "HTTP/", 5)) {   /* a new response (after a redirect): forget the last */
        headers_reset(h);
        return n;
    }
    char num[32];
    if (header_is(line, n, "X-Repo-Commit", &v, &vn))
        copy_value(h->commit, sizeof h->commit, v, vn);
    else if (header_is(line, n, "ETag", &v, &vn))
        copy_value(h->etag, sizeof h->etag, v, vn);
    else if (header_is(line, n, "X-Linked-Etag", &v, &vn))
        copy_value(h->linked_etag, sizeof h->linked_etag, v, vn);
    else if (header_is(line, n, "Location", &v, &vn))
        copy_value(h->location, sizeof h->location, v, vn);
    else if (header_is(line, n, "X-Error-Code", &v, &vn))
        copy_value(h->error_code, sizeof h->error_code, v, vn);
    else if (header_is(line, n, "X-Error-Message", &v, &vn))
        copy_value(h->error_message, sizeof h->error_message, v, vn);
    else if (header_is(line, n, "Content-Encoding", &v, &vn))
        copy_value(h->content_encoding, sizeof h->content_encoding, v, vn);
    else if (header_is(line, n, "Content-Length", &v, &vn)) {
        copy_value(num, sizeof num, v, vn);
        h->content_length = strtoll(num, NULL, 10);
    } else if (header_is(line, n, "X-Linked-Size", &v, &vn)) {
        copy_value(num, sizeof num, v, vn);
        h->linked_size = strtoll(num, NULL, 10);
    }
    return n;
}

static size_t on_mem(char *data, size_t size, size_t nmemb, void *ud) {
    membuf *b = ud;
    size_t n = size * nmemb;
    if (b->len + n > b->max) {
        b->too_big = true;
        return 0;
    }
    if (b->len + n + 1 > b->cap) {
        size_t cap = (b->len + n + 1) * 2;
        char *d = realloc(b->data, cap);
        if (!d)
            return 0;
        b->data = d;
        b->cap = cap;
    }
    memcpy(b->data + b->len, data, n);
    b->len += n;
    b->data[b->len] = '\0';
    return n;
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static bool report(xfer *x, bool force) {
    if (!x->progress || !x->p)
        return true;
    double t = now_s();
    if (!force && t - x->last_report < 0.1)
        return true;
    x->last_report = t;
    atn_hub_progress *p = x->p;
    p->file_done = x->base_file + x->written;
    p->done = x->base_all + x->written;
    /* the rate over the last samples (one every quarter second, sixteen kept) */
    int k = x->n_samples;
    if (k == 0 || t - x->samples_t[(k - 1) % 16] >= 0.25) {
        x->samples_t[k % 16] = t;
        x->samples_b[k % 16] = p->done;
        x->n_samples = ++k;
    }
    if (k >= 2) {
        int first = k > 16 ? k - 16 : 0, last = k - 1;
        double dt = x->samples_t[last % 16] - x->samples_t[first % 16];
        p->rate = dt > 0 ? (double)(x->samples_b[last % 16] - x->samples_b[first % 16]) / dt : 0;
    }
    p->eta = p->rate > 0 && p->total >= 0 ? (double)(p->total - p->done) / p->rate : -1;
    if (!x->progress(p, x->user_data)) {
        x->cancelled = true;
        return false;
    }
    return true;
}

static bool identity_encoding(const headers *h) {
    return !h->content_encoding[0] || !strcasecmp(h->content_encoding, "identity");
}

static size_t on_file(char *data, size_t size, size_t nmemb, void *ud) {
    xfer *x = ud;
    size_t n = size * nmemb;
    if (x->h && !identity_encoding(x->h)) {   /* asked for identity: a compressed body is refused */
        x->encoded = true;
        return 0;
    }
    if (x->size >= 0) {   /* never more than the Hub announced */
        long code = 0;
        curl_easy_getinfo(x->curl, CURLINFO_RESPONSE_CODE, &code);
        int64_t cap = code == 206 ? x->size - x->have : x->size;
        if ((int64_t)n > cap - x->written) {
            x->over_cap = true;
            return 0;
        }
    }
    errno = 0;
    if (n && fwrite(data, 1, n, x->f) != n) {
        x->write_errno = errno ? errno : EIO;
        return 0;
    }
    x->written += (int64_t)n;
    if (!report(x, false))
        return 0;
    return n;
}

static int on_xferinfo(void *ud, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal, curl_off_t ulnow) {
    xfer *x = ud;
    (void)dltotal; (void)dlnow; (void)ultotal; (void)ulnow;
    return report(x, false) ? 0 : 1;   /* also called while no data comes: cancel stays prompt */
}

typedef struct hub {
    char endpoint[1024];
    char host[512];          /* the endpoint's origin (scheme://host:port): the only one that gets the token */
    char token[1024];
    char auth[1100];
    char cache[PATHN];
    char repo[PATHN];        /* CACHE/models--ORG--NAME */
    char id[ATN_HF_ID_MAX];
    char userinfo[512];      /* from HF_ENDPOINT's "user:password@", for its host only */
    long answer_timeout;     /* seconds an API or HEAD answer may take in all */
    long lock_timeout;       /* seconds to wait for another process's lock on a blob */
    atn_hub_keep_going_fn keep_going;   /* while planning */
    void *kg_data;
    xfer *x;                 /* while downloading: its progress callback decides */
    bool cancelled;
    atn_error *err;
} hub;

/* Asked by libcurl about once a second while a request waits, and by the lock wait: false
 * once the caller cancelled. */
static bool hub_keep_going(hub *H) {
    if (H->x && !report(H->x, false))
        H->cancelled = true;
    else if (!H->x && H->keep_going && !H->keep_going(H->kg_data))
        H->cancelled = true;
    return !H->cancelled;
}

static int on_wait(void *ud, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal, curl_off_t ulnow) {
    (void)dltotal; (void)dlnow; (void)ultotal; (void)ulnow;
    return hub_keep_going(ud) ? 0 : 1;
}

/* "scheme://host:port" of a URL, lowercased, into out. */
static void origin_of(const char *url, char *out, size_t len) {
    const char *s = strstr(url, "://");
    size_t n = s ? (size_t)(s - url) + 3 + strcspn(s + 3, "/?#") : strcspn(url, "/?#");
    if (n >= len)
        n = len - 1;
    for (size_t i = 0; i < n; i++)
        out[i] = (char)tolower((unsigned char)url[i]);
    out[n] = '\0';
}

static CURL *new_handle(hub *H, const char *url, headers *h, struct curl_slist **list) {
    pthread_once(&curl_once, curl_init_once);
    CURL *c = curl_easy_init();
    if (!c)
        return NULL;
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_USERAGENT, "attnscope/" ATN_VERSION);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, h);
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 10L);
    /* a connection that delivers nothing for 30 s is dropped (then resumed) rather than hung */
    curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1L);
    curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, 30L);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(c, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(c, CURLOPT_MAXREDIRS, 10L);
    /* every wait can be cancelled: a silent server is asked about once a second */
    curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_wait);
    curl_easy_setopt(c, CURLOPT_XFERINFODATA, (void *)H);
    *list = curl_slist_append(NULL, "Accept-Encoding: identity");
    /* the token goes to the Hub's own origin only, never to the CDN it redirects to (and
       curl >= 7.58 drops a custom Authorization header when a redirect changes the host) */
    char origin[512];
    origin_of(url, origin, sizeof origin);
    if (H->token[0] && *list && !strcmp(origin, H->host))
        *list = curl_slist_append(*list, H->auth);
    if (H->userinfo[0] && !strcmp(origin, H->host))
        curl_easy_setopt(c, CURLOPT_USERPWD, H->userinfo);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, *list);
    headers_reset(h);
    return c;
}

/* The message for a transport failure. */
static atn_status curl_failed(hub *H, CURLcode rc, const char *url, const char *what) {
    if (rc == CURLE_ABORTED_BY_CALLBACK && H->cancelled)
        return atn_error_set(H->err, ATN_E_CANCELLED, "%s: cancelled", what);
    const char *hint = "";
    if (rc == CURLE_COULDNT_RESOLVE_HOST || rc == CURLE_COULDNT_CONNECT || rc == CURLE_COULDNT_RESOLVE_PROXY ||
        rc == CURLE_OPERATION_TIMEDOUT || rc == CURLE_SSL_CONNECT_ERROR)
        hint = "; check the network connection, set HF_ENDPOINT to a mirror, or HF_HUB_OFFLINE=1 to use only "
               "the cache";
    return atn_error_set(H->err, ATN_E_IO, "%s: cannot reach %s (%s)%s", what, url, curl_easy_strerror(rc), hint);
}

/* The message for an HTTP error answer. */
static atn_status http_failed(hub *H, long code, const headers *h, const char *what, const char *rev) {
    if (code == 401 || code == 403 || !strcmp(h->error_code, "GatedRepo")) {
        if (!strcmp(h->error_code, "GatedRepo"))
            return atn_error_set(H->err, ATN_E_IO, "%s: the model is gated (HTTP %ld): accept its conditions at "
                                 "%s/%s, then set HF_TOKEN to a token of that account (or log in with "
                                 "`huggingface-cli login`)", what, code, H->endpoint, H->id);
        return atn_error_set(H->err, ATN_E_IO, "%s: access refused (HTTP %ld): the repository is private or gated, "
                             "or does not exist; %s", what, code,
                             H->token[0] ? "the token in HF_TOKEN (or the saved token file) cannot read it"
                                         : "set HF_TOKEN to a token that can read it (or log in with "
                                           "`huggingface-cli login`)");
    }
    if (code == 404) {
        if (!strcmp(h->error_code, "RevisionNotFound"))
            return atn_error_set(H->err, ATN_E_IO, "%s: no revision \"%s\" in %s on %s (HTTP 404)", what, rev, H->id,
                                 H->endpoint);
        if (!strcmp(h->error_code, "EntryNotFound"))
            return atn_error_set(H->err, ATN_E_IO, "%s: no such file in %s on %s (HTTP 404)", what, H->id,
                                 H->endpoint);
        return atn_error_set(H->err, ATN_E_IO, "%s: no model repository \"%s\" on %s (HTTP 404)", what, H->id,
                             H->endpoint);
    }
    return atn_error_set(H->err, ATN_E_IO, "%s: %s answered HTTP %ld%s%s", what, H->endpoint, code,
                         h->error_message[0] ? ": " : "", h->error_message);
}

/* A metadata answer (API, HEAD) that took longer than its bound. */
static atn_status timed_out(hub *H, const char *url, const char *what) {
    return atn_error_set(H->err, ATN_E_IO, "%s: no complete answer from %s within %ld s (HF_HUB_ETAG_TIMEOUT); "
                         "check the network or the mirror", what, url, H->answer_timeout);
}

/* GET url into memory (redirects followed). */
static atn_status get_mem(hub *H, const char *url, membuf *b, const char *what, const char *rev) {
    headers h;
    struct curl_slist *list = NULL;
    CURL *c = new_handle(H, url, &h, &list);
    if (!c)
        return atn_error_set(H->err, ATN_E_NOMEM, "out of memory");
    curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 1L);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_mem);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, b);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, H->answer_timeout);
    CURLcode rc = curl_easy_perform(c);
    long code = 0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
    curl_easy_cleanup(c);
    curl_slist_free_all(list);
    if (b->too_big)
        return atn_error_set(H->err, ATN_E_FORMAT, "%s: the answer from %s is larger than %d bytes", what, url,
                             SMALL_MAX);
    if (rc == CURLE_OPERATION_TIMEDOUT)
        return timed_out(H, url, what);
    if (rc != CURLE_OK)
        return curl_failed(H, rc, url, what);
    if (code < 200 || code >= 300)
        return http_failed(H, code, &h, what, rev);
    if (!identity_encoding(&h))
        return atn_error_set(H->err, ATN_E_FORMAT, "%s: %s answered with Content-Encoding \"%s\" though asked for "
                             "identity: refused", what, url, h.content_encoding);
    if (!b->data) {
        b->data = calloc(1, 1);
        if (!b->data)
            return atn_error_set(H->err, ATN_E_NOMEM, "out of memory");
    }
    return ATN_OK;
}

static void strip_etag(char *e) {
    char *s = e;
    if (!strncmp(s, "W/", 2))
        s += 2;
    size_t n = strlen(s);
    while (n > 0 && s[n - 1] == '"')
        s[--n] = '\0';
    while (*s == '"')
        s++;
    memmove(e, s, strlen(s) + 1);
}

/* HEAD of a file's resolve URL: the metadata and where to GET it. */
typedef struct meta {
    char commit[64], etag[160], url[URLN];
    int64_t size;
} meta;

static atn_status head_file(hub *H, const char *commit, const char *file, meta *m) {
    char qf[PATHN], url[URLN];
    if (!quote(file, true, qf, sizeof qf) ||
        snprintf(url, sizeof url, "%s/%s/resolve/%s/%s", H->endpoint, H->id, commit, qf) >= (int)sizeof url)
        return atn_error_set(H->err, ATN_E_INVALID, "%s: file name too long", file);
    for (int hop = 0; hop < 10; hop++) {
        headers h;
        struct curl_slist *list = NULL;
        CURL *c = new_handle(H, url, &h, &list);
        if (!c)
            return atn_error_set(H->err, ATN_E_NOMEM, "out of memory");
        curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
        curl_easy_setopt(c, CURLOPT_TIMEOUT, H->answer_timeout);
        CURLcode rc = curl_easy_perform(c);
        long code = 0;
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
        curl_easy_cleanup(c);
        curl_slist_free_all(list);
        if (rc == CURLE_OPERATION_TIMEDOUT)
            return timed_out(H, url, file);
        if (rc != CURLE_OK)
            return curl_failed(H, rc, url, file);
        if (code >= 300 && code < 400 && h.location[0] == '/') {
            /* relative: the same Hub under another path (a renamed repository); follow */
            const char *scheme_end = strstr(H->endpoint, "://");
            const char *path_start = scheme_end ? strchr(scheme_end + 3, '/') : NULL;
            size_t origin = path_start ? (size_t)(path_start - H->endpoint) : strlen(H->endpoint);
            char next[URLN];
            if (snprintf(next, sizeof next, "%.*s%s", (int)origin, H->endpoint, h.location) >= (int)sizeof next)
                return atn_error_set(H->err, ATN_E_FORMAT, "%s: redirect too long", file);
            memcpy(url, next, sizeof url);
            continue;
        }
        if (code >= 400)
            return http_failed(H, code, &h, file, commit);
        if (code >= 300 && !h.location[0])
            return atn_error_set(H->err, ATN_E_FORMAT, "%s: HTTP %ld from %s without a Location", file, code, url);
        snprintf(m->commit, sizeof m->commit, "%s", h.commit);
        snprintf(m->etag, sizeof m->etag, "%s", h.linked_etag[0] ? h.linked_etag : h.etag);
        strip_etag(m->etag);
        m->size = h.linked_size >= 0 ? h.linked_size : h.content_length;
        snprintf(m->url, sizeof m->url, "%s", code >= 300 ? h.location : url);
        if (!m->etag[0])
            return atn_error_set(H->err, ATN_E_FORMAT, "%s: %s sent no ETag or X-Linked-Etag for it: cannot name "
                                 "the blob (is HF_ENDPOINT a Hugging Face Hub?)", file, url);
        for (const char *p = m->etag; *p; p++)
            if (!(isalnum((unsigned char)*p) || *p == '-' || *p == '_'))
                return atn_error_set(H->err, ATN_E_FORMAT, "%s: ETag \"%s\" from %s is not a blob name", file,
                                     m->etag, url);
        return ATN_OK;
    }
    return atn_error_set(H->err, ATN_E_FORMAT, "%s: too many redirects from %s", file, url);
}

/* ---- the plan ----------------------------------------------------------------------- */

void atn_hub_plan_free(atn_hub_plan *plan) {
    if (!plan)
        return;
    for (int32_t i = 0; i < plan->n_files; i++)
        free(plan->files[i].name);
    free(plan->files);
    free(plan->id);
    free(plan->revision);
    free(plan->commit);
    free(plan->endpoint);
    free(plan->cache_dir);
    free(plan->snapshot);
    free(plan);
}

static atn_status hub_init(hub *H, const char *id, atn_error *err) {
    memset(H, 0, sizeof *H);
    H->err = err;
    snprintf(H->id, sizeof H->id, "%s", id);
    endpoint_of(H->endpoint, sizeof H->endpoint, H->userinfo, sizeof H->userinfo);
    origin_of(H->endpoint, H->host, sizeof H->host);
    read_token(H->token, sizeof H->token);
    /* a line break inside the token would end the Authorization header and start another */
    for (const char *t = H->token; *t; t++)
        if ((unsigned char)*t < 0x20 || *t == 0x7f)
            return atn_error_set(err, ATN_E_INVALID, "the Hugging Face token (HF_TOKEN, HUGGING_FACE_HUB_TOKEN or "
                                 "the token file) holds a control character (byte %d, e.g. a line break): refusing "
                                 "to send it", (int)(t - H->token));
    const char *tv = getenv("HF_HUB_ETAG_TIMEOUT");
    char *tend = NULL;
    long secs = tv && *tv ? strtol(tv, &tend, 10) : 0;
    H->answer_timeout = tv && *tv && !*tend && secs > 0 && secs <= 3600 ? secs : 60;
    const char *lv = getenv("ATTNSCOPE_HUB_LOCK_TIMEOUT");
    char *lend = NULL;
    long lsecs = lv && *lv ? strtol(lv, &lend, 10) : 0;
    H->lock_timeout = lv && *lv && !*lend && lsecs > 0 && lsecs <= 86400 ? lsecs : ATN_HUB_LOCK_TIMEOUT_DEFAULT;
    snprintf(H->auth, sizeof H->auth, "Authorization: Bearer %s", H->token);
    if (!atn_hf_cache_dir(H->cache, sizeof H->cache))
        return atn_error_set(err, ATN_E_IO, "no Hugging Face cache folder: HOME is not set (set HF_HOME or "
                             "HF_HUB_CACHE)");
    char folder[ATN_HF_ID_MAX + 16];
    atn_status st = atn_hf_repo_folder_name(id, folder, sizeof folder, err);
    if (st != ATN_OK)
        return st;
    if (snprintf(H->repo, sizeof H->repo, "%s/%s", H->cache, folder) >= (int)sizeof H->repo)
        return atn_error_set(err, ATN_E_INVALID, "%s: cache path too long", H->cache);
    return ATN_OK;
}

/* The repository's files, sorted by name: planning is O(n log n) in the number of files and
 * shards (a linear search per shard took 77 s for 60k shards). */
typedef struct sibling {
    const char *name;
    int64_t size;
    const char *sha256;
    bool planned;            /* already in the plan */
} sibling;

static int sibling_cmp(const void *a, const void *b) {
    return strcmp(((const sibling *)a)->name, ((const sibling *)b)->name);
}

static sibling *find_sib(sibling *s, int n, const char *prefix, const char *name) {
    char full[PATHN];
    if (snprintf(full, sizeof full, "%s%s", prefix, name) >= (int)sizeof full)
        return NULL;
    sibling key = {.name = full};
    return n > 0 ? bsearch(&key, s, (size_t)n, sizeof *s, sibling_cmp) : NULL;
}

static atn_status add_plan_file(atn_hub_plan *P, sibling *s) {
    if (s->planned)
        return ATN_OK;
    atn_hub_file *f = P->files;
    if ((P->n_files & (P->n_files - 1)) == 0) {   /* 0, 1, 2, 4, ...: double the array */
        f = realloc(P->files, (size_t)(P->n_files ? 2 * P->n_files : 1) * sizeof *f);
        if (!f)
            return ATN_E_NOMEM;
    }
    s->planned = true;
    P->files = f;
    f = &P->files[P->n_files];
    memset(f, 0, sizeof *f);
    if (!(f->name = strdup(s->name)))
        return ATN_E_NOMEM;
    f->size = s->size;
    f->lfs = s->sha256 != NULL;
    snprintf(f->sha256, sizeof f->sha256, "%s", s->sha256 ? s->sha256 : "");
    P->n_files++;
    return ATN_OK;
}

/* A small file of the repository (modules.json, an index): from the snapshot when it is
 * there, else fetched. */
static atn_status read_small(hub *H, const atn_hub_plan *P, const char *file, membuf *b) {
    char local[PATHN];
    if (snprintf(local, sizeof local, "%s/%s", P->snapshot, file) < (int)sizeof local) {
        FILE *f = fopen(local, "rb");
        if (f) {
            char buf[65536];
            size_t n;
            while ((n = fread(buf, 1, sizeof buf, f)) > 0)
                if (on_mem(buf, 1, n, b) != n) {
                    fclose(f);
                    return atn_error_set(H->err, ATN_E_FORMAT, "%s: larger than %d bytes", local, SMALL_MAX);
                }
            fclose(f);
            if (!b->data && !(b->data = calloc(1, 1)))
                return atn_error_set(H->err, ATN_E_NOMEM, "out of memory");
            return ATN_OK;
        }
    }
    char qf[PATHN], url[URLN];
    if (!quote(file, true, qf, sizeof qf) ||
        snprintf(url, sizeof url, "%s/%s/resolve/%s/%s", H->endpoint, H->id, P->commit, qf) >= (int)sizeof url)
        return atn_error_set(H->err, ATN_E_INVALID, "%s: file name too long", file);
    return get_mem(H, url, b, file, P->commit);
}

/* The shards an index names (weight_map's values). */
static atn_status add_shards(hub *H, atn_hub_plan *P, sibling *sibs, int n, const char *prefix,
                             const char *index) {
    char name[PATHN];
    snprintf(name, sizeof name, "%s%s", prefix, index);
    membuf b = {.max = SMALL_MAX};
    atn_status st = read_small(H, P, name, &b);
    if (st != ATN_OK) {
        free(b.data);
        return st;
    }
    char origin[PATHN + ATN_HF_ID_MAX + 8];
    snprintf(origin, sizeof origin, "%s in %s", name, H->id);
    cJSON *root = NULL;
    st = atn_json_parse(b.data, b.len, origin, 0, &root, H->err);
    free(b.data);
    if (st != ATN_OK)
        return st;
    const cJSON *map = cJSON_GetObjectItemCaseSensitive(root, "weight_map");
    if (!cJSON_IsObject(map)) {
        cJSON_Delete(root);
        return atn_error_set(H->err, ATN_E_FORMAT, "%s in %s: no \"weight_map\" object", name, H->id);
    }
    const cJSON *e;
    cJSON_ArrayForEach(e, map) {
        if (!cJSON_IsString(e) || strchr(e->valuestring, '/') || strstr(e->valuestring, "..")) {
            cJSON_Delete(root);
            return atn_error_set(H->err, ATN_E_FORMAT, "%s in %s: weight_map[\"%s\"] is not a file name of the "
                                 "folder", name, H->id, e->string);
        }
        sibling *s = find_sib(sibs, n, prefix, e->valuestring);
        if (!s) {
            atn_error_set(H->err, ATN_E_FORMAT, "%s in %s: shard \"%s\" is not in the repository", name, H->id,
                          e->valuestring);
            cJSON_Delete(root);
            return ATN_E_FORMAT;
        }
        if ((st = add_plan_file(P, s)) != ATN_OK) {
            cJSON_Delete(root);
            return atn_error_set(H->err, st, "out of memory");
        }
    }
    cJSON_Delete(root);
    return ATN_OK;
}

static const char *const tokenizer_names[] = {
    "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "added_tokens.json", "vocab.txt",
    "vocab.json", "merges.txt", "sentencepiece.bpe.model", "spiece.model", "tokenizer.model", NULL};

static atn_status choose(hub *H, atn_hub_plan *P, sibling *sibs, int n) {
    atn_status st;
    char prefix[PATHN] = "";
    sibling *mj = find_sib(sibs, n, "", "modules.json");
    if (mj && !find_sib(sibs, n, "", "config.json")) {
        /* sentence-transformers with the transformer in a sub-folder: modules.json says which */
        if ((st = add_plan_file(P, mj)) != ATN_OK)
            return atn_error_set(H->err, st, "out of memory");
        membuf b = {.max = SMALL_MAX};
        if ((st = read_small(H, P, "modules.json", &b)) != ATN_OK) {
            free(b.data);
            return st;
        }
        char origin[ATN_HF_ID_MAX + 32];
        snprintf(origin, sizeof origin, "modules.json in %s", H->id);
        cJSON *root = NULL;
        st = atn_json_parse(b.data, b.len, origin, 0, &root, H->err);
        free(b.data);
        if (st != ATN_OK)
            return st;
        const cJSON *m;
        const char *path = NULL;
        cJSON_ArrayForEach(m, root) {
            const cJSON *t = cJSON_GetObjectItemCaseSensitive(m, "type"), *p = cJSON_GetObjectItemCaseSensitive(m, "path");
            if (cJSON_IsString(t) && !strcmp(t->valuestring, "sentence_transformers.models.Transformer") &&
                cJSON_IsString(p)) {
                path = p->valuestring;
                break;
            }
        }
        if (!path || path[0] == '/' || strstr(path, "..")) {
            cJSON_Delete(root);
            return atn_error_set(H->err, ATN_E_FORMAT, "modules.json in %s: no sentence_transformers.models."
                                 "Transformer module with a path inside the repository", H->id);
        }
        while (path[0] == '.' && path[1] == '/')
            path += 2;
        if (*path)
            snprintf(prefix, sizeof prefix, "%s%s", path, path[strlen(path) - 1] == '/' ? "" : "/");
        cJSON_Delete(root);
    } else if (mj && (st = add_plan_file(P, mj)) != ATN_OK) {
        return atn_error_set(H->err, st, "out of memory");
    }
    sibling *cfg = find_sib(sibs, n, prefix, "config.json");
    if (!cfg)
        return atn_error_set(H->err, ATN_E_UNSUPPORTED, "%s has no %sconfig.json: not a transformers model "
                             "attnscope can open", H->id, prefix);
    if ((st = add_plan_file(P, cfg)) != ATN_OK)
        return atn_error_set(H->err, st, "out of memory");
    for (int i = 0; tokenizer_names[i]; i++) {
        sibling *s = find_sib(sibs, n, prefix, tokenizer_names[i]);
        if (s && (st = add_plan_file(P, s)) != ATN_OK)
            return atn_error_set(H->err, st, "out of memory");
    }
    sibling *w;
    if ((w = find_sib(sibs, n, prefix, "model.safetensors.index.json"))) {
        P->weights = "safetensors";
        if ((st = add_plan_file(P, w)) != ATN_OK)
            return atn_error_set(H->err, st, "out of memory");
        return add_shards(H, P, sibs, n, prefix, "model.safetensors.index.json");
    }
    if ((w = find_sib(sibs, n, prefix, "model.safetensors"))) {
        P->weights = "safetensors";
        return add_plan_file(P, w) == ATN_OK ? ATN_OK : atn_error_set(H->err, ATN_E_NOMEM, "out of memory");
    }
    if ((w = find_sib(sibs, n, prefix, "pytorch_model.bin.index.json"))) {
        P->weights = "pytorch";
        if ((st = add_plan_file(P, w)) != ATN_OK)
            return atn_error_set(H->err, st, "out of memory");
        return add_shards(H, P, sibs, n, prefix, "pytorch_model.bin.index.json");
    }
    if ((w = find_sib(sibs, n, prefix, "pytorch_model.bin"))) {
        P->weights = "pytorch";
        return add_plan_file(P, w) == ATN_OK ? ATN_OK : atn_error_set(H->err, ATN_E_NOMEM, "out of memory");
    }
    return atn_error_set(H->err, ATN_E_UNSUPPORTED, "%s has no weights attnscope reads (%smodel.safetensors, "
                         "its index, %spytorch_model.bin or its index)", H->id, prefix, prefix);
}

static bool exists(const char *p) {
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

static bool is_commit(const char *s) {
    if (strlen(s) != 40)
        return false;
    for (; *s; s++)
        if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f')))
            return false;
    return true;
}

/* A size from the model info: a whole number of bytes up to 2^53 (exact in a double), or -1
 * when absent; false for anything else (negative, fractional, huge: a cast would be
 * undefined and the sums would overflow). */
static bool size_of(const cJSON *v, int64_t *out) {
    *out = -1;
    if (!v)
        return true;
    if (!cJSON_IsNumber(v))
        return false;
    double d = v->valuedouble;
    if (!(d >= 0 && d <= 9007199254740992.0) || d != (double)(int64_t)d)
        return false;
    *out = (int64_t)d;
    return true;
}

atn_status atn_hub_plan_fetch(const char *spec, atn_hub_keep_going_fn keep_going, void *user_data,
                              atn_hub_plan **out, atn_error *err) {
    *out = NULL;
    char id[ATN_HF_ID_MAX], rev[ATN_HF_REV_MAX];
    atn_status st = atn_hf_parse_spec(spec, id, rev, err);
    if (st != ATN_OK)
        return st;
    if (atn_hub_offline())
        return atn_error_set(err, ATN_E_IO, "%s: offline mode (HF_HUB_OFFLINE is set): not asking the Hub; "
                             "unset HF_HUB_OFFLINE to download", spec);
    hub H;
    if ((st = hub_init(&H, id, err)) != ATN_OK)
        return st;
    H.keep_going = keep_going;
    H.kg_data = user_data;
    char qr[ATN_HF_REV_MAX * 3 + 1], url[URLN];
    if (!quote(rev, false, qr, sizeof qr) ||
        snprintf(url, sizeof url, "%s/api/models/%s/revision/%s?blobs=true", H.endpoint, id, qr) >= (int)sizeof url)
        return atn_error_set(err, ATN_E_INVALID, "%s: too long", spec);
    membuf b = {.max = SMALL_MAX};
    if ((st = get_mem(&H, url, &b, spec, rev)) != ATN_OK) {
        free(b.data);
        return st;
    }
    char origin[ATN_HF_ID_MAX + ATN_HF_REV_MAX + URLN + 32];
    snprintf(origin, sizeof origin, "%s: the model info from %s", spec, url);
    cJSON *root = NULL;
    st = atn_json_parse(b.data, b.len, origin, 0, &root, err);
    free(b.data);
    if (st != ATN_OK)
        return st;
    const cJSON *sha = cJSON_GetObjectItemCaseSensitive(root, "sha");
    const cJSON *sibs = cJSON_GetObjectItemCaseSensitive(root, "siblings");
    if (!cJSON_IsString(sha) || !is_commit(sha->valuestring) || !cJSON_IsArray(sibs)) {
        cJSON_Delete(root);
        return atn_error_set(err, ATN_E_FORMAT, "%s: the model info from %s has no 40-hex \"sha\" or no "
                             "\"siblings\" list", spec, url);
    }
    int n = cJSON_GetArraySize(sibs);
    sibling *s = calloc((size_t)n + 1, sizeof *s);
    atn_hub_plan *P = calloc(1, sizeof *P);
    if (!s || !P) {
        free(s);
        free(P);
        cJSON_Delete(root);
        return atn_error_set(err, ATN_E_NOMEM, "out of memory");
    }
    int k = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, sibs) {
        const cJSON *fn = cJSON_GetObjectItemCaseSensitive(e, "rfilename");
        if (!cJSON_IsString(fn) || !*fn->valuestring || fn->valuestring[0] == '/' || strstr(fn->valuestring, ".."))
            continue;   /* not a file the cache could hold */
        const cJSON *size = cJSON_GetObjectItemCaseSensitive(e, "size");
        const cJSON *lfs = cJSON_GetObjectItemCaseSensitive(e, "lfs");
        const cJSON *lsha = cJSON_GetObjectItemCaseSensitive(lfs, "sha256");
        const cJSON *lsize = cJSON_GetObjectItemCaseSensitive(lfs, "size");
        s[k].name = fn->valuestring;
        if (!size_of(lsize ? lsize : size, &s[k].size)) {
            free(s);
            free(P);
            atn_error_set(err, ATN_E_FORMAT, "%s: the model info from %s gives \"%s\" a size that is not a "
                          "whole number of bytes up to 2^53", spec, url, fn->valuestring);
            cJSON_Delete(root);
            return ATN_E_FORMAT;
        }
        s[k].sha256 = cJSON_IsString(lsha) && strlen(lsha->valuestring) == 64 ? lsha->valuestring : NULL;
        k++;
    }
    qsort(s, (size_t)k, sizeof *s, sibling_cmp);
    P->id = strdup(id);
    P->revision = strdup(rev);
    P->commit = strdup(sha->valuestring);
    P->endpoint = strdup(H.endpoint);
    P->cache_dir = strdup(H.cache);
    char snap[PATHN];
    if (snprintf(snap, sizeof snap, "%s/snapshots/%s", H.repo, sha->valuestring) >= (int)sizeof snap)
        snap[0] = '\0';
    P->snapshot = strdup(snap);
    P->weights = "";
    if (!P->id || !P->revision || !P->commit || !P->endpoint || !P->cache_dir || !P->snapshot) {
        st = atn_error_set(err, ATN_E_NOMEM, "out of memory");
    } else {
        st = choose(&H, P, s, k);
    }
    free(s);
    cJSON_Delete(root);
    if (st != ATN_OK) {
        atn_hub_plan_free(P);
        return st;
    }
    for (int32_t i = 0; i < P->n_files; i++) {
        char p[PATHN];
        atn_hub_file *f = &P->files[i];
        f->cached = snprintf(p, sizeof p, "%s/%s", P->snapshot, f->name) < (int)sizeof p && exists(p);
        if (f->size > 0) {
            if (__builtin_add_overflow(P->total_bytes, f->size, &P->total_bytes) ||
                (!f->cached && __builtin_add_overflow(P->fetch_bytes, f->size, &P->fetch_bytes))) {
                atn_error_set(err, ATN_E_FORMAT, "%s: the sizes the Hub gives add up past 2^63 bytes at \"%s\"",
                              spec, f->name);
                atn_hub_plan_free(P);
                return ATN_E_FORMAT;
            }
        }
    }
    *out = P;
    return ATN_OK;
}

/* ---- downloading -------------------------------------------------------------------- */

static atn_status mkdirs(hub *H, const char *path) {
    char p[PATHN];
    snprintf(p, sizeof p, "%s", path);
    for (char *s = p + 1;; s++) {
        if (*s == '/' || *s == '\0') {
            char c = *s;
            *s = '\0';
            if (mkdir(p, 0777) != 0 && errno != EEXIST)
                return atn_error_set(H->err, ATN_E_IO, "%s: cannot make the folder: %s", p, strerror(errno));
            *s = c;
            if (!c)
                break;
        }
    }
    return ATN_OK;
}

static atn_status sha256_file(hub *H, const char *path, char hex[65]) {
    FILE *f = fopen(path, "rb");
    if (!f)
        return atn_error_set(H->err, ATN_E_IO, "%s: cannot read: %s", path, strerror(errno));
    atn_sha256 s;
    atn_sha256_init(&s);
    static char buf[1 << 16];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0)
        atn_sha256_update(&s, buf, n);
    bool bad = ferror(f);
    fclose(f);
    if (bad)
        return atn_error_set(H->err, ATN_E_IO, "%s: read error", path);
    atn_sha256_hex(&s, hex);
    return ATN_OK;
}

/* The git blob id of a file: sha1("blob <size>\0" + content), as the Hub's ETag of a file
 * kept in git (not LFS). */
static atn_status git_sha1_file(hub *H, const char *path, char hex[41]) {
    FILE *f = fopen(path, "rb");
    struct stat sb;
    if (!f || fstat(fileno(f), &sb) != 0) {
        if (f)
            fclose(f);
        return atn_error_set(H->err, ATN_E_IO, "%s: cannot read: %s", path, strerror(errno));
    }
    atn_sha1 s;
    atn_sha1_init(&s);
    char head[32];
    int hn = snprintf(head, sizeof head, "blob %lld", (long long)sb.st_size);
    atn_sha1_update(&s, head, (size_t)hn + 1);   /* with its NUL */
    static char buf[1 << 16];
    size_t n;
    long long total = 0;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) {
        atn_sha1_update(&s, buf, n);
        total += (long long)n;
    }
    bool bad = ferror(f) || total != (long long)sb.st_size;
    fclose(f);
    if (bad)
        return atn_error_set(H->err, ATN_E_IO, "%s: read error", path);
    atn_sha1_hex(&s, hex);
    return ATN_OK;
}

static bool is_sha1(const char *s) {
    if (strlen(s) != 40)
        return false;
    for (; *s; s++)
        if (!isxdigit((unsigned char)*s))
            return false;
    return true;
}

static bool is_sha256(const char *s) {
    if (strlen(s) != 64)
        return false;
    for (; *s; s++)
        if (!isxdigit((unsigned char)*s))
            return false;
    return true;
}

/* Opens (creating) a file of the cache that is written or appended to, never through a
 * symbolic link (a shared cache may hold a planted one: blobs/ETAG.incomplete -> a victim
 * file), and checks that what opened is a regular file with one name.  -1 with the message
 * set on failure. */
static int open_cache_file(hub *H, const char *path, int flags) {
    int fd = open(path, flags | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK, 0644);
    if (fd < 0) {
        if (errno == ELOOP)
            atn_error_set(H->err, ATN_E_IO, "%s: is a symbolic link; a file of the cache is never written through "
                          "one (remove it if you did not make it)", path);
        else
            atn_error_set(H->err, ATN_E_IO, "%s: cannot write: %s", path, strerror(errno));
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_nlink > 1) {
        close(fd);
        atn_error_set(H->err, ATN_E_IO, "%s: not a regular file of its own (a device, a FIFO or a hard link to "
                      "another file); remove it if you did not make it", path);
        return -1;
    }
    return fd;
}

/* GET m->url into incomplete, resuming, retrying a dropped connection that made progress. */
static atn_status fetch_blob(hub *H, const atn_hub_file *file, const meta *m, const char *incomplete, xfer *x) {
    int64_t last_size = -1;
    for (int attempt = 0;; attempt++) {
        int fd = open_cache_file(H, incomplete, O_RDWR | O_APPEND);
        if (fd < 0)
            return H->err ? H->err->status : ATN_E_IO;
        struct stat st;
        int64_t have = fstat(fd, &st) == 0 ? (int64_t)st.st_size : 0;
        if (m->size >= 0 && have > m->size) {   /* not this file: start over */
            if (ftruncate(fd, 0) != 0) {
                close(fd);
                return atn_error_set(H->err, ATN_E_IO, "%s: cannot truncate: %s", incomplete, strerror(errno));
            }
            have = 0;
        }
        if (m->size >= 0 && have == m->size) {   /* complete (a zero-byte file: created empty above) */
            close(fd);
            return ATN_OK;
        }
        FILE *f = fdopen(fd, "ab");
        if (!f) {
            close(fd);
            return atn_error_set(H->err, ATN_E_NOMEM, "%s: cannot write: %s", incomplete, strerror(errno));
        }
        headers h;
        struct curl_slist *list = NULL;
        CURL *c = new_handle(H, m->url, &h, &list);
        if (!c) {
            fclose(f);
            return atn_error_set(H->err, ATN_E_NOMEM, "out of memory");
        }
        x->f = f;
        x->path = incomplete;
        x->write_errno = 0;
        x->written = 0;
        x->size = m->size;
        x->have = have;
        x->curl = c;
        x->over_cap = x->encoded = false;
        x->h = &h;
        x->base_all += have - x->base_file;
        x->base_file = have;
        char range[64];
        if (have > 0) {
            snprintf(range, sizeof range, "%lld-", (long long)have);
            curl_easy_setopt(c, CURLOPT_RANGE, range);
        }
        curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 1L);
        curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_file);
        curl_easy_setopt(c, CURLOPT_WRITEDATA, x);
        curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
        curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_xferinfo);
        curl_easy_setopt(c, CURLOPT_XFERINFODATA, x);
        curl_easy_setopt(c, CURLOPT_FAILONERROR, 1L);
        CURLcode rc = curl_easy_perform(c);
        long code = 0;
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
        curl_easy_cleanup(c);
        curl_slist_free_all(list);
        int werr = x->write_errno;
        if (fclose(f) != 0 && !werr && rc == CURLE_OK)
            werr = errno;
        x->h = NULL;
        x->curl = NULL;
        if (x->over_cap) {
            unlink(incomplete);
            return atn_error_set(H->err, ATN_E_FORMAT, "%s: %s sent more than the %lld bytes the Hub announced; "
                                 "stopped there and deleted the download", file->name, m->url,
                                 (long long)m->size);
        }
        if (x->encoded) {
            unlink(incomplete);
            return atn_error_set(H->err, ATN_E_FORMAT, "%s: %s answered with Content-Encoding \"%s\" though asked "
                                 "for identity: refused (a compressed file is not the file)", file->name, m->url,
                                 h.content_encoding);
        }
        if (x->cancelled)
            return atn_error_set(H->err, ATN_E_CANCELLED, "%s: cancelled; the part downloaded is kept in %s for the "
                                 "next try", file->name, incomplete);
        if (werr)
            return atn_error_set(H->err, ATN_E_IO, "%s: cannot write %s: %s (the part downloaded is kept there for "
                                 "the next try; nothing of it is in the snapshot)", file->name, incomplete,
                                 strerror(werr));
        if (rc == CURLE_HTTP_RETURNED_ERROR && code == 416 && have > 0) {
            /* the range starts at the end: it was complete; the checks below decide */
            return ATN_OK;
        }
        if (rc == CURLE_HTTP_RETURNED_ERROR)
            return http_failed(H, code, &h, file->name, "");
        if (rc == CURLE_OK && have > 0 && code == 200) {
            /* the server ignored the Range: the file now holds the old part and then the
               whole file; keep only the whole file */
            FILE *in = fopen(incomplete, "rb");
            char tmp[PATHN + 32];
            snprintf(tmp, sizeof tmp, "%s.restart", incomplete);
            int ofd = in ? open_cache_file(H, tmp, O_WRONLY | O_TRUNC) : -1;
            FILE *o = ofd >= 0 ? fdopen(ofd, "wb") : NULL;
            if (ofd >= 0 && !o)
                close(ofd);
            bool ok = in && o && fseeko(in, (off_t)have, SEEK_SET) == 0;
            static char buf[1 << 16];
            size_t n;
            while (ok && (n = fread(buf, 1, sizeof buf, in)) > 0)
                ok = fwrite(buf, 1, n, o) == n;
            if (in)
                fclose(in);
            if (o && fclose(o) != 0)
                ok = false;
            if (!ok || rename(tmp, incomplete) != 0) {
                unlink(tmp);
                return atn_error_set(H->err, ATN_E_IO, "%s: cannot rewrite %s: %s", file->name, incomplete,
                                     strerror(errno));
            }
            return ATN_OK;
        }
        if (rc == CURLE_OK)
            return ATN_OK;
        bool dropped = rc == CURLE_PARTIAL_FILE || rc == CURLE_RECV_ERROR || rc == CURLE_OPERATION_TIMEDOUT ||
                       rc == CURLE_GOT_NOTHING || rc == CURLE_SEND_ERROR;
        int64_t now = lstat(incomplete, &st) == 0 ? (int64_t)st.st_size : 0;
        if (dropped && now > last_size && attempt < RETRIES) {
            last_size = now;
            continue;   /* resume where it stopped */
        }
        atn_error_set(H->err, ATN_E_IO, "%s: the connection to %s failed after %lld bytes (%s); run the download "
                      "again to resume from %s", file->name, m->url, (long long)now, curl_easy_strerror(rc),
                      incomplete);
        if (!dropped)
            return curl_failed(H, rc, m->url, file->name);
        return ATN_E_IO;
    }
}

/* The relative symlink snapshots/COMMIT/FILE -> ../../blobs/ETAG (one more ../ per folder
 * in FILE). */
static atn_status link_file(hub *H, const char *snapshot, const char *name, const char *etag) {
    char link[PATHN], target[PATHN] = "", dir[PATHN];
    if (snprintf(link, sizeof link, "%s/%s", snapshot, name) >= (int)sizeof link)
        return atn_error_set(H->err, ATN_E_INVALID, "%s: path too long", name);
    snprintf(dir, sizeof dir, "%s", link);
    *strrchr(dir, '/') = '\0';
    atn_status st = mkdirs(H, dir);
    if (st != ATN_OK)
        return st;
    size_t k = 0;
    strcpy(target, "../../");
    k = 6;
    for (const char *p = name; *p; p++)
        if (*p == '/') {
            if (k + 4 >= sizeof target)
                return atn_error_set(H->err, ATN_E_INVALID, "%s: too deep", name);
            memcpy(target + k, "../", 4);
            k += 3;
        }
    snprintf(target + k, sizeof target - k, "blobs/%s", etag);
    unlink(link);   /* a dangling link of an earlier try */
    if (symlink(target, link) != 0 && errno != EEXIST)
        return atn_error_set(H->err, ATN_E_IO, "%s: cannot make the link: %s", link, strerror(errno));
    return ATN_OK;
}

atn_status atn_hub_download(atn_hub_plan *P, atn_hub_progress_fn progress, void *user_data, atn_error *err) {
    if (!P)
        return atn_error_set(err, ATN_E_INVALID, "no plan");
    if (atn_hub_offline())
        return atn_error_set(err, ATN_E_IO, "%s: offline mode (HF_HUB_OFFLINE is set): not downloading", P->id);
    hub H;
    atn_status st = hub_init(&H, P->id, err);
    if (st != ATN_OK)
        return st;
    char blobs[PATHN], locks[PATHN], folder[ATN_HF_ID_MAX + 16];
    atn_hf_repo_folder_name(P->id, folder, sizeof folder, NULL);
    if (snprintf(blobs, sizeof blobs, "%s/blobs", H.repo) >= (int)sizeof blobs)
        return atn_error_set(err, ATN_E_INVALID, "cache path too long");
    if (snprintf(locks, sizeof locks, "%s/.locks/%s", H.cache, folder) >= (int)sizeof locks)
        return atn_error_set(err, ATN_E_INVALID, "cache path too long");
    if ((st = mkdirs(&H, blobs)) || (st = mkdirs(&H, locks)) || (st = mkdirs(&H, P->snapshot)))
        return st;

    atn_hub_progress p = {.n_files = P->n_files, .total = P->total_bytes, .eta = -1};
    xfer x = {.progress = progress, .user_data = user_data, .p = &p};
    H.x = &x;   /* every wait asks progress whether to go on */
    for (int32_t i = 0; i < P->n_files; i++) {
        atn_hub_file *f = &P->files[i];
        char pointer[PATHN];
        snprintf(pointer, sizeof pointer, "%s/%s", P->snapshot, f->name);
        p.file = f->name;
        p.file_index = i;
        p.file_total = f->size;
        p.file_done = 0;
        x.base_file = 0;
        x.written = 0;
        int64_t file_start = x.base_all;
        if (exists(pointer)) {   /* never fetched again */
            f->cached = true;
            x.base_all += f->size > 0 ? f->size : 0;
            x.base_file = f->size > 0 ? f->size : 0;
            if (!report(&x, true))
                return atn_error_set(err, ATN_E_CANCELLED, "cancelled");
            continue;
        }
        meta m = {0};
        if ((st = head_file(&H, P->commit, f->name, &m)) != ATN_OK)
            return st;
        if (m.commit[0] && strcmp(m.commit, P->commit))
            return atn_error_set(err, ATN_E_FORMAT, "%s: the Hub answered for commit %s, not %s", f->name, m.commit,
                                 P->commit);
        if (m.size >= 0)
            p.file_total = m.size;
        char blob[PATHN], incomplete[PATHN + 16], lock[PATHN];
        if (snprintf(blob, sizeof blob, "%s/%s", blobs, m.etag) >= (int)sizeof blob ||
            snprintf(lock, sizeof lock, "%s/%s.lock", locks, m.etag) >= (int)sizeof lock)
            return atn_error_set(err, ATN_E_INVALID, "cache path too long");
        snprintf(incomplete, sizeof incomplete, "%s.incomplete", blob);
        int lfd = open_cache_file(&H, lock, O_RDWR);
        if (lfd < 0)
            return err ? err->status : ATN_E_IO;
        /* another attnscope or Python writing the same blob: wait for it, saying so through
           progress (p.waiting_for) and asking it every 0.1 s whether to go on, at most
           lock_timeout seconds (ATTNSCOPE_HUB_LOCK_TIMEOUT) */
        double wait_from = now_s();
        while (flock(lfd, LOCK_EX | LOCK_NB) != 0) {
            if (errno != EWOULDBLOCK && errno != EINTR) {
                st = atn_error_set(err, ATN_E_IO, "%s: cannot lock: %s", lock, strerror(errno));
                close(lfd);
                return st;
            }
            p.waiting_for = lock;
            bool go_on = report(&x, true);
            p.waiting_for = NULL;
            if (!go_on) {
                close(lfd);
                return atn_error_set(err, ATN_E_CANCELLED, "%s: cancelled while another process held %s", f->name,
                                     lock);
            }
            if (now_s() - wait_from >= (double)H.lock_timeout) {
                close(lfd);
                return atn_error_set(err, ATN_E_IO, "%s: another process has held %s for %ld s "
                                     "(ATTNSCOPE_HUB_LOCK_TIMEOUT): it is still downloading the same file, "
                                     "or hangs; try again when it has finished, or stop it", f->name, lock,
                                     H.lock_timeout);
            }
            struct timespec ts = {0, 100 * 1000 * 1000};
            nanosleep(&ts, NULL);
        }
        if (!exists(blob)) {
            st = fetch_blob(&H, f, &m, incomplete, &x);
            if (st == ATN_OK) {
                struct stat sb;   /* the size checked right before the rename, the link not followed */
                int64_t got = lstat(incomplete, &sb) == 0 && S_ISREG(sb.st_mode) ? (int64_t)sb.st_size : -1;
                bool lfs = f->lfs || is_sha256(m.etag);
                char hex[65] = "";
                if (m.size >= 0 && got != m.size) {
                    unlink(incomplete);
                    st = atn_error_set(err, ATN_E_FORMAT, "%s: got %lld bytes, the Hub said %lld; the download was "
                                       "deleted, run it again", f->name, (long long)got, (long long)m.size);
                } else if (lfs && (st = sha256_file(&H, incomplete, hex)) == ATN_OK &&
                           strcasecmp(hex, is_sha256(m.etag) ? m.etag : f->sha256)) {
                    unlink(incomplete);
                    st = atn_error_set(err, ATN_E_FORMAT, "%s: checksum mismatch: sha256 %s, the Hub's etag is %s; "
                                       "the corrupt download was deleted and not put in the snapshot", f->name, hex,
                                       is_sha256(m.etag) ? m.etag : f->sha256);
                } else if (st == ATN_OK && !lfs && is_sha1(m.etag) &&
                           (st = git_sha1_file(&H, incomplete, hex)) == ATN_OK && strcasecmp(hex, m.etag)) {
                    unlink(incomplete);   /* a small file: its ETag is its git blob id */
                    st = atn_error_set(err, ATN_E_FORMAT, "%s: checksum mismatch: git blob sha1 %s, the Hub's etag "
                                       "is %s; the corrupt download was deleted and not put in the snapshot",
                                       f->name, hex, m.etag);
                } else if (st == ATN_OK && rename(incomplete, blob) != 0) {
                    st = atn_error_set(err, ATN_E_IO, "%s: cannot move %s into place: %s", f->name, incomplete,
                                       strerror(errno));
                }
            }
        }
        close(lfd);
        if (st != ATN_OK)
            return st;
        if ((st = link_file(&H, P->snapshot, f->name, m.etag)) != ATN_OK)
            return st;
        f->cached = true;
        x.base_all = file_start + (p.file_total > 0 ? p.file_total : 0);
        x.base_file = p.file_total > 0 ? p.file_total : 0;
        x.written = 0;
        if (!report(&x, true))
            return atn_error_set(err, ATN_E_CANCELLED, "cancelled after %s", f->name);
    }
    /* refs/REVISION last: a ref never points at a snapshot still being filled */
    if (strcmp(P->revision, P->commit)) {
        char ref[PATHN], dir[PATHN];
        if (snprintf(ref, sizeof ref, "%s/refs/%s", H.repo, P->revision) >= (int)sizeof ref)
            return atn_error_set(err, ATN_E_INVALID, "refs path too long");
        snprintf(dir, sizeof dir, "%s", ref);
        *strrchr(dir, '/') = '\0';
        if ((st = mkdirs(&H, dir)) != ATN_OK)
            return st;
        char old[64] = "";
        FILE *rf = fopen(ref, "r");
        if (rf) {
            size_t n = fread(old, 1, sizeof old - 1, rf);
            old[n] = '\0';
            fclose(rf);
        }
        if (strcmp(old, P->commit) && (st = atn_write_file_atomic(ref, P->commit, strlen(P->commit), err)) != ATN_OK)
            return st;
    }
    return ATN_OK;
}
