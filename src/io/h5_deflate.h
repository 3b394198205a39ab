/* A 1-D chunked dataset's values written as chunks compressed on the host's
 * threads, exactly as HDF5's shuffle and deflate filters compress them (the
 * same byte shuffle, zlib's compress2 at the same level), each chunk then
 * handed to H5Dwrite_chunk in order. HDF5 runs its filters in one thread:
 * the 820-spot field's matrix (57 million values) spent 2 s there. A reader
 * sees an ordinary shuffled and deflated dataset (h5py, h5dump, ...). */
#ifndef SMX_H5_DEFLATE_H
#define SMX_H5_DEFLATE_H

#include <hdf5.h>
#include <stddef.h>

/* What to write: n values of elem bytes in file order (the file type's
 * bytes, little-endian here), into a 1-D dataset created with chunks of
 * `chunk` values, H5Pset_shuffle then H5Pset_deflate(level). */
typedef struct h5_deflate_job {
    const void *data;
    size_t n, elem, chunk;
    int level;
} h5_deflate_job;

/* The last chunk is padded with zeros, HDF5's fill value. Returns 0, or -1
 * with *what naming the failed step (no memory, zlib, H5Dwrite_chunk). */
int h5_write_deflated(hid_t ds, const h5_deflate_job *job, const char **what);

#endif
