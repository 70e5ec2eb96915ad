/* pacer — parsing and formatting of quantities with units, in one place.
 * All parsers reject empty strings, signs, trailing garbage, NaN/inf and
 * overflow, returning PACER_EPARSE or PACER_ERANGE. */
#ifndef PACER_UTIL_UNITS_H
#define PACER_UTIL_UNITS_H

#include <stddef.h>
#include <stdint.h>

/* Rate in events/s: "500", "2.5k", "20k", "1M", or events per duration as
 * vegeta writes it: "50/1s", "3000/1m", "50/s"; from UNITS_MIN_RATE to 1e9
 * (PACER_ERANGE outside; a zero duration too). */
#define UNITS_MIN_RATE 0.001
int units_parse_rate(const char *s, double *rate_per_s);
/* Duration: "250us", "10ms", "1.5s", "2m", "1h"; a bare number is seconds;
 * several parts from the largest unit down: "1m30s", "1h5m", "2s500ms".
 * Zero is allowed; negative is not. */
int units_parse_duration_ns(const char *s, uint64_t *ns);
/* Count: "100", "10k", "2M" (must come out a whole number). */
int units_parse_count(const char *s, uint64_t *n);
/* Byte size: "512", "4k"/"4KiB" (1024), "1.5MiB", "2M" (binary multiples). */
int units_parse_size(const char *s, uint64_t *bytes);

/* Percent: "5%", "0.5%" or a bare "5" (percent), in [0, 100). */
int units_parse_percent(const char *s, double *pct);

/* ---- numbers for people: the one family of formatters -------------------
 * Every report (terminal, Markdown, HTML, CSV notes) and every message that
 * shows a number formats it here, so a figure reads the same wherever it
 * is printed. Each writes at most cap bytes (truncated, always terminated)
 * into out and returns out; NaN and infinities are "–" (an en dash). */

/* A duration given in ns with three significant digits, a space and the
 * unit that keeps the number under 1000: "850 ns", "28.8 µs", "2.65 ms",
 * "634 ms", "1.38 s", "120 s". Rounding moves to the next unit (999.6 ns is
 * "1.00 µs"). "µs" is two bytes and one column. */
char *units_fmt_duration(char *out, size_t cap, double ns);
/* The same with sig (3 to 6) significant digits: 4 gives "107.8 ms", where
 * a verdict must not round a value onto its threshold. */
char *units_fmt_duration_sig(char *out, size_t cap, double ns, int sig);
/* A count or rate with thousands separators and fixed decimals ("20,000",
 * "1,234.5", every digit of a 64-bit count); never "-0"; "%.3g" from 1e21
 * on (no count is that large; a hostile value stays short). */
char *units_fmt_thousands(char *out, size_t cap, double v, int decimals);
/* Requests per second: "1,000", "499.5" (one decimal unless whole or at
 * least 10,000). */
char *units_fmt_rate(char *out, size_t cap, double per_s);
/* A percentage: "0.00%", "1.25%"; a non-zero value under 0.01 with two
 * significant digits ("0.0042%"). */
char *units_fmt_pct(char *out, size_t cap, double pct);
/* A ratio: "0.997", "1.019", "41.8", "1234". */
char *units_fmt_ratio(char *out, size_t cap, double v);
/* Seconds: "0.500 s", "3.0 s", "120 s". */
char *units_fmt_seconds(char *out, size_t cap, double s);
/* A byte count in binary units: "512 B", "1.5 KiB", "2.0 MiB", "1.25 GiB". */
char *units_fmt_bytes(char *out, size_t cap, double v);

/* Significant digits of a money amount, the one format of costs in every
 * report (terminal, Markdown, HTML, text, CSV). At 1 and above: two
 * decimals with thousands separators ("1,234.57"); below 1: three
 * significant digits in plain decimal, trailing zeros dropped ("0.00055",
 * "0.0123", never "0.0000" or "9.5e-05"); 0 is "0"; a magnitude below
 * 1e-15, of either sign, is "<$0.000000000000001".
 * `prefix` ("$", or "" for CSV) goes after the sign: "-$0.5". NaN and
 * infinities are "-" (callers that can meet them say what they mean first).
 * Returns out. */
char *units_fmt_cost(char *out, size_t cap, double usd, const char *prefix);

#endif
