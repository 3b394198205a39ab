#include "base/test_pause.h"

#include <stdlib.h>
#include <string.h>

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
