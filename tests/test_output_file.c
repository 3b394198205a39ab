/* The result file's life: overwrite policy, abort with and without
 * keep-partial, a run of zero steps, write errors, and a full disk leaving
 * nothing under the final name. The datasets themselves: test_output.c. */
#include "output_fixture.h"

/* The file an earlier run left (five steps): the refusals below must leave it
 * as it is, and an allowed overwrite must replace it. */
static void write_earlier_result(void)
{
    fixture fx;
    make_fixture(&fx, 5);
    smx_error err = { 0 };
    CHECK_MSG(write_all(path_in("result.h5"), 0, &fx, &err) == SMX_OK, "%s", err.msg);
    free_fixture(&fx);
}

static void test_overwrite(void)
{
    fixture fx;
    make_fixture(&fx, 3);
    const char *final = path_in("result.h5");
    size_t len0 = 0, len1 = 0;
    char *before = slurp(final, &len0);
    CHECK(before != NULL);

    char want[1024];
    snprintf(want, sizeof want,
             "%s: exists; refusing to overwrite (set output.overwrite: "
             "true or pass --overwrite)",
             final);
    smx_error err = { 0 };
    CHECK(output_check_target(final, 0, &err) == SMX_EXIT_INPUT);
    CHECK_STREQ(err.msg, want);
    static int sentinel;
    output *o = (output *)(void *)&sentinel; /* must be reset to NULL on failure */
    memset(&err, 0, sizeof err);
    CHECK(output_open(&o, final, 0, &err) == SMX_EXIT_INPUT);
    CHECK(o == NULL);
    CHECK_STREQ(err.msg, want);
    char *after = slurp(final, &len1);
    CHECK(after && len0 == len1 && memcmp(before, after, len0) == 0);
    free(after);
    char temp[512];
    snprintf(temp, sizeof temp, "%s.partial-%ld", final, (long)getpid());
    CHECK(!exists(temp));

    /* A final file that appears while the run is going is not replaced either. */
    const char *late = path_in("late.h5");
    memset(&err, 0, sizeof err);
    CHECK(output_open(&o, late, 0, &err) == SMX_OK);
    CHECK(output_write_setup(o, &fx.p, &fx.g, &fx.t, &err) == SMX_OK);
    CHECK(output_write_result(o, &(output_run){ &fx.p, &fx.g, &fx.r }, &fx.fig, &fx.pv, &err) ==
          SMX_OK);
    FILE *lf = fopen(late, "w");
    fputs("someone else's file\n", lf);
    fclose(lf);
    CHECK(output_commit(o, &err) == SMX_EXIT_INPUT);
    output_abort(o, 1); /* the commit had marked it complete: the kept copy is not */
    CHECK(read_complete(path_in("late.incomplete.h5")) == 0);
    after = slurp(late, &len1);
    CHECK(after && strcmp(after, "someone else's file\n") == 0);
    free(after);
    CHECK(!exists(path_in("late.xdmf")));

    memset(&err, 0, sizeof err);
    CHECK(write_all(final, 1, &fx, &err) == SMX_OK);
    CHECK_MSG(err.code == 0, "%s", err.msg);
    hid_t f = H5Fopen(final, H5F_ACC_RDONLY, H5P_DEFAULT);
    CHECK(read_num_attr(f, "n_steps") == 3.0);
    check_tallies(f, &fx.r);
    H5Fclose(f);
    after = slurp(final, &len1);
    CHECK(after && (len0 != len1 || memcmp(before, after, len0) != 0));
    free(after);
    free(before);
    free_fixture(&fx);
}

static void test_abort(void)
{
    fixture fx;
    make_fixture(&fx, 2);
    const char *final = path_in("aborted.h5");
    smx_error err = { 0 };
    output *o = NULL;
    CHECK(output_open(&o, final, 0, &err) == SMX_OK);
    char temp[512];
    snprintf(temp, sizeof temp, "%s", output_temp_path(o));
    CHECK(output_write_setup(o, &fx.p, &fx.g, &fx.t, &err) == SMX_OK);
    CHECK(output_write_snapshot(o, &fx.g, 0, fx.psi0, &err) == SMX_OK);
    output_abort(o, 0);
    CHECK(!exists(final) && !exists(temp) && !exists(path_in("aborted.incomplete.h5")));
    CHECK(!exists(path_in("aborted.xdmf")));

    CHECK(output_open(&o, final, 0, &err) == SMX_OK);
    snprintf(temp, sizeof temp, "%s", output_temp_path(o));
    CHECK(output_write_setup(o, &fx.p, &fx.g, &fx.t, &err) == SMX_OK);
    CHECK(output_write_snapshot(o, &fx.g, 0, fx.psi0, &err) == SMX_OK);
    /* Committing without a result is refused, and abort still cleans up. */
    CHECK(output_commit(o, &err) == SMX_EXIT_RUNTIME);
    CHECK(strstr(err.msg, "output_commit before") != NULL);
    output_abort(o, 1);
    const char *kept = path_in("aborted.incomplete.h5");
    CHECK(!exists(final) && !exists(temp) && exists(kept));
    CHECK(read_complete(kept) == 0);
    hid_t f = H5Fopen(kept, H5F_ACC_RDONLY, H5P_DEFAULT);
    CHECK(f >= 0);
    if (f >= 0) {
        check_psi(f, &fx, "/psi/step_000000", fx.psi0, 0);
        H5Fclose(f);
    }
    free_fixture(&fx);
}

static void test_zero_steps_and_errors(void)
{
    fixture fx;
    make_fixture(&fx, 0);
    fx.r.n_phases = 0;
    const char *final = path_in("empty.h5");
    smx_error err = { 0 };
    CHECK(write_all(final, 0, &fx, &err) == SMX_OK);
    CHECK_MSG(err.code == 0, "%s", err.msg);
    hid_t f = H5Fopen(final, H5F_ACC_RDONLY, H5P_DEFAULT);
    check_tallies(f, &fx.r);
    int rank;
    hsize_t d[4] = { 9 };
    free(read_ds(f, "/timing/phase_seconds", 0, &rank, d));
    CHECK(rank == 1 && d[0] == 0);
    CHECK(read_num_attr(f, "n_steps") == 0.0);
    H5Fclose(f);

    memset(&err, 0, sizeof err);
    CHECK(output_check_target(path_in("no/such/dir/out.h5"), 1, &err) == SMX_EXIT_INPUT);
    CHECK(strstr(err.msg, "no/such/dir") != NULL);
    memset(&err, 0, sizeof err);
    CHECK(output_check_target(tmpdir, 1, &err) == SMX_EXIT_INPUT);
    CHECK(strstr(err.msg, "is a directory") != NULL);
    memset(&err, 0, sizeof err);
    CHECK(output_check_target("", 0, &err) == SMX_EXIT_INPUT);

    /* root ignores permission bits, so the read-only case only runs unprivileged. */
    if (geteuid() != 0) {
        const char *ro = path_in("ro");
        mkdir(ro, 0555);
        char p[600];
        snprintf(p, sizeof p, "%s/out.h5", ro);
        memset(&err, 0, sizeof err);
        CHECK(output_check_target(p, 0, &err) == SMX_EXIT_INPUT);
        CHECK(strstr(err.msg, "not writable") != NULL);
        rmdir(ro);
    }
    free_fixture(&fx);
}

/* A full disk, simulated with a file-size limit: the snapshot must fail with a
 * message naming it, and the abort must remove the file without tripping the
 * HDF5 1.10 crash-at-exit that follows a failed H5Fclose. Run in a child so the
 * limit and any crash stay there. */
static void test_disk_full(void)
{
    fixture fx;
    make_fixture(&fx, 1);
    free_grid(&fx.g);
    free(fx.psi0);
    /* 4 x 4 x 50 x 50 random floats: ~160 kB that deflate cannot shrink much. */
    memset(&fx.g, 0, sizeof fx.g);
    fx.g.ne = 4, fx.g.nth = 4, fx.g.nz = 50, fx.g.nx = 50;
    make_axis(&fx.g.E, 4, 10.0, 1.0);
    make_axis(&fx.g.theta, 4, 1.5, 0.01);
    make_axis(&fx.g.z, 50, 0.0, 1.0);
    make_axis(&fx.g.x, 50, -25.0, 1.0);
    fx.g.dx = fx.g.dz = 1.0, fx.g.density = 1.0;
    fx.g.slice = 2500, fx.g.cells = 40000;
    fx.psi0 = malloc(40000 * sizeof(float));
    for (int i = 0; i < 40000; i++)
        fx.psi0[i] = (float)rnd();
    const char *final = path_in("full.h5");

    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) {
        signal(SIGXFSZ, SIG_IGN);
        struct rlimit rl = { 64 << 10, 64 << 10 };
        setrlimit(RLIMIT_FSIZE, &rl);
        smx_error err = { 0 };
        output *o = NULL;
        int bad = output_open(&o, final, 0, &err) != SMX_OK ||
                  output_write_setup(o, &fx.p, &fx.g, &fx.t, &err) != SMX_OK;
        int rc = bad ? 0 : output_write_snapshot(o, &fx.g, 0, fx.psi0, &err);
        if (rc != SMX_EXIT_RUNTIME || !strstr(err.msg, "cannot write dataset /psi/step_000000")) {
            fprintf(stderr, "disk-full child: rc %d, message: %s\n", rc, err.msg);
            bad = 1;
        }
        if (o)
            output_abort(o, 0);
        exit(bad ? 1 : 0);
    }
    int status = 0;
    CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %#x", status);
    CHECK(!exists(final));
    DIR *d = opendir(tmpdir);
    for (struct dirent *e; d && (e = readdir(d));)
        CHECK_MSG(!strstr(e->d_name, "full.h5"), "left behind: %s", e->d_name);
    if (d)
        closedir(d);
    free_fixture(&fx);
}

int main(int argc, char **argv)
{
    (void)argc;
    if (output_fixture_begin("test_output_file"))
        return 1;
    write_earlier_result();
    test_overwrite();
    test_abort();
    test_zero_steps_and_errors();
    test_disk_full();
    cleanup();
    return check_report(argv[0]);
}
