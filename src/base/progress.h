/* A progress line for one long operation at a time (writing a psi snapshot):
 * on a terminal, "  WHAT: 37 % (4.2 s)" redrawn in place at most five times a
 * second once the operation has run half a second, and erased at its end.
 * Nothing is printed when stdout is not a terminal or under --quiet; the
 * caller reports the outcome itself. The line belongs to the process (there is
 * one terminal), so the code doing the work reports its fraction without
 * knowing who began the operation. */
#ifndef SMX_PROGRESS_H
#define SMX_PROGRESS_H

void progress_begin(const char *what);
/* done of total units finished; a no-op outside begin/end. */
void progress_update(double done, double total);
void progress_end(void);

#endif
