#include "base/test_hooks.h"

#include <stddef.h>

const smx_test_hooks *smx_test_hooks_installed = NULL;
int smx_test_rank = 0;
