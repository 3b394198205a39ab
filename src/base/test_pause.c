#include "base/test_pause.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void smx_test_pause(const char *phase, volatile sig_atomic_t *flag)
{
    const char *want = getenv("SMX2D_TEST_PAUSE_AT");
    if (!want || strcmp(want, phase) != 0)
        return;
    fprintf(stderr, "smx2d-sim: test: paused at %s\n", phase);
    fflush(stderr);
    /* Polling a flag the handler sets works whichever thread the signal lands
     * on, and a signal that came before the loop is not missed. */
    const struct timespec tick = { 0, 10 * 1000 * 1000 };
    for (int i = 0; i < 6000 && !*flag; i++)
        nanosleep(&tick, NULL);
}

int smx_test_rank = 0;

int smx_test_fail(const char *phase, smx_error *err)
{
    const char *want = getenv("SMX2D_TEST_FAIL_RANK");
    if (!want || !want[0])
        return 0;
    char *end = NULL;
    long r = strtol(want, &end, 10);
    if (*end || r != smx_test_rank)
        return 0;
    return smx_fail(err, SMX_EXIT_RUNTIME, "test: failing at %s as SMX2D_TEST_FAIL_RANK=%s asks",
                    phase, want);
}

int smx_test_spot_band(int band)
{
    const char *v = getenv("SMX2D_TEST_SPOT_BAND");
    int n = v ? atoi(v) : 0;
    return n >= 1 ? n : band;
}

int smx_test_slot_boxes(void)
{
    const char *v = getenv("SMX2D_TEST_SLOT_BOXES");
    return !(v && strcmp(v, "0") == 0);
}

int smx_test_media_one_pass(void)
{
    const char *v = getenv("SMX2D_TEST_MEDIA_ONE_PASS");
    return !v ? 0 : strcmp(v, "1") == 0 ? 1 : strcmp(v, "-1") == 0 ? -1 : 0;
}
