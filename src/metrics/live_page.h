/* pacer — the live page of --metrics-listen: GET / (live_page_html), its
 * script GET /live.js (live_page_js), both sent with the
 * Content-Security-Policy live_page_csp (scripts and fetches from the same
 * server only, nothing from outside). The script polls /live.json
 * (metrics/live.h, live_json_write) once a second. Static text. */
#ifndef PACER_METRICS_LIVE_PAGE_H
#define PACER_METRICS_LIVE_PAGE_H

extern const char live_page_csp[];
/* NULL-terminated lists of pieces (C's string literals are kept short),
 * joined they are the text */
extern const char *const live_page_html[];
extern const char *const live_page_js[];

#endif
