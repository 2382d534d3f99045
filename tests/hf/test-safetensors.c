/* The safetensors reader on hand-made images: a good file read back exactly, every kind of
 * malformed header refused with a message naming the file and the problem, half-float
 * conversion checked against hand-known values and an independent formula, and random
 * mutations of a good image that must never crash or hand out bytes outside the buffer. */
#include "check.h"
#include "forward/fp16.h"
#include "formats/safetensors.h"

#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

typedef struct image {
    uint8_t *buf;
    size_t len;
} image;

/* 8-byte size (hlen, or the header's length when hlen is UINT64_MAX), header, data_len
 * bytes of data (byte i of the data area = i & 255). */
static image make_image(const char *header, size_t data_len, uint64_t hlen) {
    size_t h = strlen(header);
    image im = {malloc(8 + h + data_len + 1), 8 + h + data_len};
    uint64_t n = hlen == UINT64_MAX ? h : hlen;
    for (int i = 0; i < 8; i++)
        im.buf[i] = (uint8_t)(n >> (8 * i));
    memcpy(im.buf + 8, header, h);
    for (size_t i = 0; i < data_len; i++)
        im.buf[8 + h + i] = (uint8_t)i;
    return im;
}

/* Parses header + data_len bytes; expects failure with status and a message holding
 * "t.safetensors" and want. */
static void expect_bad(int line, const char *header, size_t data_len, uint64_t hlen,
                       atn_status status, const char *want) {
    image im = make_image(header, data_len, hlen);
    atn_st_file *f = (atn_st_file *)1;
    atn_error err = {0};
    atn_status st = atn_st_parse("t.safetensors", im.buf, im.len, &f, &err);
    check_count++;
    if (st != status || f != NULL || !strstr(err.message, "t.safetensors") ||
        !strstr(err.message, want)) {
        check_failures++;
        fprintf(stderr, "line %d: status %d (want %d), message \"%s\" (want \"%s\")\n", line,
                st, status, err.message, want);
    }
    atn_st_close(f);
    free(im.buf);
}
#define BAD(header, data_len, want) \
    expect_bad(__LINE__, header, data_len, UINT64_MAX, ATN_E_FORMAT, want)

static void test_good(void) {
    /* a: F32 [2,3] (24 bytes), b: F16 [4] (8), c: I64 [] scalar (8), e: empty tensor */
    const char *h = "{\"__metadata__\":{\"format\":\"pt\"},"
                    "\"b\":{\"dtype\":\"F16\",\"shape\":[4],\"data_offsets\":[24,32]},"
                    "\"a\":{\"dtype\":\"F32\",\"shape\":[2,3],\"data_offsets\":[0,24]},"
                    "\"e\":{\"dtype\":\"BF16\",\"shape\":[0,5],\"data_offsets\":[40,40]},"
                    "\"c\":{\"dtype\":\"I64\",\"shape\":[],\"data_offsets\":[32,40]}}   ";
    image im = make_image(h, 40, UINT64_MAX);
    atn_st_file *f = NULL;
    atn_error err = {0};
    CHECK(atn_st_parse("good", im.buf, im.len, &f, &err) == ATN_OK);
    if (!f) {
        fprintf(stderr, "%s\n", err.message);
        free(im.buf);
        return;
    }
    CHECK(atn_st_count(f) == 4);
    CHECK_STR(atn_st_at(f, 0)->name, "a");   /* sorted by name */
    CHECK_STR(atn_st_at(f, 3)->name, "e");
    const atn_st_tensor *a = atn_st_find(f, "a");
    CHECK(a && a->dtype == ATN_ST_F32 && a->ndim == 2 && a->shape[0] == 2 && a->shape[1] == 3);
    CHECK(a && a->count == 6 && a->nbytes == 24 && a->file_offset == 8 + strlen(h));
    CHECK(a && a->data == im.buf + 8 + strlen(h));
    const atn_st_tensor *b = atn_st_find(f, "b");
    CHECK(b && b->dtype == ATN_ST_F16 && b->count == 4 && (const uint8_t *)b->data ==
          im.buf + 8 + strlen(h) + 24 && ((const uint8_t *)b->data)[0] == 24);
    const atn_st_tensor *c = atn_st_find(f, "c");
    CHECK(c && c->ndim == 0 && c->count == 1 && c->nbytes == 8);
    const atn_st_tensor *e = atn_st_find(f, "e");
    CHECK(e && e->count == 0 && e->nbytes == 0);
    CHECK(atn_st_find(f, "__metadata__") == NULL);
    CHECK(atn_st_find(f, "zz") == NULL);
    CHECK(atn_st_at(f, 4) == NULL && atn_st_at(f, -1) == NULL);
    void *p;
    size_t l;
    CHECK(!atn_st_detach_map(f, &p, &l, NULL) && p == NULL);   /* a borrowed buffer */
    char s[64];
    CHECK_STR(atn_st_shape_str(a->shape, a->ndim, s, sizeof s), "[2, 3]");
    CHECK_STR(atn_st_shape_str(NULL, 0, s, sizeof s), "[]");
    atn_st_close(f);
    atn_st_close(NULL);
    free(im.buf);

    CHECK(atn_st_dtype_size(ATN_ST_BF16) == 2 && atn_st_dtype_size(ATN_ST_F64) == 8);
    CHECK_STR(atn_st_dtype_name(ATN_ST_F8_E4M3), "F8_E4M3");
}

static void test_bad_headers(void) {
    const char *ok1 = "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}";
    /* header size field */
    expect_bad(__LINE__, ok1, 8, 0, ATN_E_FORMAT, "header size is 0");
    expect_bad(__LINE__, ok1, 8, strlen(ok1) + 9, ATN_E_FORMAT, "past the end of the file");
    expect_bad(__LINE__, ok1, 8, (uint64_t)1 << 63, ATN_E_FORMAT, "9223372036854775808");
    expect_bad(__LINE__, ok1, 8, UINT64_MAX - 1, ATN_E_FORMAT, "past the end of the file");
    {   /* shorter than the size field */
        atn_st_file *f;
        atn_error err = {0};
        CHECK(atn_st_parse("t.safetensors", "\x10\0\0", 3, &f, &err) == ATN_E_FORMAT);
        CHECK(strstr(err.message, "t.safetensors: truncated") != NULL);
    }
    /* JSON */
    BAD("{\"a\":{\"dtype\":\"F32\",", 0, "JSON header is invalid");
    BAD("not json at all", 0, "JSON header is invalid");
    BAD("[1, 2, 3]", 0, "not an object");
    BAD("\"text\"", 0, "not an object");
    BAD("{} trailing", 0, "extra bytes");
    BAD("{\"a\":[1,2]}", 0, "tensor 'a': header entry is not a JSON object");
    /* dtype */
    BAD("{\"a\":{\"dtype\":\"F33\",\"shape\":[2],\"data_offsets\":[0,8]}}", 8,
        "tensor 'a': unknown dtype \"F33\"");
    BAD("{\"a\":{\"dtype\":\"f32\",\"shape\":[2],\"data_offsets\":[0,8]}}", 8, "unknown dtype");
    BAD("{\"a\":{\"dtype\":32,\"shape\":[2],\"data_offsets\":[0,8]}}", 8,
        "\"dtype\" is not a string");
    BAD("{\"a\":{\"shape\":[2],\"data_offsets\":[0,8]}}", 8, "\"dtype\" is missing");
    /* shape */
    BAD("{\"a\":{\"dtype\":\"F32\",\"shape\":3,\"data_offsets\":[0,12]}}", 12,
        "\"shape\" is not an array");
    BAD("{\"a\":{\"dtype\":\"F32\",\"data_offsets\":[0,12]}}", 12, "\"shape\" is missing");
    BAD("{\"a\":{\"dtype\":\"F32\",\"shape\":[-3],\"data_offsets\":[0,12]}}", 12,
        "shape[0] is not a non-negative integer");
    BAD("{\"a\":{\"dtype\":\"F32\",\"shape\":[1.5],\"data_offsets\":[0,12]}}", 12,
        "shape[0] is not a non-negative integer");
    BAD("{\"a\":{\"dtype\":\"F32\",\"shape\":[1,\"2\"],\"data_offsets\":[0,8]}}", 8,
        "shape[1] is not a non-negative integer");
    BAD("{\"a\":{\"dtype\":\"F32\",\"shape\":[1,1,1,1,1,1,1,1,1],\"data_offsets\":[0,4]}}", 4,
        "9 dimensions");
    /* 2^32 * 2^32 overflows 64 bits; 2^31 * 2^31 * 4 bytes = 2^64 too */
    BAD("{\"a\":{\"dtype\":\"F32\",\"shape\":[4294967296,4294967296],\"data_offsets\":[0,8]}}",
        8, "overflows");
    BAD("{\"a\":{\"dtype\":\"F32\",\"shape\":[2147483648,2147483648],\"data_offsets\":[0,8]}}",
        8, "overflows");
    BAD("{\"a\":{\"dtype\":\"F32\",\"shape\":[1e300],\"data_offsets\":[0,8]}}", 8,
        "not a non-negative integer");
    /* shape vs length */
    BAD("{\"a\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,8]}}", 8,
        "tensor 'a': shape [3] of F32 needs 12 bytes but data_offsets [0, 8] hold 8");
    BAD("{\"a\":{\"dtype\":\"BF16\",\"shape\":[2,2],\"data_offsets\":[0,16]}}", 16,
        "needs 8 bytes");
    /* offsets */
    BAD("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[8,0]}}", 8,
        "tensor 'a': data_offsets [8, 0] has begin after end");
    BAD("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[4,12]}}", 8,
        "tensor 'a': data_offsets [4, 12] past the end of the data area (8 bytes");
    BAD("{\"a\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[9,9]}}", 8,
        "past the end of the data area");
    BAD("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0]}}", 8,
        "\"data_offsets\" is malformed");
    BAD("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,-8]}}", 8,
        "\"data_offsets\" is malformed");
    BAD("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":\"0-8\"}}", 8,
        "\"data_offsets\" is malformed");
    BAD("{\"a\":{\"dtype\":\"F32\",\"shape\":[2]}}", 8, "\"data_offsets\" is missing");
    BAD("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
        "\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[4,12]}}", 12,
        "tensors 'a' (data_offsets [0, 8]) and 'b' (data_offsets [4, 12]) overlap");
    BAD("{\"a\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,12]},"
        "\"b\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[11,12]}}", 12, "overlap");
    BAD("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
        "\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[8,16]}}", 16,
        "tensor 'a' appears twice");
    /* identical ranges overlap too */
    BAD("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
        "\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", 8, "overlap");
}

/* A header size over the 100 MB limit, in a file large enough to hold it: anonymous
 * zero pages, never touched beyond the first. */
static void test_header_limit(void) {
    size_t len = (size_t)ATN_ST_MAX_HEADER + 4096;
    uint8_t *buf = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS |
                        MAP_NORESERVE, -1, 0);
    if (buf == MAP_FAILED) {
        fprintf(stderr, "skipping the 100 MB header check: mmap failed\n");
        return;
    }
    uint64_t n = (uint64_t)ATN_ST_MAX_HEADER + 1;
    for (int i = 0; i < 8; i++)
        buf[i] = (uint8_t)(n >> (8 * i));
    atn_st_file *f;
    atn_error err = {0};
    CHECK(atn_st_parse("big.safetensors", buf, len, &f, &err) == ATN_E_FORMAT);
    CHECK_MSG(strstr(err.message, "big.safetensors: header size 100000001 is larger than") != NULL,
              "%s", err.message);
    munmap(buf, len);
}

static void test_files(void) {
    char dir[] = "/tmp/attnscope-st-XXXXXX";
    if (!mkdtemp(dir)) {
        CHECK(!"mkdtemp");
        return;
    }
    char path[256];
    atn_st_file *f;
    atn_error err = {0};
    CHECK(atn_st_open("/nonexistent/x.safetensors", &f, &err) == ATN_E_IO && f == NULL);
    CHECK(strstr(err.message, "/nonexistent/x.safetensors: cannot open") != NULL);
    CHECK(atn_st_open(dir, &f, &err) == ATN_E_IO && strstr(err.message, "not a regular file"));

    snprintf(path, sizeof path, "%s/empty.safetensors", dir);
    FILE *fp = fopen(path, "wb");
    fclose(fp);
    CHECK(atn_st_open(path, &f, &err) == ATN_E_FORMAT && strstr(err.message, "truncated") &&
          strstr(err.message, "empty.safetensors"));

    const char *h = "{\"w\":{\"dtype\":\"F32\",\"shape\":[2,2],\"data_offsets\":[0,16]}}";
    image im = make_image(h, 16, UINT64_MAX);
    float vals[4] = {1.5f, -2.0f, 0.25f, 1e-3f};
    memcpy(im.buf + 8 + strlen(h), vals, sizeof vals);
    snprintf(path, sizeof path, "%s/w.safetensors", dir);
    fp = fopen(path, "wb");
    fwrite(im.buf, 1, im.len, fp);
    fclose(fp);
    CHECK(atn_st_open(path, &f, &err) == ATN_OK);
    if (f) {
        const atn_st_tensor *t = atn_st_find(f, "w");
        float got[4];
        memcpy(got, t->data, sizeof got);
        CHECK_ARRAY_NEAR("w", got, vals, 4, 0);
        CHECK_STR(atn_st_path(f), path);
        void *p;
        size_t l;
        bool of_file = false;
        CHECK(atn_st_detach_map(f, &p, &l, &of_file) && p && l == im.len && of_file);
        atn_st_close(f);   /* detached: the mapping outlives the file object */
        memcpy(got, (const uint8_t *)p + 8 + strlen(h), sizeof got);
        CHECK(got[1] == -2.0f);
        munmap(p, l);
    }
    /* the same file cut short: the tensor runs past the data area */
    CHECK(truncate(path, (off_t)(im.len - 3)) == 0);
    CHECK(atn_st_open(path, &f, &err) == ATN_E_FORMAT && f == NULL);
    CHECK_MSG(strstr(err.message, "w.safetensors: tensor 'w': data_offsets [0, 16] past the end "
                     "of the data area (13 bytes") != NULL, "%s", err.message);
    /* cut inside the header */
    CHECK(truncate(path, 20) == 0);
    CHECK(atn_st_open(path, &f, &err) == ATN_E_FORMAT &&
          strstr(err.message, "runs past the end of the file (20 bytes)"));
    free(im.buf);
    unlink(path);
    snprintf(path, sizeof path, "%s/empty.safetensors", dir);
    unlink(path);
    rmdir(dir);
}

/* An independent half -> float: value = (-1)^s * 2^(e-15) * (1 + m/1024), subnormals
 * 2^-14 * m/1024. */
static float f16_slow(uint16_t h) {
    int s = h >> 15, e = (h >> 10) & 31, m = h & 1023;
    double v;
    if (e == 31)
        v = m ? NAN : INFINITY;
    else if (e == 0)
        v = ldexp(m / 1024.0, -14);
    else
        v = ldexp(1.0 + m / 1024.0, e - 15);
    return (float)(s ? -v : v);
}

static void test_half(void) {
    CHECK(atn_f16_to_f32(0x3c00) == 1.0f);
    CHECK(atn_f16_to_f32(0xc000) == -2.0f);
    CHECK(atn_f16_to_f32(0x7bff) == 65504.0f);
    CHECK(atn_f16_to_f32(0x0001) == 5.9604644775390625e-8f);   /* 2^-24 */
    CHECK(atn_f16_to_f32(0x0400) == 6.103515625e-5f);          /* 2^-14 */
    CHECK(atn_f16_to_f32(0x3555) == 0.333251953125f);
    CHECK(isinf(atn_f16_to_f32(0x7c00)) && atn_f16_to_f32(0xfc00) < 0);
    CHECK(isnan(atn_f16_to_f32(0x7e00)));
    CHECK(signbit(atn_f16_to_f32(0x8000)) && atn_f16_to_f32(0x8000) == 0.0f);
    int bad = 0;
    for (uint32_t h = 0; h < 65536; h++) {
        float a = atn_f16_to_f32((uint16_t)h), b = f16_slow((uint16_t)h);
        if (isnan(b) ? !isnan(a) : (a != b || signbit(a) != signbit(b)))
            bad++;
    }
    CHECK_MSG(bad == 0, "%d half values converted wrongly", bad);

    CHECK(atn_bf16_to_f32(0x3f80) == 1.0f);
    CHECK(atn_bf16_to_f32(0xc040) == -3.0f);
    CHECK(atn_bf16_to_f32(0x3eaa) == 0.33203125f);
    CHECK(isinf(atn_bf16_to_f32(0x7f80)) && isnan(atn_bf16_to_f32(0x7fc0)));

    /* array forms read unaligned little-endian bytes */
    const uint8_t raw[] = {0xff, 0x00, 0x3c, 0x00, 0xc0, 0x80, 0x3f};
    float out[3];
    atn_f16_to_f32_array(out, raw + 1, 3);
    CHECK(out[0] == 1.0f && out[1] == -2.0f && out[2] == 1.875f);   /* 0x3f80 as half */
    atn_bf16_to_f32_array(out, raw + 1, 3);
    CHECK(out[0] == atn_bf16_to_f32(0x3c00) && out[2] == 1.0f);
}

/* Random damage to a good image: parse must fail cleanly or return tensors inside it. */
static void test_mutations(void) {
    const char *h = "{\"__metadata__\":{\"k\":\"v\"},"
                    "\"emb\":{\"dtype\":\"F32\",\"shape\":[3,4],\"data_offsets\":[0,48]},"
                    "\"bias\":{\"dtype\":\"F16\",\"shape\":[4],\"data_offsets\":[48,56]},"
                    "\"ln\":{\"dtype\":\"BF16\",\"shape\":[2,2],\"data_offsets\":[56,64]}}";
    image good = make_image(h, 64, UINT64_MAX);
    uint8_t *buf = malloc(good.len);
    uint32_t rng = 12345;
    int parsed = 0, refused = 0, outside = 0, no_message = 0;
    for (int it = 0; it < 20000; it++) {
        memcpy(buf, good.buf, good.len);
        size_t len = good.len;
        int edits = 1 + (int)((rng = rng * 1103515245u + 12345u) >> 16) % 4;
        for (int e = 0; e < edits; e++) {
            rng = rng * 1103515245u + 12345u;
            size_t pos = (rng >> 8) % len;
            rng = rng * 1103515245u + 12345u;
            switch ((rng >> 16) % 4) {
            case 0: buf[pos] = (uint8_t)(rng >> 24); break;
            case 1: buf[pos] = (uint8_t)"0123456789[]{},:\"-.eE"[(rng >> 24) % 21]; break;
            case 2: buf[pos] ^= (uint8_t)(1u << ((rng >> 24) % 8)); break;
            case 3: len = pos > 0 ? pos : 1; break;   /* truncate */
            }
        }
        /* parse from an exact-size copy so reads past len are caught by ASan/valgrind */
        uint8_t *exact = malloc(len);
        memcpy(exact, buf, len);
        atn_st_file *f = NULL;
        atn_error err = {0};
        if (atn_st_parse("m.safetensors", exact, len, &f, &err) == ATN_OK) {
            parsed++;
            for (int32_t i = 0; i < atn_st_count(f); i++) {
                const atn_st_tensor *t = atn_st_at(f, i);
                const uint8_t *p = t->data;
                if (p < exact || p + t->nbytes > exact + len ||
                    t->nbytes != t->count * atn_st_dtype_size(t->dtype))
                    outside++;
            }
            atn_st_close(f);
        } else {
            refused++;
            if (!strstr(err.message, "m.safetensors"))
                no_message++;
        }
        free(exact);
    }
    fprintf(stderr, "mutations: %d parsed, %d refused\n", parsed, refused);
    CHECK(outside == 0);
    CHECK(no_message == 0);
    CHECK(parsed > 0 && refused > 0);
    free(buf);
    free(good.buf);
}

int main(void) {
    test_good();
    test_bad_headers();
    test_header_limit();
    test_files();
    test_half();
    test_mutations();
    return check_summary("test-safetensors");
}
