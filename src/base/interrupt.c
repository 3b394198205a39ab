#include "base/interrupt.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* The handler reads these while the program may be writing them: the path is
 * complete before `armed` is set, and `armed` is cleared before it changes. */
static char file[4096];
static volatile sig_atomic_t armed = 0;

void smx_interrupt_file(const char *path)
{
    armed = 0;
    if (!path || strlen(path) >= sizeof file)
        return;
    memcpy(file, path, strlen(path) + 1);
    armed = 1;
}

static void say(const char *s)
{
    ssize_t ignored = write(STDERR_FILENO, s, strlen(s));
    (void)ignored; /* nothing more can be done about a failed write here */
}

void smx_interrupt_now(void)
{
    say("\nsmx2d-sim: interrupted again: stopping at once");
    if (armed && unlink(file) == 0) {
        say("; removed ");
        say(file);
    } else if (armed && errno != ENOENT) { /* gone: it was just put in place */
        say("; could not remove ");
        say(file);
    }
    say("\n");
}
