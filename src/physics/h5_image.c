#include "physics/h5_image.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int read_bytes(const char *path, size_t max_bytes, unsigned char **out, size_t *len, smx_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return smx_fail(err, SMX_EXIT_INPUT, "%s: cannot open: %s", path, strerror(errno));
    unsigned char *buf = NULL;
    size_t n = 0, cap = 0;
    int rc = 0;
    for (;;) {
        if (n == cap) {
            if (cap >= max_bytes) {
                rc = smx_fail(err, SMX_EXIT_INPUT, "%s: larger than %zu MB; expected a smaller file", path,
                              max_bytes >> 20);
                break;
            }
            cap = cap ? 2 * cap : 1 << 16;
            unsigned char *grown = realloc(buf, cap);
            if (!grown) {
                rc = smx_fail(err, SMX_EXIT_RUNTIME, "%s: out of memory reading it", path);
                break;
            }
            buf = grown;
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0) {
            if (ferror(f))
                rc = smx_fail(err, SMX_EXIT_INPUT, "%s: cannot read: %s", path, strerror(errno));
            break;
        }
    }
    fclose(f);
    if (rc) {
        free(buf);
        return rc;
    }
    *out = buf;
    *len = n;
    return 0;
}

/* The reader on the bytes, in this process. */
static int run_on_image(const unsigned char *bytes, size_t len, const char *path, h5_image_reader reader,
                        void *ctx, smx_error *err)
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

static int check_in_child(const unsigned char *bytes, size_t len, const char *path, h5_image_reader reader,
                          void *ctx, smx_error *err)
{
    int fds[2];
    if (pipe(fds) != 0)
        return smx_fail(err, SMX_EXIT_RUNTIME, "%s: cannot check it: pipe: %s", path, strerror(errno));
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return smx_fail(err, SMX_EXIT_RUNTIME, "%s: cannot check it: fork: %s", path, strerror(errno));
    }
    if (pid == 0) {
        close(fds[0]);
        smx_error e = {0};
        e.code = run_on_image(bytes, len, path, reader, ctx, &e);
        const char *at = (const char *)&e;
        for (size_t done = 0; done < sizeof e;) {
            ssize_t w = write(fds[1], at + done, sizeof e - done);
            if (w <= 0)
                _exit(SMX_EXIT_RUNTIME);
            done += (size_t)w;
        }
        _exit(0);
    }
    close(fds[1]);
    smx_error verdict = {0};
    size_t got = 0;
    while (got < sizeof verdict) {
        ssize_t r = read(fds[0], (char *)&verdict + got, sizeof verdict - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    close(fds[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (got == sizeof verdict && WIFEXITED(status) && WEXITSTATUS(status) == 0) {
        if (verdict.code == 0)
            return 0;
        verdict.msg[sizeof verdict.msg - 1] = '\0';
        return smx_fail(err, verdict.code, "%s", verdict.msg);
    }
    if (WIFSIGNALED(status))
        return smx_fail(err, SMX_EXIT_INPUT, "%s: the HDF5 library crashed reading it (%s); the file is corrupt",
                        path, strsignal(WTERMSIG(status)));
    return smx_fail(err, SMX_EXIT_INPUT, "%s: the HDF5 library failed reading it (exit status %d); the file is "
                    "corrupt", path, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
}

int h5_image_read(const char *path, size_t max_bytes, h5_image_reader reader, void *ctx, smx_error *err)
{
    unsigned char *bytes = NULL;
    size_t len = 0;
    int rc = read_bytes(path, max_bytes, &bytes, &len, err);
    if (!rc)
        rc = check_in_child(bytes, len, path, reader, ctx, err);
    if (!rc)
        rc = run_on_image(bytes, len, path, reader, ctx, err);
    free(bytes);
    return rc;
}
