#include "physics/h5_image.h"

#include "base/child_check.h"
#include "base/file_bytes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The reader on the bytes, in this process. */
static int run_on_image(const unsigned char *bytes, size_t len, const char *path,
                        h5_image_reader reader, void *ctx, smx_error *err)
{
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    /* The core driver opens the bytes as a file (a copy; nothing is written
     * back); the name must not exist on disk, and an empty image would make
     * it read that file instead. */
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS), fid = H5I_INVALID_HID;
    if (len > 0 && fapl >= 0 && H5Pset_fapl_core(fapl, 1 << 16, 0) >= 0 &&
        H5Pset_file_image(fapl, (void *)bytes, len) >= 0)
        fid = H5Fopen("/proc/self/smx2d-sim-map-image", H5F_ACC_RDONLY, fapl);
    if (fapl >= 0)
        H5Pclose(fapl);
    if (fid < 0)
        return smx_fail(err, SMX_EXIT_INPUT, "%s: not an HDF5 file (or unreadable)", path);
    int rc = reader(fid, path, ctx, err);
    if (H5Fclose(fid) < 0 && rc == 0)
        rc = smx_fail(err, SMX_EXIT_INPUT, "%s: error closing the HDF5 file", path);
    return rc;
}

/* run_on_image's arguments, for child_check. */
typedef struct image_job {
    const unsigned char *bytes;
    size_t len;
    const char *path;
    h5_image_reader reader;
    void *ctx;
} image_job;

static int run_job(void *vjob, smx_error *err)
{
    const image_job *j = vjob;
    return run_on_image(j->bytes, j->len, j->path, j->reader, j->ctx, err);
}

int h5_image_read(const char *path, size_t max_bytes, h5_image_reader reader, void *ctx,
                  smx_error *err)
{
    unsigned char *bytes = NULL;
    size_t len = 0;
    int rc = file_bytes_read(path, max_bytes, "a smaller file", &bytes, &len, err);
    if (!rc)
        rc = child_check(run_job, &(image_job){ bytes, len, path, reader, ctx }, path, err);
    if (!rc)
        rc = run_on_image(bytes, len, path, reader, ctx, err);
    free(bytes);
    return rc;
}
