/* The result file's life: written under "<final>.partial-<pid>", checked for
 * room, marked complete and renamed into place on commit, removed (or kept as
 * NAME.incomplete.h5) on abort; an existing file is replaced only when asked.
 * Partial files that runs killed outright left behind are reported, and removed
 * with overwrite. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "base/interrupt.h"
#include "io/output_internal.h"

static char *dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return strdup(".");
    if (slash == path)
        return strdup("/");
    return strndup(path, (size_t)(slash - path));
}

static const char *base_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

static char *incomplete_path(const char *final_path)
{
    size_t n = strlen(final_path);
    if (n > 3 && strcmp(final_path + n - 3, ".h5") == 0)
        n -= 3;
    char *s = NULL;
    if (asprintf(&s, "%.*s.incomplete.h5", (int)n, final_path) < 0)
        return NULL;
    return s;
}

static int refuse_existing(const char *final_path, smx_error *err)
{
    return smx_fail(err, SMX_EXIT_INPUT,
                    "%s: exists; refusing to overwrite (set output.overwrite: true or pass "
                    "--overwrite)",
                    final_path);
}

int output_check_target(const char *final_path, int overwrite, smx_error *err)
{
    if (!final_path || !final_path[0])
        return smx_fail(err, SMX_EXIT_INPUT, "output file name is empty (output.file)");
    size_t n = strlen(final_path);
    if (final_path[n - 1] == '/')
        return smx_fail(err, SMX_EXIT_INPUT, "%s: names a directory, not an output file",
                        final_path);
    struct stat st;
    if (stat(final_path, &st) == 0) {
        if (S_ISDIR(st.st_mode))
            return smx_fail(err, SMX_EXIT_INPUT, "%s: is a directory, not an output file",
                            final_path);
        if (!overwrite)
            return refuse_existing(final_path, err);
    }
    char *dir = dir_of(final_path);
    if (!dir)
        return smx_fail(err, SMX_EXIT_RUNTIME, "%s: out of memory", final_path);
    int rc = SMX_OK;
    if (stat(dir, &st) != 0)
        rc = smx_fail(err, SMX_EXIT_INPUT, "%s: output directory %s: %s", final_path, dir,
                      strerror(errno));
    else if (!S_ISDIR(st.st_mode))
        rc = smx_fail(err, SMX_EXIT_INPUT, "%s: %s is not a directory", final_path, dir);
    /* The temporary file and the rename both need write and search permission. */
    else if (access(dir, W_OK | X_OK) != 0)
        rc = smx_fail(err, SMX_EXIT_INPUT, "%s: output directory %s is not writable: %s",
                      final_path, dir, strerror(errno));
    free(dir);
    return rc;
}

/* HDF5 1.10 frees a file's state when H5Fclose fails part-way (on a full disk)
 * yet leaves its id registered, and the library's exit handler then crashes on
 * it; a failed H5Fflush leaves the cache unable to flush ever again, so probing
 * with a flush does not help either. Hence a file to be kept is closed only when
 * the disk has room for everything its metadata cache may still write, and one
 * being thrown away is unlinked and truncated first, which frees that room. */
static int room_to_close(const output *o, double *need, double *have)
{
    size_t max_size = 0, min_clean = 0, cur_size = 0;
    int entries = 0;
    struct statvfs sv;
    *need = *have = 0;
    if (H5Fget_mdc_size(o->file, &max_size, &min_clean, &cur_size, &entries) < 0 ||
        statvfs(o->temp_path, &sv) != 0)
        return 1; /* cannot tell: let the close try */
    *need = (double)cur_size + (double)(1u << 20);
    *have = (double)sv.f_bavail * (double)sv.f_frsize;
    return *have >= *need;
}

/* The measures above cover a full disk, not a file-size limit (EFBIG), where the
 * close can still fail. What then crashes is HDF5's own exit handler, which has
 * nothing left to do: every file is closed explicitly before exit. Switching it
 * off (before HDF5 initialises, hence a constructor) keeps such a run's exit
 * status the documented one instead of a segfault. Only programs that link this
 * writer are affected. */
__attribute__((constructor)) static void no_hdf5_exit_handler(void)
{
    H5dont_atexit();
}

static void discard_file(output *o)
{
    if (unlink(o->temp_path) != 0 && errno != ENOENT)
        smx_warn("%s: could not remove %s: %s\n", o->final_path, o->temp_path, strerror(errno));
    hid_t fapl = H5Fget_access_plist(o->file);
    void *handle = NULL;
    if (fapl >= 0 && H5Pget_driver(fapl) == H5FD_SEC2 &&
        H5Fget_vfd_handle(o->file, fapl, &handle) >= 0 && handle) {
        int fd = *(int *)handle;
        if (ftruncate(fd, 0) != 0)
            smx_warn("%s: could not truncate %s: %s\n", o->final_path, o->temp_path,
                     strerror(errno));
    }
    if (fapl >= 0)
        H5Pclose(fapl);
    H5Fclose(o->file);
    o->file = H5I_INVALID_HID;
}

static void output_free(output *o)
{
    if (!o)
        return;
    smx_interrupt_file(NULL);
    if (o->file >= 0)
        H5Fclose(o->file);
    free(o->final_path);
    free(o->temp_path);
    free(o);
}

/* A partial file is stale when its process is gone and nobody holds the lock
 * HDF5 takes on a file open for writing (which also covers a run on another
 * machine sharing the directory, or in another PID namespace). */
static int is_stale(const char *path, long pid)
{
    if (pid <= 0 || pid == (long)getpid() || kill((pid_t)pid, 0) == 0 || errno != ESRCH)
        return 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    int unlocked = flock(fd, LOCK_EX | LOCK_NB) == 0;
    close(fd); /* releases the probe's own lock */
    return unlocked;
}

/* "<final>.partial-<pid>" files of runs that did not finish (killed, or a
 * second Ctrl-C): said so, and removed when the run may overwrite. */
static void handle_stale(const char *final_path, int overwrite)
{
    char *dir = dir_of(final_path);
    char *prefix = NULL;
    if (!dir || asprintf(&prefix, "%s.partial-", base_of(final_path)) < 0) {
        free(dir);
        return;
    }
    size_t plen = strlen(prefix);
    DIR *d = opendir(dir);
    for (struct dirent *e; d && (e = readdir(d));) {
        const char *digits = e->d_name + plen;
        char *end = NULL;
        if (strncmp(e->d_name, prefix, plen) != 0 || *digits < '0' || *digits > '9')
            continue;
        long pid = strtol(digits, &end, 10);
        char *path = NULL;
        /* Named as the user named the output: no "./" before a bare name. */
        int bare = strchr(final_path, '/') == NULL, root = !strcmp(dir, "/");
        if (*end ||
            asprintf(&path, "%s%s%s", bare ? "" : dir, bare || root ? "" : "/", e->d_name) < 0)
            continue;
        if (!is_stale(path, pid)) {
            free(path);
            continue;
        }
        if (!overwrite)
            smx_warn("%s: left by a run that did not finish (process %ld is gone); remove it, "
                     "or pass --overwrite to have it removed\n",
                     path, pid);
        else if (unlink(path) == 0)
            smx_warn("%s: removed (left by a run that did not finish; process %ld is gone)\n", path,
                     pid);
        else
            smx_warn("%s: left by a run that did not finish; could not remove it: %s\n", path,
                     strerror(errno));
        free(path);
    }
    if (d)
        closedir(d);
    free(prefix);
    free(dir);
}

static int open_impl(output **out, const char *final_path, int overwrite, smx_error *err)
{
    *out = NULL;
    int rc = output_check_target(final_path, overwrite, err);
    if (rc)
        return rc;
    handle_stale(final_path, overwrite);
    output *o = calloc(1, sizeof *o);
    if (!o)
        return smx_fail(err, SMX_EXIT_RUNTIME, "%s: out of memory", final_path);
    o->file = H5I_INVALID_HID;
    o->overwrite = overwrite;
    o->final_path = strdup(final_path);
    if (!o->final_path ||
        asprintf(&o->temp_path, "%s.partial-%ld", final_path, (long)getpid()) < 0) {
        o->temp_path = NULL;
        output_free(o);
        return smx_fail(err, SMX_EXIT_RUNTIME, "%s: out of memory", final_path);
    }

    /* STRONG closes any object an error path might have left open, so closing
     * the file always really closes it before the rename. */
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    if (fapl >= 0 && H5Pset_fclose_degree(fapl, H5F_CLOSE_STRONG) >= 0)
        o->file = H5Fcreate(o->temp_path, H5F_ACC_EXCL, H5P_DEFAULT, fapl);
    if (o->file >= 0)
        smx_interrupt_file(o->temp_path);
    /* Before H5Pclose: every API call starts by clearing the error stack. */
    if (o->file < 0)
        rc = out_h5_fail(o, err, "create", "the temporary file");
    if (fapl >= 0)
        H5Pclose(fapl);
    if (rc) {
        output_free(o);
        return rc;
    }
    rc = out_attr_str(o, o->file, "/", "filetype", OUTPUT_FILETYPE, err);
    if (!rc)
        rc = out_attr_str(o, o->file, "/", "format_version", OUTPUT_FORMAT_VERSION, err);
    if (!rc)
        rc = out_attr_int(o, o->file, "/", "complete", 0, err);
    if (rc) {
        discard_file(o);
        output_free(o);
        return rc;
    }
    *out = o;
    return SMX_OK;
}

int output_open(output **o, const char *final_path, int overwrite, smx_error *err)
{
    h5quiet q = out_quiet_begin();
    int rc = open_impl(o, final_path, overwrite, err);
    out_quiet_end(q);
    return rc;
}

const char *output_temp_path(const output *o)
{
    return o ? o->temp_path : NULL;
}

static int not_open(const output *o, smx_error *err, const char *what)
{
    if (o && o->file >= 0)
        return SMX_OK;
    return smx_fail(err, SMX_EXIT_RUNTIME, "%s: %s called on an output that is not open",
                    o && o->final_path ? o->final_path : "output", what);
}

void out_remember_mesh(output *o, const grid *g)
{
    o->mesh.nz = g->nz;
    o->mesh.nx = g->nx;
    o->mesh.z0_mm = g->z.edges[0];
    o->mesh.x0_mm = g->x.edges[0];
    o->mesh.dz_mm = g->dz;
    o->mesh.dx_mm = g->dx;
}

static int check_grid(const output *o, const grid *g, smx_error *err)
{
    if (g->ne < 1 || g->nth < 1 || g->nz < 1 || g->nx < 1 || g->E.n != g->ne ||
        g->theta.n != g->nth || g->z.n != g->nz || g->x.n != g->nx)
        return smx_fail(
            err, SMX_EXIT_RUNTIME, "%s: inconsistent grid (ne %lld, nth %lld, nz %lld, nx %lld)",
            o->final_path, (long long)g->ne, (long long)g->nth, (long long)g->nz, (long long)g->nx);
    return SMX_OK;
}

int out_ready(const output *o, const grid *g, smx_error *err, const char *what)
{
    int rc = not_open(o, err, what);
    if (!rc)
        rc = check_grid(o, g, err);
    return rc;
}

/* Without overwrite, link() refuses an existing name atomically, so a file that
 * appeared at the final path during the run is still never replaced. Filesystems
 * without hard links fall back to a check before rename(). */
static int place_file(output *o, smx_error *err)
{
    if (o->overwrite) {
        if (rename(o->temp_path, o->final_path) == 0)
            return SMX_OK;
    } else if (link(o->temp_path, o->final_path) == 0) {
        if (unlink(o->temp_path) != 0)
            smx_warn("%s: could not remove %s after linking it into place: %s\n", o->final_path,
                     o->temp_path, strerror(errno));
        return SMX_OK;
    } else if (errno == EEXIST) {
        return refuse_existing(o->final_path, err);
    } else if (errno == EPERM || errno == ENOTSUP || errno == EOPNOTSUPP || errno == EMLINK ||
               errno == ENOSYS) {
        if (access(o->final_path, F_OK) == 0)
            return refuse_existing(o->final_path, err);
        if (rename(o->temp_path, o->final_path) == 0)
            return SMX_OK;
    }
    return smx_fail(err, SMX_EXIT_RUNTIME, "%s: cannot move %s into place: %s", o->final_path,
                    o->temp_path, strerror(errno));
}

static int commit_impl(output *o, smx_error *err)
{
    int rc = not_open(o, err, "output_commit");
    if (rc)
        return rc;
    /* A file marked complete must hold everything the layout promises, and the
     * sidecar needs the dose mesh. */
    if (!o->setup_done || !o->result_done)
        return smx_fail(err, SMX_EXIT_RUNTIME,
                        "%s: output_commit before output_write_setup and "
                        "output_write_result",
                        o->final_path);
    if ((rc = out_attr_int(o, o->file, "/", "complete", 1, err)))
        return rc;
    /* See room_to_close(): without room the file stays open for output_abort. */
    double need, have;
    if (!room_to_close(o, &need, &have))
        return smx_fail(err, SMX_EXIT_RUNTIME,
                        "%s: not enough disk space to finish %s "
                        "(%.3g MB free, %.3g MB needed)",
                        o->final_path, o->temp_path, have * 1e-6, need * 1e-6);
    herr_t closed = H5Fclose(o->file);
    o->file = H5I_INVALID_HID;
    if (closed < 0)
        return out_h5_fail(o, err, "close", "the file");
    if ((rc = place_file(o, err)))
        return rc;
    o->placed = 1;

    char *xpath = xdmf_path_for(o->final_path);
    if (!xpath)
        return smx_fail(err, SMX_EXIT_RUNTIME, "%s: out of memory", o->final_path);
    /* The material map beside the dose, so ParaView shows dose over anatomy. */
    const xdmf_field fields[] = {
        { "dose_Gy", "/dose/dose_Gy", 8, NULL },
        { "energy_deposit_MeV", "/dose/energy_deposit_MeV", 8, NULL },
        { "material_index", "/geometry/material_index", 1, "UChar" },
        { "density_g_cm3", "/geometry/density_g_cm3", 4, NULL },
    };
    rc = xdmf_write(xpath, base_of(o->final_path), &o->mesh, fields, o->geometry_done ? 4 : 2, err);
    free(xpath);
    if (rc)
        return rc;
    output_free(o);
    return SMX_OK;
}

/* On failure o stays valid and the caller ends it with output_abort(), which
 * never removes a file that already reached its final name. */
int output_commit(output *o, smx_error *err)
{
    h5quiet q = out_quiet_begin();
    int rc = commit_impl(o, err);
    out_quiet_end(q);
    return rc;
}

void output_abort(output *o, int keep_partial)
{
    if (!o)
        return;
    h5quiet q = out_quiet_begin();
    int keep = keep_partial && !o->placed;
    /* A commit that failed after marking the file complete (and perhaps closing
     * it) must not leave that mark on what is kept as incomplete. */
    if (keep && o->file < 0)
        o->file = H5Fopen(o->temp_path, H5F_ACC_RDWR, H5P_DEFAULT);
    if (keep && o->file >= 0) {
        smx_error ignored = { 0 };
        out_attr_int(o, o->file, "/", "complete", 0, &ignored);
    }
    if (o->file >= 0) {
        double need, have;
        if (keep && !room_to_close(o, &need, &have)) {
            smx_warn("%s: not enough disk space to finish the partial results (%.3g MB "
                     "free, %.3g MB needed); nothing kept\n",
                     o->final_path, have * 1e-6, need * 1e-6);
            keep = 0;
        }
        if (keep) {
            H5Fclose(o->file);
            o->file = H5I_INVALID_HID;
        } else {
            discard_file(o);
        }
    }
    if (keep) {
        /* If the rename fails the data stays under the temporary name rather
         * than being deleted: the user asked for it to be kept. */
        char *kept = incomplete_path(o->final_path);
        if (kept && rename(o->temp_path, kept) == 0)
            smx_warn("partial results kept in %s (attribute complete = 0)\n", kept);
        else
            smx_warn("%s: could not rename partial results to %s: %s; they remain in %s\n",
                     o->final_path, kept ? kept : "*.incomplete.h5",
                     kept ? strerror(errno) : "out of memory", o->temp_path);
        free(kept);
    } else if (!o->placed) {
        if (unlink(o->temp_path) != 0 && errno != ENOENT)
            smx_warn("%s: could not remove %s: %s\n", o->final_path, o->temp_path, strerror(errno));
    }
    output_free(o);
    out_quiet_end(q);
}
