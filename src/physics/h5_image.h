/* Reading an input HDF5 file that may be corrupt, without crashing.
 *
 * HDF5 1.10 crashes, rather than fails, on some corrupt files (see
 * physics/tables.c, found by fuzzing). The file's bytes are read once; a
 * child process runs the reader on them first, and only when it comes back
 * clean does this process run the same reader on the same bytes. A file that
 * kills the child is an input error naming the file, not a crash. */
#ifndef SMX_H5_IMAGE_H
#define SMX_H5_IMAGE_H

#include <stddef.h>

#include <hdf5.h>

#include "base/error.h"

/* Reads what it needs from the open file fid into ctx (which it sets up
 * itself: it runs twice, once in the child). name is the file for messages. */
typedef int (*h5_image_reader)(hid_t fid, const char *name, void *ctx, smx_error *err);

/* Runs reader on the file at path (at most max_bytes long) as described
 * above. Messages start with the path. */
int h5_image_read(const char *path, size_t max_bytes, h5_image_reader reader, void *ctx,
                  smx_error *err);

#endif
