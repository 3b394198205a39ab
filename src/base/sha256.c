/* SHA-256 through Nettle. Nettle's header defines sha256_init, sha256_update
 * and sha256_digest as macros for its own functions; they are undone here so
 * that this file can define the project's functions of those names, and
 * Nettle's are called by their real names (nettle_sha256_*). */
#include <nettle/sha2.h>
#undef sha256_init
#undef sha256_update
#undef sha256_digest

#include "base/sha256.h"

#include <stdio.h>
#include <string.h>

_Static_assert(sizeof(struct sha256_ctx) <= sizeof(((sha256_ctx *)0)->nettle.bytes),
               "Nettle's sha256_ctx does not fit sha256_ctx (src/base/sha256.h)");
_Static_assert(SHA256_DIGEST_SIZE == 32, "SHA-256 digests are 32 bytes");

/* The context travels as bytes (memcpy in and out), so no object is accessed
 * through a type it was not declared with. */
static struct sha256_ctx load(const sha256_ctx *c)
{
    struct sha256_ctx n;
    memcpy(&n, c->nettle.bytes, sizeof n);
    return n;
}

static void store(sha256_ctx *c, const struct sha256_ctx *n)
{
    memcpy(c->nettle.bytes, n, sizeof *n);
}

void sha256_init(sha256_ctx *c)
{
    struct sha256_ctx n;
    nettle_sha256_init(&n);
    store(c, &n);
}

void sha256_update(sha256_ctx *c, const void *data, size_t len)
{
    struct sha256_ctx n = load(c);
    nettle_sha256_update(&n, len, data);
    store(c, &n);
}

void sha256_final(sha256_ctx *c, uint8_t out[32])
{
    struct sha256_ctx n = load(c);
    nettle_sha256_digest(&n, SHA256_DIGEST_SIZE, out);
    store(c, &n);
}

static void to_hex(const uint8_t d[32], char hex[65])
{
    static const char digits[] = "0123456789abcdef";
    for (int i = 0; i < 32; i++) {
        hex[2 * i] = digits[d[i] >> 4];
        hex[2 * i + 1] = digits[d[i] & 15];
    }
    hex[64] = '\0';
}

void sha256_hex(const void *data, size_t n, char hex[65])
{
    sha256_ctx c;
    uint8_t d[32];
    sha256_init(&c);
    sha256_update(&c, data, n);
    sha256_final(&c, d);
    to_hex(d, hex);
}

int sha256_file_hex(const char *path, char hex[65])
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    sha256_ctx c;
    uint8_t d[32];
    unsigned char chunk[65536];
    size_t got;
    sha256_init(&c);
    while ((got = fread(chunk, 1, sizeof chunk, f)) > 0)
        sha256_update(&c, chunk, got);
    /* A short read is either end of file or an error; only the former yields a hash. */
    int bad = ferror(f);
    if (fclose(f) != 0)
        bad = 1;
    if (bad)
        return -1;
    sha256_final(&c, d);
    to_hex(d, hex);
    return 0;
}
