/* SHA-256 (FIPS 180-4), for provenance hashes of plan and table files. The
 * hashing is Nettle's (libnettle); this header keeps Nettle's own out of the
 * callers, whose macros would rename these functions. */
#ifndef SMX_SHA256_H
#define SMX_SHA256_H

#include <stddef.h>
#include <stdint.h>

/* Holds Nettle's struct sha256_ctx (112 bytes in Nettle 3.x; sha256.c checks
 * that it fits). */
typedef struct smx_sha256_ctx {
    union {
        uint64_t align;
        unsigned char bytes[160];
    } nettle;
} sha256_ctx;

void sha256_init(sha256_ctx *c);
void sha256_update(sha256_ctx *c, const void *data, size_t n);
void sha256_final(sha256_ctx *c, uint8_t out[32]);
/* Hex digest of a buffer / of a file's bytes; the file form returns -1 on I/O error. */
void sha256_hex(const void *data, size_t n, char hex[65]);
int sha256_file_hex(const char *path, char hex[65]);

#endif
