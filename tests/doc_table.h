/* A table a test generates and a document under docs/ shows between two
 * markers: the test fails when the document's copy is stale. */
#ifndef SMX_TEST_DOC_TABLE_H
#define SMX_TEST_DOC_TABLE_H

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "check.h"

/* The text of `path` between `begin` and `end` must be `expected`; `stale`
 * says how to bring it up to date. */
static inline void check_doc_table_in(const char *path, const char *begin, const char *end,
                                      const char *expected, const char *stale)
{
    FILE *f = fopen(path, "r");
    CHECK_MSG(f != NULL, "%s: %s", path, strerror(errno));
    if (!f)
        return;
    static char doc[1 << 17];
    size_t n = fread(doc, 1, sizeof doc - 1, f);
    doc[n] = '\0';
    fclose(f);
    const char *b = strstr(doc, begin), *e = b ? strstr(b, end) : NULL;
    CHECK_MSG(b && e, "%s: the markers %s and %s are missing", path, begin, end);
    if (!b || !e)
        return;
    b += strlen(begin);
    int same = (size_t)(e - b) == strlen(expected) && strncmp(b, expected, (size_t)(e - b)) == 0;
    CHECK_MSG(same, "%s: %s:\n%s", path, stale, expected);
}

#endif
