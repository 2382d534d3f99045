/* engine/hub/sha256.c and sha1.c against the FIPS 180-4 / NIST example vectors, fed whole and
 * byte by byte (the block-boundary paths), and a million 'a's; sha1 also as git's blob id
 * (`printf 'hello\n' | git hash-object --stdin`). */
#include "check.h"
#include "sha1.h"
#include "sha256.h"

static void hex1_of(const char *msg, size_t n, size_t step, char out[41]) {
    atn_sha1 s;
    atn_sha1_init(&s);
    for (size_t i = 0; i < n; i += step)
        atn_sha1_update(&s, msg + i, n - i < step ? n - i : step);
    atn_sha1_hex(&s, out);
}

static void sha1_vectors(void) {
    struct { const char *msg, *want; } v[] = {
        {"", "da39a3ee5e6b4b0d3255bfef95601890afd80709"},
        {"abc", "a9993e364706816aba3e25717850c26c9cd0d89d"},
        {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", "84983e441c3bd26ebaae4aa1f95129e5e54670f1"},
    };
    char out[41];
    for (size_t i = 0; i < sizeof v / sizeof *v; i++) {
        size_t n = strlen(v[i].msg);
        for (size_t step = 1; step <= 65; step += 16) {
            hex1_of(v[i].msg, n, step, out);
            CHECK_STR(out, v[i].want);
        }
    }
    static char million[1000000];
    memset(million, 'a', sizeof million);
    hex1_of(million, sizeof million, 4096 + 3, out);
    CHECK_STR(out, "34aa973cd4c4daa4f61eeb2bdbad27316534016f");
    hex1_of("blob 6\0hello\n", 13, 5, out);
    CHECK_STR(out, "ce013625030ba8dba906f756967f9e9ca394464a");
}

static void hex_of(const char *msg, size_t n, size_t step, char out[65]) {
    atn_sha256 s;
    atn_sha256_init(&s);
    for (size_t i = 0; i < n; i += step)
        atn_sha256_update(&s, msg + i, n - i < step ? n - i : step);
    atn_sha256_hex(&s, out);
}

int main(void) {
    sha1_vectors();
    struct { const char *msg, *want; } v[] = {
        {"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
        {"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
        {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
         "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
        {"abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrst"
         "nopqrstu", "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"},
    };
    char out[65];
    for (size_t i = 0; i < sizeof v / sizeof *v; i++) {
        size_t n = strlen(v[i].msg);
        for (size_t step = 1; step <= 65; step += 16) {
            hex_of(v[i].msg, n, step, out);
            CHECK_STR(out, v[i].want);
        }
        hex_of(v[i].msg, n, n ? n : 1, out);
        CHECK_STR(out, v[i].want);
    }
    static char million[1000000];
    memset(million, 'a', sizeof million);
    hex_of(million, sizeof million, 4096 + 3, out);
    CHECK_STR(out, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
    return check_summary("hub-sha256");
}
