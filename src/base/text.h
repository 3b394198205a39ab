/* User text in messages: quoted safely, and the "did you mean" that turns a
 * typo into a suggestion. Shared by the plan reader (key and choice names)
 * and the layers above it (material names of a map file), which know no plan. */
#ifndef SMX_TEXT_H
#define SMX_TEXT_H

#include <stddef.h>

/* The longest text smx_show quotes before "...". */
#define SMX_SHOW_MAX 80

/* Quotes user text for a message: bounded length, no control characters.
 * buf holds n bytes (SMX_SHOW_MAX + 4 hold any text); returns buf. */
const char *smx_show(const char *text, size_t len, char *buf, size_t n);
/* Optimal-string-alignment distance: Levenshtein plus adjacent transpositions,
 * the commonest typo ("cdua" for "cuda"), at cost 1. */
int smx_edit_distance(const char *a, size_t la, const char *b, size_t lb);
/* Whether a distance is a typo of a text of len characters. */
int smx_close_enough(int dist, size_t len);
/* The closest of names[0..n) to text, for "did you mean" (NULL when none is close). */
const char *smx_closest_name(const char *text, const char *const *names, int n);

#endif
