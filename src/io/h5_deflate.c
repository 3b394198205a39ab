/* Chunks compressed on the host's threads (h5_deflate.h). */
#include "io/h5_deflate.h"

#include <omp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* HDF5's shuffle filter (H5Zshuffle.c): byte k of every element, then byte
 * k + 1, ...; a chunk of whole elements leaves no remainder. */
static void shuffle_bytes(unsigned char *dst, const unsigned char *src, size_t count, size_t elem)
{
    for (size_t k = 0; k < elem; k++)
        for (size_t i = 0; i < count; i++)
            dst[k * count + i] = src[i * elem + k];
}

/* Chunk c shuffled and compressed into out[c] (its size in len[c]); 0 or -1. */
static int pack_chunk(const unsigned char *data, size_t n, size_t elem, size_t chunk, int level,
                      size_t c, unsigned char *raw, unsigned char *shuf, unsigned char **out,
                      size_t *len)
{
    const size_t bytes = chunk * elem, first = c * chunk;
    const size_t have = n - first < chunk ? n - first : chunk;
    memcpy(raw, data + first * elem, have * elem);
    memset(raw + have * elem, 0, bytes - have * elem); /* the fill value past the end */
    shuffle_bytes(shuf, raw, chunk, elem);
    uLongf cap = compressBound((uLong)bytes);
    out[c] = malloc(cap);
    if (!out[c] || compress2(out[c], &cap, shuf, (uLong)bytes, level) != Z_OK)
        return -1;
    len[c] = cap;
    return 0;
}

int h5_write_deflated(hid_t ds, const void *data, size_t n, size_t elem, size_t chunk, int level,
                      const char **what)
{
    const size_t nchunks = chunk ? (n + chunk - 1) / chunk : 0;
    unsigned char **out = calloc(nchunks ? nchunks : 1, sizeof *out);
    size_t *len = calloc(nchunks ? nchunks : 1, sizeof *len);
    int bad = !out || !len;
    *what = "allocate the chunks of";
    if (!bad) {
#pragma omp parallel reduction(| : bad)
        {
            unsigned char *raw = malloc(chunk * elem), *shuf = malloc(chunk * elem);
            bad |= !raw || !shuf;
#pragma omp for schedule(dynamic, 1)
            for (size_t c = 0; c < nchunks; c++)
                if (!bad)
                    bad |= pack_chunk(data, n, elem, chunk, level, c, raw, shuf, out, len) != 0;
            free(raw);
            free(shuf);
        }
        if (bad)
            *what = "compress (zlib) the chunks of";
    }
    for (size_t c = 0; c < nchunks && !bad; c++) {
        const hsize_t offset = (hsize_t)(c * chunk);
        if (H5Dwrite_chunk(ds, H5P_DEFAULT, 0, &offset, len[c], out[c]) < 0) {
            *what = "write the chunks of";
            bad = 1;
        }
    }
    for (size_t c = 0; out && c < nchunks; c++)
        free(out[c]);
    free(out);
    free(len);
    return bad ? -1 : 0;
}
