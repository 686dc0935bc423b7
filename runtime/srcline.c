/* srcline.c: the program's source line under a run-time error, as the compiler shows
 * its diagnostics (rt.h: orn_rt_set_source, orn_rt_src_excerpt). */
#include <stdio.h>
#include <string.h>

#include "rt_int.h"
#include "strbuf.h"

enum { SHOW_MAX = 160 }; /* characters of a line shown, at most */

void orn_rt_set_source(OrnRtCtx *rt, const char *text)
{
    rt->src = text;
}

int orn_rt_src_excerpt(const char *src, int site, const char *name, char *buf, size_t n)
{
    int line = ORN_RT_SITE_LINE(site), occ = ORN_RT_SITE_OCC(site);
    if (n) buf[0] = '\0';
    if (!src || line <= 0 || n < 32) return 0;
    const char *p = src;
    for (int l = 1; l < line && p; l++) {
        p = strchr(p, '\n');
        if (p) p++;
    }
    if (!p || !*p) return 0;
    size_t len = strcspn(p, "\r\n");
    /* the caret: the occ-th `name[` (name as a whole word; `name(` for a name given as
     * "name("; the first where the line has fewer), else the first non-blank */
    size_t nl = name ? strlen(name) : 0;
    char open = '[';
    if (nl > 1 && name[nl - 1] == '(') {
        open = '(';
        nl--;
    }
    size_t at = nl ? orn_name_use(p, len, name, nl, open, occ) : len, wide = at < len ? nl : 1;
    int found = !name || at < len;
    if (at == len) {
        for (at = 0; at < len && (p[at] == ' ' || p[at] == '\t'); at++) {
        }
        if (at == len) return 0; /* a blank line: not the one the program ran */
        size_t end = len;
        while (end > at && (p[end - 1] == ' ' || p[end - 1] == '\t')) end--;
        wide = end - at;
    }
    size_t show = len < SHOW_MAX ? len : SHOW_MAX;
    char text[SHOW_MAX + 1];
    for (size_t i = 0; i < show; i++) {
        unsigned char ch = (unsigned char)p[i];
        text[i] = ch == '\t' || ch < 0x20 || ch == 0x7f ? ' ' : (char)ch;
    }
    text[show] = '\0';
    int w = snprintf(buf, n, "\n%5d | %s%s", line, text, show < len ? " ..." : "");
    if (w < 0 || (size_t)w >= n) {
        buf[0] = '\0';
        return 0;
    }
    if (at < show) {
        size_t k = (size_t)w;
        k += (size_t)snprintf(buf + k, n - k, "\n      | %*s^", (int)at, "");
        for (size_t i = 1; i < wide && at + i < show && k + 1 < n; i++) buf[k++] = '~';
        if (k < n) buf[k] = '\0';
    }
    return found ? (int)at + 1 : 0;
}
