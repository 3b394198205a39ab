#include "base/text.h"

#include <limits.h>
#include <string.h>

int smx_edit_distance(const char *a, size_t la, const char *b, size_t lb)
{
    /* Key names are short; longer inputs are never a typo of one. */
    if (la > 63 || lb > 63)
        return INT_MAX;
    int d[64][64];
    for (size_t i = 0; i <= la; i++)
        d[i][0] = (int)i;
    for (size_t j = 0; j <= lb; j++)
        d[0][j] = (int)j;
    for (size_t i = 1; i <= la; i++) {
        for (size_t j = 1; j <= lb; j++) {
            int best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
            if (d[i - 1][j] + 1 < best)
                best = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < best)
                best = d[i][j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1;
            d[i][j] = best;
        }
    }
    return d[la][lb];
}

int smx_close_enough(int dist, size_t len)
{
    int limit = (int)(len / 3);
    return dist <= (limit > 2 ? limit : 2);
}

const char *smx_show(const char *text, size_t len, char *buf, size_t n)
{
    size_t max = n - 4 < SMX_SHOW_MAX ? n - 4 : SMX_SHOW_MAX, o = 0;
    for (size_t i = 0; i < len && o < max; i++)
        buf[o++] = (unsigned char)text[i] < 0x20 || text[i] == 0x7f ? '?' : text[i];
    if (len > max) {
        memcpy(buf + o, "...", 3);
        o += 3;
    }
    buf[o] = '\0';
    return buf;
}

const char *smx_closest_name(const char *text, const char *const *names, int n)
{
    size_t tlen = strlen(text);
    int best = INT_MAX;
    const char *found = NULL;
    for (int i = 0; i < n; i++) {
        int d = smx_edit_distance(text, tlen, names[i], strlen(names[i]));
        if (d < best) {
            best = d;
            found = names[i];
        }
    }
    return found && smx_close_enough(best, tlen) ? found : NULL;
}
