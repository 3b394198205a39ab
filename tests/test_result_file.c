/* Checks a result file written by the smx2d-sim binary: complete, every
 * provenance attribute present and non-empty, the main datasets there with the
 * expected shapes, and conservation recorded. Usage: test_result_file FILE
 * [--cpu-run]; --cpu-run: a run of backend.device: cpu, which must not have
 * asked the GPU's driver anything (its version reads "not queried"). */
#include <hdf5.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static void check_attr(hid_t f, const char *name)
{
    CHECK_MSG(H5Aexists(f, name) > 0, "root attribute '%s' missing", name);
    if (H5Aexists(f, name) <= 0)
        return;
    hid_t a = H5Aopen(f, name, H5P_DEFAULT), t = H5Aget_type(a);
    if (H5Tget_class(t) == H5T_STRING) {
        /* Variable-length UTF-8 (h5py returns str), read with the file's own type. */
        CHECK_MSG(H5Tis_variable_str(t) > 0 && H5Tget_cset(t) == H5T_CSET_UTF8,
                  "root attribute '%s' is not a variable-length UTF-8 string", name);
        char *buf = NULL;
        CHECK(H5Tis_variable_str(t) > 0 && H5Aread(a, t, &buf) >= 0);
        CHECK_MSG(buf && buf[0] != '\0', "root attribute '%s' is empty", name);
        H5free_memory(buf);
    }
    H5Tclose(t);
    H5Aclose(a);
}

/* Root string attribute name equals want. */
static void check_attr_is(hid_t f, const char *name, const char *want)
{
    if (H5Aexists(f, name) <= 0)
        return; /* check_attr said so */
    hid_t a = H5Aopen(f, name, H5P_DEFAULT), t = H5Aget_type(a);
    char *buf = NULL;
    CHECK(H5Tis_variable_str(t) > 0 && H5Aread(a, t, &buf) >= 0);
    CHECK_MSG(buf && strcmp(buf, want) == 0, "root attribute '%s' is '%s', expected '%s'", name,
              buf ? buf : "(unread)", want);
    H5free_memory(buf);
    H5Tclose(t);
    H5Aclose(a);
}

int main(int argc, char **argv)
{
    const int cpu_run = argc == 3 && strcmp(argv[2], "--cpu-run") == 0;
    if (argc != 2 && !cpu_run) {
        fprintf(stderr, "usage: %s RESULT.h5 [--cpu-run]\n", argv[0]);
        return 2;
    }
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    hid_t f = H5Fopen(argv[1], H5F_ACC_RDONLY, H5P_DEFAULT);
    CHECK_MSG(f >= 0, "cannot open %s", argv[1]);
    if (f < 0)
        return check_report(argv[0]);
    const char *attrs[] = { "filetype",
                            "format_version",
                            "code_version",
                            "git_describe",
                            "compiler",
                            "cflags",
                            "hdf5_version",
                            "libyaml_version",
                            "cuda_runtime_version",
                            "cuda_driver_version",
                            "cufft_version",
                            "device_name",
                            "compute_capability",
                            "hostname",
                            "argv",
                            "utc_start",
                            "utc_end",
                            "plan_sha256",
                            "table_sha256",
                            "kernel_variants",
                            "backend" };
    for (size_t i = 0; i < sizeof attrs / sizeof attrs[0]; i++)
        check_attr(f, attrs[i]);
#ifdef SMX_HAVE_CUDA
    const char *cpu_driver = "not queried (backend.device: cpu)";
#else
    const char *cpu_driver = "none"; /* a build without CUDA records none either way */
#endif
    if (cpu_run)
        check_attr_is(f, "cuda_driver_version", cpu_driver);
    /* A run without output.per_spot_dose names no per-spot kernels. */
    CHECK_MSG(H5Aexists(f, "spot_kernel_variants") == 0,
              "spot_kernel_variants without per-spot doses");
    int complete = -1;
    hid_t a = H5Aopen(f, "complete", H5P_DEFAULT);
    H5Aread(a, H5T_NATIVE_INT, &complete);
    H5Aclose(a);
    CHECK(complete == 1);
    int viol = -1;
    a = H5Aopen(f, "conservation_violations", H5P_DEFAULT);
    H5Aread(a, H5T_NATIVE_INT, &viol);
    H5Aclose(a);
    CHECK(viol == 0);
    const char *sets[] = { "/dose/energy_deposit_MeV",
                           "/dose/dose_Gy",
                           "/axes/z_centres_mm",
                           "/tallies/weight_per_step",
                           "/tallies/cumulative_weight",
                           "/plan/yaml_text",
                           "/plan/resolved",
                           "/psi" };
    for (size_t i = 0; i < sizeof sets / sizeof sets[0]; i++)
        CHECK_MSG(H5Lexists(f, sets[i], H5P_DEFAULT) > 0, "dataset %s missing", sets[i]);
    /* The dose must be non-trivial: a run that deposits nothing is not a result. */
    hid_t d = H5Dopen(f, "/dose/energy_deposit_MeV", H5P_DEFAULT), s = H5Dget_space(d);
    hsize_t dims[2];
    H5Sget_simple_extent_dims(s, dims, NULL);
    double *dose = malloc(dims[0] * dims[1] * sizeof *dose), total = 0.0;
    CHECK(H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, dose) >= 0);
    for (hsize_t i = 0; i < dims[0] * dims[1]; i++)
        total += dose[i];
    printf("%s: %llu x %llu dose, %.4f MeV deposited per unit weight\n", argv[1],
           (unsigned long long)dims[0], (unsigned long long)dims[1], total);
    CHECK(total > 1.0);
    free(dose);
    H5Sclose(s);
    H5Dclose(d);
    H5Fclose(f);
    return check_report(argv[0]);
}
