/* Chunks compressed on the host's threads (io/h5_deflate.h) against HDF5's
 * own shuffle and deflate filters: the same stored bytes chunk for chunk
 * (so any reader decodes them as it decodes HDF5's), the same values read
 * back, with a last chunk that the dataset ends inside, for 2- and 4-byte
 * values, at deflate levels 1 and 6. */
#include <hdf5.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "io/h5_deflate.h"

enum { N = 25013, CHUNK = 4096 };

static hid_t make(hid_t f, const char *name, hid_t type, int level)
{
    const hsize_t n = N, chunk = CHUNK;
    hid_t space = H5Screate_simple(1, &n, NULL), dcpl = H5Pcreate(H5P_DATASET_CREATE);
    CHECK(H5Pset_chunk(dcpl, 1, &chunk) >= 0 && H5Pset_shuffle(dcpl) >= 0 &&
          H5Pset_deflate(dcpl, (unsigned)level) >= 0);
    hid_t ds = H5Dcreate2(f, name, type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    CHECK(ds >= 0);
    H5Pclose(dcpl);
    H5Sclose(space);
    return ds;
}

/* Every chunk of a and b: the same filter mask and the same bytes. */
static int same_chunks(hid_t a, hid_t b)
{
    int same = 1;
    unsigned char *ba = malloc(8 * CHUNK + 1024), *bb = malloc(8 * CHUNK + 1024);
    for (hsize_t off = 0; off < N; off += CHUNK) {
        hsize_t sa = 0, sb = 0;
        uint32_t ma = 9, mb = 9;
        CHECK(H5Dget_chunk_storage_size(a, &off, &sa) >= 0 &&
              H5Dget_chunk_storage_size(b, &off, &sb) >= 0);
        CHECK(sa > 0 && sa <= 8 * CHUNK + 1024 && sb > 0 && sb <= 8 * CHUNK + 1024);
        CHECK(H5Dread_chunk(a, H5P_DEFAULT, &off, &ma, ba) >= 0 &&
              H5Dread_chunk(b, H5P_DEFAULT, &off, &mb, bb) >= 0);
        same &= sa == sb && ma == 0 && mb == 0 && memcmp(ba, bb, sa) == 0;
    }
    free(ba);
    free(bb);
    return same;
}

static void case_of(hid_t f, int elem, int level)
{
    char na[32], nb[32];
    snprintf(na, sizeof na, "hdf5_%d_%d", elem, level);
    snprintf(nb, sizeof nb, "host_%d_%d", elem, level);
    const hid_t ft = elem == 2 ? H5T_STD_U16LE : H5T_STD_I32LE;
    const hid_t mt = elem == 2 ? H5T_NATIVE_UINT16 : H5T_NATIVE_INT32;
    unsigned char *v = malloc((size_t)N * elem), *back = malloc((size_t)N * elem);
    uint64_t r = 12345;
    for (int i = 0; i < N; i++) { /* runs (as a sparse row's cells) and noise */
        r = r * 6364136223846793005ull + 1442695040888963407ull;
        const uint32_t x = i % 97 < 60 ? (uint32_t)(i / 3) : (uint32_t)(r >> 40);
        memcpy(v + (size_t)i * elem, &x, elem); /* little-endian: the low bytes */
    }
    hid_t a = make(f, na, ft, level), b = make(f, nb, ft, level);
    CHECK(H5Dwrite(a, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0);
    const char *what = "";
    const h5_deflate_job job = { v, N, (size_t)elem, CHUNK, level };
    CHECK(h5_write_deflated(b, &job, &what) == 0);
    CHECK_MSG(same_chunks(a, b), "%d-byte values, level %d: the chunks differ from HDF5's", elem,
              level);
    CHECK(H5Dread(b, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, back) >= 0);
    CHECK(memcmp(back, v, (size_t)N * elem) == 0);
    H5Dclose(a);
    H5Dclose(b);
    free(v);
    free(back);
}

int main(void)
{
    char path[] = "/tmp/smx_h5_deflate_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    close(fd);
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    CHECK(f >= 0);
    for (int level = 1; level <= 6; level += 5) {
        case_of(f, 2, level);
        case_of(f, 4, level);
    }
    H5Fclose(f);
    unlink(path);
    return check_report("test_h5_deflate");
}
