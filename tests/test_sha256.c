/* SHA-256 against the FIPS 180-4 / NIST CSRC example vectors, in one piece
 * and fed in awkward chunk sizes, plus the file form. */
#include "base/sha256.h"
#include "check.h"

#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

static void hex_of_ctx(sha256_ctx *c, char hex[65])
{
    uint8_t d[32];
    sha256_final(c, d);
    for (int i = 0; i < 32; i++)
        snprintf(hex + 2 * i, 3, "%02x", d[i]);
}

/* Feeds msg in pieces whose sizes cycle through `sizes`; covers the cases of
 * a partial block being topped up, completed exactly, and overshot. */
static void hex_chunked(const char *msg, size_t n, const size_t *sizes, int nsizes, char hex[65])
{
    sha256_ctx c;
    sha256_init(&c);
    size_t off = 0;
    for (int k = 0; off < n; k++) {
        size_t take = sizes[k % nsizes];
        if (take > n - off)
            take = n - off;
        sha256_update(&c, msg + off, take);
        off += take;
    }
    hex_of_ctx(&c, hex);
}

int main(int argc, char **argv)
{
    (void)argc;
    char hex[65];

    sha256_hex("", 0, hex);
    CHECK_STREQ(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");

    sha256_hex("abc", 3, hex);
    CHECK_STREQ(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");

    /* 448 bits: the padding byte fits in the block but the length does not,
     * so this exercises the two-block finalisation. */
    const char *m448 = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    sha256_hex(m448, strlen(m448), hex);
    CHECK_STREQ(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");

    static const size_t odd[] = { 1, 63, 64, 65, 7, 128, 3, 1000, 0, 61 };
    hex_chunked(m448, strlen(m448), odd, 10, hex);
    CHECK_STREQ(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");

    const char *m896 = "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmno"
                       "ijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu";
    sha256_hex(m896, strlen(m896), hex);
    CHECK_STREQ(hex, "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");

    const size_t million = 1000000;
    char *a = malloc(million);
    if (!a) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    memset(a, 'a', million);
    const char *ref_a = "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0";
    sha256_hex(a, million, hex);
    CHECK_STREQ(hex, ref_a);
    hex_chunked(a, million, odd, 10, hex);
    CHECK_STREQ(hex, ref_a);
    static const size_t bytewise[] = { 1 };
    hex_chunked(a, million, bytewise, 1, hex);
    CHECK_STREQ(hex, ref_a);

    /* File form: one million 'a' spans several read chunks and ends mid-chunk. */
    char path[] = "/tmp/smx_sha256_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    if (fd >= 0) {
        FILE *f = fdopen(fd, "wb");
        CHECK(f != NULL);
        if (f) {
            CHECK(fwrite(a, 1, million, f) == million);
            CHECK(fclose(f) == 0);
            memset(hex, 0, sizeof hex);
            CHECK(sha256_file_hex(path, hex) == 0);
            CHECK_STREQ(hex, ref_a);
        }
        unlink(path);
    }
    free(a);

    CHECK(sha256_file_hex("/nonexistent/smx2d/no-such-file", hex) == -1);
    /* A directory opens but cannot be read; that must be an error, not the empty hash. */
    CHECK(sha256_file_hex("/", hex) == -1);

    return check_report(argv[0]);
}
