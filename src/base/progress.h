/* A progress line for one long operation at a time (writing a psi snapshot):
 * on a terminal, "  WHAT: 37 % (4.2 s)" redrawn in place at most five times a
 * second once the operation has run half a second, and erased at its end.
 * Nothing is printed when progress_terminal() says no or under --quiet; the
 * caller reports the outcome itself. The line belongs to the process (there is
 * one terminal), so the code doing the work reports its fraction without
 * knowing who began the operation. */
#ifndef SMX_PROGRESS_H
#define SMX_PROGRESS_H

void progress_begin(const char *what);
/* done of total units finished; a no-op outside begin/end. */
void progress_update(double done, double total);
void progress_end(void);

/* 1 when stdout is a terminal this process may redraw a line on with a
 * carriage return (this line, the step log's line between its printed lines);
 * 0 otherwise, and always in an MPI job: mpirun hands a rank a pty (Open MPI)
 * or a pipe and forwards what it writes, so a redraw would reach the user's
 * log as lines joined by '\r'. The job is recognised by its launcher's
 * environment (Open MPI, PMI or PMIx: mpirun, mpiexec, srun), because src/base
 * comes before the parallel layer and cannot ask it. */
int progress_terminal(void);

#endif
