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

/* The compressed chunks and their sizes. */
typedef struct packed_chunks {
    unsigned char **buf;
    size_t *len;
} packed_chunks;

/* Chunk c shuffled (into shuf; the last, partial chunk first padded in
 * raw: a chunk's bytes each) and compressed into p->buf[c], its size in
 * p->len[c]; 0 or -1. */
static int pack_chunk(const h5_deflate_job *j, size_t c, unsigned char *raw, unsigned char *shuf,
                      const packed_chunks *p)
{
    const unsigned char *src = (const unsigned char *)j->data + c * j->chunk * j->elem;
    const size_t bytes = j->chunk * j->elem, first = c * j->chunk;
    const size_t have = j->n - first < j->chunk ? j->n - first : j->chunk;
    if (have < j->chunk) {
        memcpy(raw, src, have * j->elem);
        memset(raw + have * j->elem, 0, bytes - have * j->elem); /* the fill value past the end */
        src = raw;
    }
    shuffle_bytes(shuf, src, j->chunk, j->elem);
    uLongf cap = compressBound((uLong)bytes);
    p->buf[c] = malloc(cap);
    if (!p->buf[c] || compress2(p->buf[c], &cap, shuf, (uLong)bytes, j->level) != Z_OK)
        return -1;
    p->len[c] = cap;
    return 0;
}

int h5_write_deflated(hid_t ds, const h5_deflate_job *j, const char **what)
{
    const size_t nchunks = j->chunk ? (j->n + j->chunk - 1) / j->chunk : 0;
    const packed_chunks p = { calloc(nchunks ? nchunks : 1, sizeof *p.buf),
                              calloc(nchunks ? nchunks : 1, sizeof *p.len) };
    int bad = !p.buf || !p.len;
    *what = "allocate the chunks of";
    if (!bad) {
#pragma omp parallel reduction(| : bad)
        {
            unsigned char *raw = malloc(j->chunk * j->elem), *shuf = malloc(j->chunk * j->elem);
            bad |= !raw || !shuf;
#pragma omp for schedule(dynamic, 1)
            for (size_t c = 0; c < nchunks; c++)
                if (!bad)
                    bad |= pack_chunk(j, c, raw, shuf, &p) != 0;
            free(raw);
            free(shuf);
        }
        if (bad)
            *what = "compress (zlib) the chunks of";
    }
    for (size_t c = 0; c < nchunks && !bad; c++) {
        const hsize_t offset = (hsize_t)(c * j->chunk);
        if (H5Dwrite_chunk(ds, H5P_DEFAULT, 0, &offset, p.len[c], p.buf[c]) < 0) {
            *what = "write the chunks of";
            bad = 1;
        }
    }
    for (size_t c = 0; p.buf && c < nchunks; c++)
        free(p.buf[c]);
    free(p.buf);
    free(p.len);
    return bad ? -1 : 0;
}
