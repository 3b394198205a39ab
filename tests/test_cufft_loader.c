/* cuFFT loaded at run time (cuda/cufft_loader.cu), seen through cufft_query
 * and the provenance it feeds; no GPU is needed to load the library.
 *   test_cufft_loader missing   SMX2D_CUFFT_LIBRARY names a file that is not there
 *   test_cufft_loader none      SMX2D_CUFFT_LIBRARY=none
 *   test_cufft_loader present   the default library (skips, 77, where it is absent)
 * One mode per process: the loader tries once and keeps the outcome. */
#include "check.h"
#include "io/provenance.h"
#include "transport/device_query.h"

#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "missing";
    const char *missing = "/nonexistent/smx2d/libcufft.so.99";
    if (strcmp(mode, "missing") == 0)
        setenv("SMX2D_CUFFT_LIBRARY", missing, 1);
    else if (strcmp(mode, "none") == 0)
        setenv("SMX2D_CUFFT_LIBRARY", "none", 1);
    else
        unsetenv("SMX2D_CUFFT_LIBRARY");

    char why[512];
    provenance pv;
    char *args[] = { "smx2d-sim", "plan.yaml" };
    provenance_init(&pv, 2, args);
#ifndef SMX_HAVE_CUDA
    CHECK(cufft_query(1, why, sizeof why) == 0);
    CHECK(strstr(why, "built without CUDA") != NULL);
    provenance_finish(&pv);
    CHECK_STREQ(pv.cufft_version, "none");
#else
    /* Nothing loads it behind the caller's back: not even provenance. */
    CHECK(cufft_query(0, why, sizeof why) == 0);
    CHECK_STREQ(why, "not loaded");
    provenance_finish(&pv);
    CHECK_STREQ(pv.cufft_version, "none");

    int v = cufft_query(1, why, sizeof why);
    if (strcmp(mode, "present") == 0) {
        if (v == 0) {
            printf("SKIP: no cuFFT on this machine: %s\n", why);
            return 77;
        }
        /* cuFFT numbers versions major * 1000 + ...; 10 (CUDA 11) is the oldest
         * cufftMakePlanMany64 and cufftGetVersion pair this code could meet. */
        CHECK_MSG(v >= 10000, "version %d", v);
        CHECK_STREQ(why, "");
        CHECK(cufft_query(0, why, sizeof why) == v); /* kept, not reloaded */
        char want[64];
        snprintf(want, sizeof want, "%d", v);
        provenance_finish(&pv);
        CHECK_STREQ(pv.cufft_version, want);
    } else {
        CHECK(v == 0);
        if (strcmp(mode, "missing") == 0)
            CHECK_MSG(strstr(why, missing) != NULL, "the reason does not name the file: %s", why);
        else
            CHECK_STREQ(why, "SMX2D_CUFFT_LIBRARY=none");
        /* The outcome is kept: asking again neither loads nor changes it. */
        char again[512];
        unsetenv("SMX2D_CUFFT_LIBRARY");
        CHECK(cufft_query(1, again, sizeof again) == 0);
        CHECK_STREQ(again, why);
        provenance_finish(&pv);
        CHECK_STREQ(pv.cufft_version, "none");
    }
#endif
    return check_report(argv[0]);
}
