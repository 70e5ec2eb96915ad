/* pacer — the wire of the start barrier and the hand-in (see wire.h). */
#include "dist/wire.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "util/err.h"

/* ---- MACs ------------------------------------------------------------------ */

static bool hmac_hex(const char *secret, const char *pre, size_t pre_len, const char *body,
		     size_t len, char mac[WIRE_MAC_HEX + 1])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	size_t mdlen = 0;
	EVP_MAC *hm = EVP_MAC_fetch(NULL, "HMAC", NULL);
	EVP_MAC_CTX *h = hm ? EVP_MAC_CTX_new(hm) : NULL;
	char digest[] = "SHA256";
	OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string("digest", digest, 0),
			       OSSL_PARAM_construct_end()};
	bool ok = h && EVP_MAC_init(h, (const unsigned char *)secret, strlen(secret), params) &&
		  EVP_MAC_update(h, (const unsigned char *)pre, pre_len) &&
		  (len == 0 || EVP_MAC_update(h, (const unsigned char *)body, len)) &&
		  EVP_MAC_final(h, md, &mdlen, sizeof md) && mdlen == 32;
	EVP_MAC_CTX_free(h);
	EVP_MAC_free(hm);
	if (!ok)
		return false;
	static const char d[] = "0123456789abcdef";
	for (int i = 0; i < 32; i++) {
		mac[2 * i] = d[md[i] >> 4];
		mac[2 * i + 1] = d[md[i] & 15];
	}
	mac[WIRE_MAC_HEX] = '\0';
	return true;
}

bool wire_mac_request(const char *secret, const char *path, const char *body, size_t len,
		      char mac[WIRE_MAC_HEX + 1])
{
	char pre[64];
	int n = snprintf(pre, sizeof pre, "pacer/1 %s\n", path);
	return n > 0 && (size_t)n < sizeof pre && hmac_hex(secret, pre, (size_t)n, body, len, mac);
}

bool wire_mac_reply(const char *secret, const char *req_mac, int status, const char *body,
		    size_t len, char mac[WIRE_MAC_HEX + 1])
{
	char pre[128];
	int n = snprintf(pre, sizeof pre, "pacer/1 reply %.64s %d\n", req_mac, status);
	return n > 0 && (size_t)n < sizeof pre && hmac_hex(secret, pre, (size_t)n, body, len, mac);
}

bool wire_mac_equal(const char *a, const char *b)
{
	return strlen(a) == WIRE_MAC_HEX && strlen(b) == WIRE_MAC_HEX &&
	       CRYPTO_memcmp(a, b, WIRE_MAC_HEX) == 0;
}

/* ---- small parsers ----------------------------------------------------------- */

static bool is_hex64(const char *s, size_t n)
{
	if (n != WIRE_MAC_HEX)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

/* Decimal digits s[0..n) (1..20 of them, no leading zero but "0") as a
 * number up to max. */
static bool parse_u64(const char *s, size_t n, uint64_t max, uint64_t *out)
{
	if (n < 1 || n > 20 || (s[0] == '0' && n > 1))
		return false;
	uint64_t v = 0;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		uint64_t d = (uint64_t)(s[i] - '0');
		if (v > (max - d) / 10)
			return false;
		v = v * 10 + d;
	}
	*out = v;
	return true;
}

/* "K/N" with 0 <= K < N, 1 <= N <= 1024. */
static bool parse_kn(const char *s, size_t n, uint32_t *k, uint32_t *count)
{
	const char *slash = memchr(s, '/', n);
	uint64_t a, b;
	if (!slash || !parse_u64(s, (size_t)(slash - s), 1024, &a) ||
	    !parse_u64(slash + 1, n - (size_t)(slash - s) - 1, 1024, &b) || b < 1 || a >= b)
		return false;
	*k = (uint32_t)a;
	*count = (uint32_t)b;
	return true;
}

/* "C/N" with 0 <= C <= N, 1 <= N <= 1024 (segments checked in of N). */
static bool parse_cn(const char *s, size_t n, uint32_t *c, uint32_t *count)
{
	const char *slash = memchr(s, '/', n);
	uint64_t a, b;
	if (!slash || !parse_u64(s, (size_t)(slash - s), 1024, &a) ||
	    !parse_u64(slash + 1, n - (size_t)(slash - s) - 1, 1024, &b) || b < 1 || a > b)
		return false;
	*c = (uint32_t)a;
	*count = (uint32_t)b;
	return true;
}

/* The line at [*p, end) up to '\n' (without it): its start and length;
 * *p moves past it. false when no '\n' ends it. */
static bool line(const char **p, const char *end, const char **s, size_t *n)
{
	const char *nl = memchr(*p, '\n', (size_t)(end - *p));
	if (!nl)
		return false;
	*s = *p;
	*n = (size_t)(nl - *p);
	*p = nl + 1;
	return true;
}

/* A header line "Name: value" (CR stripped by the caller): whether its
 * name is `name`, and its value (blanks trimmed). */
static bool header_is(const char *s, size_t n, const char *name, const char **v, size_t *vn)
{
	size_t k = strlen(name);
	if (n <= k || s[k] != ':' || strncasecmp(s, name, k))
		return false;
	const char *a = s + k + 1, *e = s + n;
	while (a < e && (*a == ' ' || *a == '\t'))
		a++;
	while (e > a && (e[-1] == ' ' || e[-1] == '\t'))
		e--;
	*v = a;
	*vn = (size_t)(e - a);
	return true;
}

/* The head's end (after "\r\n\r\n") in buf[0..len), or 0. */
static size_t head_end(const char *buf, size_t len)
{
	const char *e = memmem(buf, len, "\r\n\r\n", 4);
	return e ? (size_t)(e - buf) + 4 : 0;
}

/* Content-Length and X-Pacer-Auth among the header lines [p, end), each
 * ending in CRLF. 0, or a status with *why. */
static int headers(const char *p, const char *end, uint64_t cap, size_t *cl, char *mac,
		   const char **why)
{
	bool have_cl = false, have_mac = false;
	const char *s;
	size_t n;
	while (p < end && line(&p, end, &s, &n)) {
		if (!n || s[n - 1] != '\r') {
			*why = "a header line does not end in CRLF";
			return 400;
		}
		n--;
		if (!n)
			break; /* the blank line */
		const char *v;
		size_t vn;
		uint64_t x;
		if (header_is(s, n, "Content-Length", &v, &vn)) {
			if (have_cl || !parse_u64(v, vn, UINT64_MAX / 2, &x)) {
				*why = "a bad or repeated Content-Length";
				return 400;
			}
			if (x > cap) {
				*why = "the body is over its cap";
				return 413;
			}
			*cl = (size_t)x;
			have_cl = true;
		} else if (header_is(s, n, "X-Pacer-Auth", &v, &vn)) {
			if (have_mac || !is_hex64(v, vn)) {
				*why = "a bad or repeated X-Pacer-Auth";
				return 400;
			}
			memcpy(mac, v, WIRE_MAC_HEX);
			mac[WIRE_MAC_HEX] = '\0';
			have_mac = true;
		} else if (header_is(s, n, "Transfer-Encoding", &v, &vn)) {
			*why = "a Transfer-Encoding (only Content-Length bodies are taken)";
			return 400;
		} else if (!memchr(s, ':', n)) {
			*why = "a header line without ':'";
			return 400;
		}
	}
	if (!have_cl) {
		*why = "no Content-Length";
		return 411;
	}
	if (!have_mac) {
		*why = "no X-Pacer-Auth (PACER_BARRIER_TOKEN)";
		return 401;
	}
	return 0;
}

/* ---- requests ---------------------------------------------------------------- */

int wire_parse_request(const char *buf, size_t len, struct wire_request *rq, const char **why)
{
	memset(rq, 0, sizeof *rq);
	*why = "";
	size_t he = head_end(buf, len < WIRE_MAX_HEAD ? len : WIRE_MAX_HEAD);
	if (!he) {
		if (len < WIRE_MAX_HEAD)
			return 1;
		*why = "the request's head is over its cap";
		return 413;
	}
	const char *p = buf, *end = buf + he, *s;
	size_t n;
	if (!line(&p, end, &s, &n) || n < 2 || s[n - 1] != '\r') {
		*why = "no request line";
		return 400;
	}
	n--;
	const char *sp1 = memchr(s, ' ', n);
	const char *sp2 = sp1 ? memchr(sp1 + 1, ' ', (size_t)(s + n - sp1 - 1)) : NULL;
	if (!sp1 || !sp2 || (size_t)(s + n - sp2 - 1) != 8 || memcmp(sp2 + 1, "HTTP/1.", 7) ||
	    (sp2[8] != '0' && sp2[8] != '1')) {
		*why = "a malformed request line";
		return 400;
	}
	size_t ml = (size_t)(sp1 - s), pl = (size_t)(sp2 - sp1 - 1);
	const char *path = sp1 + 1;
	uint64_t cap;
	if (pl == strlen(WIRE_PATH_CHECKIN) && !memcmp(path, WIRE_PATH_CHECKIN, pl)) {
		rq->op = WIRE_CHECKIN;
		cap = WIRE_MAX_CHECKIN;
	} else if (pl == strlen(WIRE_PATH_RESULT) && !memcmp(path, WIRE_PATH_RESULT, pl)) {
		rq->op = WIRE_RESULT;
		cap = WIRE_MAX_RESULT;
	} else {
		*why = "no such path (pacer's barrier takes /pacer/v1/checkin and /pacer/v1/result)";
		return 404;
	}
	if (ml != 4 || memcmp(s, "POST", 4)) {
		*why = "only POST";
		return 405;
	}
	int st = headers(p, end, cap, &rq->content_length, rq->mac, why);
	if (st)
		return st;
	rq->head_len = he;
	return 0;
}

int wire_parse_checkin(const char *body, size_t len, struct wire_checkin *c, const char **why)
{
	memset(c, 0, sizeof *c);
	const char *p = body, *end = body + len, *s;
	size_t n;
	*why = "not a check-in (segment K/N, plan HEX, host NAME)";
	if (len > WIRE_MAX_CHECKIN)
		return PACER_EPARSE;
	if (!line(&p, end, &s, &n) || n < 9 || memcmp(s, "segment ", 8) ||
	    !parse_kn(s + 8, n - 8, &c->segment, &c->count))
		return PACER_EPARSE;
	if (!line(&p, end, &s, &n) || n != 5 + WIRE_MAC_HEX || memcmp(s, "plan ", 5) ||
	    !is_hex64(s + 5, WIRE_MAC_HEX))
		return PACER_EPARSE;
	memcpy(c->plan, s + 5, WIRE_MAC_HEX);
	if (!line(&p, end, &s, &n) || n < 6 || n - 5 >= sizeof c->host || memcmp(s, "host ", 5) ||
	    p != end)
		return PACER_EPARSE;
	for (size_t i = 5; i < n; i++)
		if ((unsigned char)s[i] <= ' ' || (unsigned char)s[i] >= 0x7f)
			return PACER_EPARSE;
	memcpy(c->host, s + 5, n - 5);
	return 0;
}

size_t wire_format_checkin(const struct wire_checkin *c, char *out, size_t cap)
{
	size_t hl = strlen(c->host);
	if (!is_hex64(c->plan, strlen(c->plan)) || hl < 1 || hl >= sizeof c->host)
		return 0;
	for (size_t i = 0; i < hl; i++)
		if ((unsigned char)c->host[i] <= ' ' || (unsigned char)c->host[i] >= 0x7f)
			return 0;
	int n = snprintf(out, cap, "segment %u/%u\nplan %s\nhost %s\n", c->segment, c->count,
			 c->plan, c->host);
	return n > 0 && (size_t)n < cap ? (size_t)n : 0;
}

size_t wire_format_request_head(const char *host, const char *path, size_t body_len,
				const char *mac, char *out, size_t cap)
{
	int n = snprintf(out, cap,
			 "POST %s HTTP/1.1\r\nHost: %.100s\r\nContent-Type: text/plain\r\n"
			 "Content-Length: %zu\r\nX-Pacer-Auth: %.64s\r\nConnection: close\r\n\r\n",
			 path, host, body_len, mac);
	return n > 0 && (size_t)n < cap ? (size_t)n : 0;
}

/* ---- replies ------------------------------------------------------------------ */

static const char *reason(int status)
{
	switch (status) {
	case 200: return "OK";
	case 400: return "Bad Request";
	case 401: return "Unauthorized";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 409: return "Conflict";
	case 410: return "Gone";
	case 411: return "Length Required";
	case 413: return "Content Too Large";
	case 503: return "Service Unavailable";
	default: return "Error";
	}
}

size_t wire_format_reply(const char *secret, const char *req_mac, int status, const char *body,
			 size_t len, char *out, size_t cap)
{
	char mac[WIRE_MAC_HEX + 1];
	if (!wire_mac_reply(secret, req_mac, status, body, len, mac))
		return 0;
	int n = snprintf(out, cap,
			 "HTTP/1.1 %d %s\r\nContent-Type: text/plain\r\nContent-Length: %zu\r\n"
			 "X-Pacer-Auth: %s\r\nConnection: close\r\n\r\n",
			 status, reason(status), len, mac);
	if (n <= 0 || (size_t)n + len >= cap)
		return 0;
	memcpy(out + n, body, len);
	out[(size_t)n + len] = '\0';
	return (size_t)n + len;
}

int wire_parse_reply(const char *buf, size_t len, const char *secret, const char *req_mac,
		     struct wire_reply *r, const char **why)
{
	memset(r, 0, sizeof *r);
	*why = "a malformed reply";
	size_t he = head_end(buf, len < WIRE_MAX_HEAD ? len : WIRE_MAX_HEAD);
	if (!he)
		return PACER_EPARSE;
	const char *p = buf, *end = buf + he, *s;
	size_t n;
	uint64_t st;
	if (!line(&p, end, &s, &n) || n < 14 || memcmp(s, "HTTP/1.1 ", 9) ||
	    !parse_u64(s + 9, 3, 599, &st) || st < 100 || s[12] != ' ' || s[n - 1] != '\r')
		return PACER_EPARSE;
	size_t cl = 0;
	char mac[WIRE_MAC_HEX + 1];
	const char *hwhy;
	if (headers(p, end, WIRE_MAX_REPLY, &cl, mac, &hwhy) || len - he != cl)
		return PACER_EPARSE;
	const char *body = buf + he;
	char want[WIRE_MAC_HEX + 1];
	if (!wire_mac_reply(secret, req_mac, (int)st, body, cl, want) || !wire_mac_equal(mac, want)) {
		*why = "its X-Pacer-Auth does not match (another PACER_BARRIER_TOKEN, or not pacer's "
		       "segment 0 answering)";
		return PACER_EUNSUPPORTED;
	}
	r->status = (int)st;
	const char *bp = body, *bend = body + cl;
	if (!line(&bp, bend, &s, &n) || bp != bend)
		return PACER_EPARSE;
	const char *w2 = memchr(s, ' ', n);
	if (!w2)
		return PACER_EPARSE;
	size_t k = (size_t)(w2 - s), rest = n - k - 1;
	const char *arg = w2 + 1;
	if (st != 200) {
		if (k != 5 || memcmp(s, "error", 5) || rest < 1)
			return PACER_EPARSE;
		r->kind = WIRE_ERROR;
		size_t m = rest < sizeof r->msg - 1 ? rest : sizeof r->msg - 1;
		for (size_t i = 0; i < m; i++)
			r->msg[i] = (unsigned char)arg[i] < ' ' || arg[i] == 0x7f ? '?' : arg[i];
		r->msg[m] = '\0';
		return 0;
	}
	const char *sp = memchr(arg, ' ', rest);
	if (k == 6 && !memcmp(s, "stored", 6)) {
		r->kind = WIRE_STORED;
		return parse_kn(arg, rest, &r->n, &r->count) ? 0 : PACER_EPARSE;
	}
	if (!sp)
		return PACER_EPARSE;
	size_t al = (size_t)(sp - arg);
	uint32_t c, cnt;
	if (!parse_cn(sp + 1, rest - al - 1, &c, &cnt))
		return PACER_EPARSE;
	r->n = c;
	r->count = cnt;
	uint64_t v;
	if (k == 4 && !memcmp(s, "wait", 4)) {
		if (!parse_u64(arg, al, 60000, &v) || v < 1)
			return PACER_EPARSE;
		r->kind = WIRE_WAIT;
		r->retry_ms = (uint32_t)v;
		return 0;
	}
	if (k == 5 && !memcmp(s, "start", 5)) {
		if (!parse_u64(arg, al, UINT64_MAX, &v) || v == 0)
			return PACER_EPARSE;
		r->kind = WIRE_START;
		r->start_ns = v;
		return 0;
	}
	return PACER_EPARSE;
}

/* ---- the plan's fingerprint --------------------------------------------------- */

/* Options that do not shape the plan: where results go, how loud, the
 * barrier's own (a segment may wait longer than segment 0). Those that
 * take a value have it next, or after '='. */
static int non_plan(const char *a)
{
	static const char *const flags[] = {"--framed", "-q", "--quiet", "--limited-ok",
					    "--metrics-listen-any"};
	static const char *const valued[] = {"--segment",      "--barrier",       "--barrier-timeout",
					     "--barrier-margin", "--handin-timeout", "--merged-out",
					     "--out",          "-o",              "--report-dir",
					     "--history",      "--hgrm",          "--metrics-listen"};
	for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++)
		if (!strcmp(a, flags[i]))
			return 1;
	for (size_t i = 0; i < sizeof valued / sizeof valued[0]; i++) {
		size_t l = strlen(valued[i]);
		if (!strncmp(a, valued[i], l) && (a[l] == '\0' || a[l] == '='))
			return a[l] == '=' ? 1 : 2;
	}
	return 0;
}

bool wire_plan_fingerprint(int argc, char *const *argv, char out[WIRE_MAC_HEX + 1])
{
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	bool ok = ctx && EVP_DigestInit_ex(ctx, EVP_sha256(), NULL);
	for (int i = 0; ok && i < argc; i++) {
		const char *a = argv[i] ? argv[i] : "";
		const char *seg = NULL; /* --segment's K/N: N counts */
		if (!strncmp(a, "--segment=", 10))
			seg = a + 10;
		else if (!strcmp(a, "--segment") && i + 1 < argc && argv[i + 1])
			seg = argv[i + 1];
		int skip = non_plan(a);
		if (seg && strchr(seg, '/'))
			ok = EVP_DigestUpdate(ctx, strchr(seg, '/'), strlen(strchr(seg, '/')) + 1);
		if (skip) {
			i += skip - 1;
			continue;
		}
		ok = ok && EVP_DigestUpdate(ctx, a, strlen(a) + 1);
	}
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;
	ok = ok && EVP_DigestFinal_ex(ctx, md, &mdlen) && mdlen == 32;
	EVP_MD_CTX_free(ctx);
	if (!ok)
		return false;
	static const char d[] = "0123456789abcdef";
	for (int i = 0; i < 32; i++) {
		out[2 * i] = d[md[i] >> 4];
		out[2 * i + 1] = d[md[i] & 15];
	}
	out[WIRE_MAC_HEX] = '\0';
	return true;
}
