#include "base/child_check.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int child_check(int (*fn)(void *ctx, smx_error *err), void *ctx, const char *path, smx_error *err)
{
    int fds[2];
    if (pipe(fds) != 0)
        return smx_fail(err, SMX_EXIT_RUNTIME, "%s: cannot check it: pipe: %s", path,
                        strerror(errno));
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return smx_fail(err, SMX_EXIT_RUNTIME, "%s: cannot check it: fork: %s", path,
                        strerror(errno));
    }
    if (pid == 0) {
        close(fds[0]);
        smx_error e = { 0 };
        e.code = fn(ctx, &e);
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
    smx_error verdict = { 0 };
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
        return smx_fail(err, SMX_EXIT_INPUT,
                        "%s: the HDF5 library crashed reading it (%s); the file is corrupt", path,
                        strsignal(WTERMSIG(status)));
    return smx_fail(err, SMX_EXIT_INPUT,
                    "%s: the HDF5 library failed reading it (exit status %d); the file is "
                    "corrupt",
                    path, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
}
