/* pacer — framed results (see frame.h). */
#include "dist/frame.h"

#include <errno.h>
#include <inttypes.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "util/b64.h"
#include "util/err.h"
#include "util/text.h"

#define LINE_BYTES (FRAME_LINE_B64 / 4 * 3) /* bytes of the document a data line carries */
#define MARK "pacer-frame"
#define MARK_BEGIN "pacer-frame-begin "
#define MARK_DATA "pacer-frame "
#define MARK_END "pacer-frame-end "
#define VERSION 1

static bool sha256(const void *p, size_t n, unsigned char md[32])
{
	unsigned int mdlen = 0;
	return EVP_Digest(p, n, md, &mdlen, EVP_sha256(), NULL) && mdlen == 32;
}

static void hex(const unsigned char *p, size_t n, char *out)
{
	static const char d[] = "0123456789abcdef";
	for (size_t i = 0; i < n; i++) {
		out[2 * i] = d[p[i] >> 4];
		out[2 * i + 1] = d[p[i] & 15];
	}
	out[2 * n] = '\0';
}

/* A kind or label: 1..23 characters of [A-Za-z0-9/._-]. */
static bool token_ok(const char *s, size_t n)
{
	if (n < 1 || n > 23)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '/' || c == '.' || c == '_' || c == '-'))
			return false;
	}
	return true;
}

/* The CRC-32 of a data line: over "ID SEQ/LINES BASE64". */
static uint32_t line_crc(const char *id, const char *seq, size_t seq_len, const char *b64,
			 size_t b64_len)
{
	uLong c = crc32(0L, Z_NULL, 0);
	c = crc32(c, (const Bytef *)id, 12);
	c = crc32(c, (const Bytef *)" ", 1);
	c = crc32(c, (const Bytef *)seq, (uInt)seq_len);
	c = crc32(c, (const Bytef *)" ", 1);
	c = crc32(c, (const Bytef *)b64, (uInt)b64_len);
	return (uint32_t)c;
}

int frame_encode(const char *json, size_t len, const char *kind, const char *label, char **out,
		 size_t *out_len)
{
	*out = NULL;
	*out_len = 0;
	if (!json || len < 1 || len > FRAME_MAX_JSON || !kind || !label ||
	    !token_ok(kind, strlen(kind)) || !token_ok(label, strlen(label)))
		return -EINVAL;
	unsigned char md[32];
	char sha[65], id[13];
	if (!sha256(json, len, md))
		return -ENOMEM;
	hex(md, 32, sha);
	memcpy(id, sha, 12);
	id[12] = '\0';
	uLongf zlen = compressBound((uLong)len);
	unsigned char *z = malloc(zlen);
	if (!z)
		return -ENOMEM;
	if (compress2(z, &zlen, (const Bytef *)json, (uLong)len, Z_BEST_COMPRESSION) != Z_OK) {
		free(z);
		return -ENOMEM;
	}
	size_t lines = (zlen + LINE_BYTES - 1) / LINE_BYTES;
	/* begin and end lines, then per data line its marker, id, numbers, CRC */
	size_t cap = 256 + lines * (sizeof MARK_DATA + 12 + 1 + 2 * 20 + 2 + 8 + 1 + FRAME_LINE_B64 + 1);
	char *o = malloc(cap);
	if (!o) {
		free(z);
		return -ENOMEM;
	}
	size_t at = (size_t)snprintf(o, cap, MARK_BEGIN "%d %s %s %s %zu %lu %zu %s\n", VERSION, id,
				     kind, label, len, (unsigned long)zlen, lines, sha);
	for (size_t i = 0; i < lines; i++) {
		size_t off = i * LINE_BYTES, n = zlen - off < LINE_BYTES ? zlen - off : LINE_BYTES;
		char seq[48], b64[FRAME_LINE_B64 + 1];
		int sl = snprintf(seq, sizeof seq, "%zu/%zu", i + 1, lines);
		size_t bl = b64_encode(z + off, n, b64);
		uint32_t crc = line_crc(id, seq, (size_t)sl, b64, bl);
		at += (size_t)snprintf(o + at, cap - at, MARK_DATA "%s %s %08" PRIx32 " %.*s\n", id, seq,
				       crc, (int)bl, b64);
	}
	at += (size_t)snprintf(o + at, cap - at, MARK_END "%d %s\n", VERSION, id);
	free(z);
	*out = o;
	*out_len = at;
	return 0;
}

/* The marker in line[0..n): its offset, or -1. It stands at the start of
 * the line or after a blank or ']' (a prefix such as kubectl's
 * "[pod/NAME/CONTAINER] " or a timestamp). */
static long find_mark(const char *line, size_t n)
{
	const char *p = line, *end = line + n;
	while (p < end) {
		const char *m = memmem(p, (size_t)(end - p), MARK, sizeof MARK - 1);
		if (!m)
			return -1;
		if (m == line || m[-1] == ' ' || m[-1] == '\t' || m[-1] == ']')
			return (long)(m - line);
		p = m + 1;
	}
	return -1;
}

bool frame_present(const char *text, size_t len)
{
	const char *p = text, *end = text + len;
	while (p < end) {
		const char *m = memmem(p, (size_t)(end - p), MARK_BEGIN, sizeof MARK_BEGIN - 1);
		if (!m)
			return false;
		if (m == text || m[-1] == '\n' || m[-1] == ' ' || m[-1] == '\t' || m[-1] == ']')
			return true;
		p = m + 1;
	}
	return false;
}

/* ---- scanning ---------------------------------------------------------------- */

struct part {
	char id[13], kind[24], label[24];
	size_t json_len, z_len, lines;
	unsigned char sha[32];
	size_t begin_line;  /* line number of the begin line */
	bool ended;
	const char **b64;   /* per data line, a pointer into the text (NULL: not seen) */
	uint16_t *b64_len;
	size_t have;        /* data lines seen */
};

struct scan {
	struct part *v;
	size_t n, cap;
	size_t last;          /* the part the previous data line belonged to */
	size_t json_total, max_json_total;
	size_t text_lines;    /* lines of the whole text (a bound on a frame's) */
	char *err;
	size_t errlen;
};

/* "ID (KIND LABEL)" of a part, for messages. */
static const char *who(const struct part *p, char *buf, size_t cap)
{
	snprintf(buf, cap, "frame %s (%s %s)", p->id, p->kind, p->label);
	return buf;
}

/* The next blank-separated word of [*p, end): its start and length; *p
 * moves past it. false when there is none. */
static bool word(const char **p, const char *end, const char **w, size_t *n)
{
	const char *s = *p;
	while (s < end && *s == ' ')
		s++;
	const char *e = s;
	while (e < end && *e != ' ')
		e++;
	if (e == s)
		return false;
	*w = s;
	*n = (size_t)(e - s);
	*p = e;
	return true;
}

static bool parse_size(const char *w, size_t n, size_t max, size_t *out)
{
	if (n < 1 || n > 12)
		return false;
	size_t v = 0;
	for (size_t i = 0; i < n; i++) {
		if (w[i] < '0' || w[i] > '9' || (i == 0 && w[i] == '0' && n > 1))
			return false;
		v = v * 10 + (size_t)(w[i] - '0');
	}
	if (v > max)
		return false;
	*out = v;
	return true;
}

static bool is_hex(const char *w, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!((w[i] >= '0' && w[i] <= '9') || (w[i] >= 'a' && w[i] <= 'f')))
			return false;
	return true;
}

static int unhex(char c)
{
	return c <= '9' ? c - '0' : c - 'a' + 10;
}

static struct part *find(struct scan *s, const char *id)
{
	if (s->last < s->n && !memcmp(s->v[s->last].id, id, 12))
		return &s->v[s->last];
	for (size_t i = 0; i < s->n; i++)
		if (!memcmp(s->v[i].id, id, 12)) {
			s->last = i;
			return &s->v[i];
		}
	return NULL;
}

static int begin_line(struct scan *s, const char *p, const char *end, size_t lno)
{
	const char *w[8];
	size_t n[8];
	int k = 0;
	while (k < 8 && word(&p, end, &w[k], &n[k]))
		k++;
	const char *extra;
	size_t en;
	if (k == 8 && word(&p, end, &extra, &en))
		k = 9;
	if (k >= 2 && n[1] == 12 && is_hex(w[1], 12) && !(n[0] == 1 && w[0][0] == '1')) {
		text_errf(s->err, s->errlen, "line %zu: a frame of format %.*s (this pacer reads "
					     "format 1: a newer pacer wrote it?)",
			  lno, (int)(n[0] > 8 ? 8 : n[0]), w[0]);
		return PACER_EPARSE;
	}
	struct part q = {0};
	size_t max_lines = s->text_lines;
	if (k != 8 || n[1] != 12 || !is_hex(w[1], 12) || !token_ok(w[2], n[2]) ||
	    !token_ok(w[3], n[3]) || !parse_size(w[4], n[4], FRAME_MAX_JSON, &q.json_len) ||
	    !parse_size(w[5], n[5], (size_t)1 << 40, &q.z_len) ||
	    !parse_size(w[6], n[6], (size_t)1 << 40, &q.lines) || n[7] != 64 || !is_hex(w[7], 64) ||
	    q.json_len < 1 || q.z_len < 1 || q.lines != (q.z_len + LINE_BYTES - 1) / LINE_BYTES ||
	    memcmp(w[1], w[7], 12))
		return 0; /* not a begin line: its data lines will say it is missing */
	memcpy(q.id, w[1], 12);
	memcpy(q.kind, w[2], n[2]);
	memcpy(q.label, w[3], n[3]);
	for (int i = 0; i < 32; i++)
		q.sha[i] = (unsigned char)(unhex(w[7][2 * i]) << 4 | unhex(w[7][2 * i + 1]));
	q.begin_line = lno;
	char b[80];
	struct part *old = find(s, q.id);
	if (old) {
		if (strcmp(old->kind, q.kind) || strcmp(old->label, q.label) ||
		    old->json_len != q.json_len || old->z_len != q.z_len || old->lines != q.lines ||
		    memcmp(old->sha, q.sha, 32)) {
			text_errf(s->err, s->errlen, "line %zu: %s begins again with other sizes than at "
						     "line %zu (corrupted?)",
				  lno, who(&q, b, sizeof b), old->begin_line);
			return PACER_EPARSE;
		}
		return 0; /* the same frame again (a log read twice) */
	}
	if (q.lines > max_lines) {
		text_errf(s->err, s->errlen, "line %zu: %s has %zu data lines, more than the whole "
					     "text (truncated)",
			  lno, who(&q, b, sizeof b), q.lines);
		return PACER_EPARSE;
	}
	if (s->n == FRAME_MAX_FRAMES) {
		text_errf(s->err, s->errlen, "line %zu: over %d frames", lno, FRAME_MAX_FRAMES);
		return PACER_ETOOBIG;
	}
	if (q.json_len > s->max_json_total - s->json_total) {
		text_errf(s->err, s->errlen, "line %zu: %s: the documents would exceed %zu bytes", lno,
			  who(&q, b, sizeof b), s->max_json_total);
		return PACER_ETOOBIG;
	}
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 8;
		struct part *v = realloc(s->v, cap * sizeof *v);
		if (!v)
			return -ENOMEM;
		s->v = v;
		s->cap = cap;
	}
	q.b64 = calloc(q.lines, sizeof *q.b64);
	q.b64_len = calloc(q.lines, sizeof *q.b64_len);
	if (!q.b64 || !q.b64_len) {
		free(q.b64);
		free(q.b64_len);
		return -ENOMEM;
	}
	s->json_total += q.json_len;
	s->v[s->n++] = q;
	return 0;
}

static int data_line(struct scan *s, const char *p, const char *end, size_t lno)
{
	const char *w[4];
	size_t n[4];
	int k = 0;
	while (k < 4 && word(&p, end, &w[k], &n[k]))
		k++;
	const char *extra;
	size_t en;
	if (k != 4 || word(&p, end, &extra, &en) || n[0] != 12 || !is_hex(w[0], 12) || n[2] != 8 ||
	    !is_hex(w[2], 8) || n[3] > FRAME_LINE_B64 || !memchr(w[1], '/', n[1]))
		return 0; /* not a data line (the word in passing); a frame missing it says so */
	struct part *q = find(s, w[0]);
	if (!q) {
		text_errf(s->err, s->errlen, "line %zu: data of frame %.12s, whose begin line is "
					     "missing (the log was cut at its start, or the line is "
					     "corrupted)",
			  lno, w[0]);
		return PACER_EPARSE;
	}
	char b[80];
	const char *slash = memchr(w[1], '/', n[1]);
	size_t seq, lines;
	uint32_t crc = 0;
	for (int i = 0; i < 8; i++)
		crc = crc << 4 | (uint32_t)unhex(w[2][i]);
	if (!slash || !parse_size(w[1], (size_t)(slash - w[1]), q->lines, &seq) ||
	    !parse_size(slash + 1, n[1] - (size_t)(slash - w[1]) - 1, q->lines, &lines) ||
	    lines != q->lines || seq < 1 ||
	    line_crc(q->id, w[1], n[1], w[3], n[3]) != crc) {
		text_errf(s->err, s->errlen, "line %zu: %s: a data line is corrupted (its CRC-32 does "
					     "not match)",
			  lno, who(q, b, sizeof b));
		return PACER_EPARSE;
	}
	size_t i = seq - 1;
	size_t want = i + 1 < q->lines ? FRAME_LINE_B64
				       : (size_t)B64_ENCODED_LEN(q->z_len - i * LINE_BYTES);
	if (n[3] != want) {
		text_errf(s->err, s->errlen, "line %zu: %s: data line %zu/%zu holds %zu characters, "
					     "not %zu",
			  lno, who(q, b, sizeof b), seq, q->lines, n[3], want);
		return PACER_EPARSE;
	}
	if (q->b64[i]) {
		if (memcmp(q->b64[i], w[3], n[3])) {
			text_errf(s->err, s->errlen, "line %zu: %s: data line %zu/%zu appears twice with "
						     "different contents",
				  lno, who(q, b, sizeof b), seq, q->lines);
			return PACER_EPARSE;
		}
		return 0;
	}
	q->b64[i] = w[3];
	q->b64_len[i] = (uint16_t)n[3];
	q->have++;
	return 0;
}

static int end_line(struct scan *s, const char *p, const char *end, size_t lno)
{
	const char *w[2];
	size_t n[2];
	int k = 0;
	while (k < 2 && word(&p, end, &w[k], &n[k]))
		k++;
	const char *extra;
	size_t en;
	if (k != 2 || word(&p, end, &extra, &en) || !(n[0] == 1 && w[0][0] == '1') || n[1] != 12 ||
	    !is_hex(w[1], 12))
		return 0; /* not an end line: the frame will say its end is missing */
	struct part *q = find(s, w[1]);
	if (!q) {
		text_errf(s->err, s->errlen, "line %zu: the end of frame %.12s, whose begin line is "
					     "missing (the log was cut at its start?)",
			  lno, w[1]);
		return PACER_EPARSE;
	}
	q->ended = true;
	return 0;
}

/* Inflate q's data into d (json, len) and check its size and SHA-256. */
static int decode(struct scan *s, struct part *q, struct frame_doc *d)
{
	char b[80];
	unsigned char *z = malloc(q->lines * (LINE_BYTES + 3));
	char *json = malloc(q->json_len + 1);
	if (!z || !json) {
		free(z);
		free(json);
		return -ENOMEM;
	}
	size_t zl = 0;
	int rc = 0;
	for (size_t i = 0; i < q->lines && !rc; i++) {
		size_t got;
		if (b64_decode(q->b64[i], q->b64_len[i], z + zl, &got))
			rc = PACER_EPARSE;
		zl += got;
	}
	if (!rc && zl != q->z_len)
		rc = PACER_EPARSE;
	z_stream st;
	memset(&st, 0, sizeof st);
	if (!rc && inflateInit(&st) != Z_OK)
		rc = -ENOMEM;
	else if (!rc) {
		st.next_in = z;
		st.avail_in = (uInt)zl;
		st.next_out = (Bytef *)json;
		st.avail_out = (uInt)(q->json_len + 1);
		int zr = inflate(&st, Z_FINISH);
		if (zr == Z_MEM_ERROR)
			rc = -ENOMEM;
		else if (zr != Z_STREAM_END || st.total_out != q->json_len || st.avail_in != 0)
			rc = PACER_EPARSE;
		inflateEnd(&st);
	}
	free(z);
	unsigned char md[32];
	if (!rc && (!sha256(json, q->json_len, md) || memcmp(md, q->sha, 32)))
		rc = PACER_EPARSE;
	if (rc) {
		free(json);
		if (rc == PACER_EPARSE)
			text_errf(s->err, s->errlen, "line %zu: %s: its data does not decode to the "
						     "%zu bytes and SHA-256 its begin line gives "
						     "(corrupted)",
				  q->begin_line, who(q, b, sizeof b), q->json_len);
		return rc;
	}
	json[q->json_len] = '\0';
	memcpy(d->id, q->id, sizeof d->id);
	memcpy(d->kind, q->kind, sizeof d->kind);
	memcpy(d->label, q->label, sizeof d->label);
	d->json = json;
	d->len = q->json_len;
	d->first_line = q->begin_line;
	return 0;
}

void frame_list_free(struct frame_list *l)
{
	for (size_t i = 0; l && i < l->n; i++)
		free(l->v[i].json);
	if (l) {
		free(l->v);
		l->v = NULL;
		l->n = 0;
	}
}

int frame_scan(const char *text, size_t len, size_t max_json_total, struct frame_list *out,
	       char *err, size_t errlen)
{
	out->v = NULL;
	out->n = 0;
	if (err && errlen)
		err[0] = '\0';
	struct scan s = {.max_json_total = max_json_total, .err = err, .errlen = errlen};
	for (size_t i = 0; i < len; i++)
		s.text_lines += text[i] == '\n';
	s.text_lines++;
	int rc = 0;
	size_t lno = 0;
	for (const char *p = text, *end = text + len; p < end && !rc;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		lno++;
		size_t n = (size_t)(le - p);
		if (n && p[n - 1] == '\r')
			n--;
		long at = find_mark(p, n);
		if (at >= 0) {
			const char *m = p + at, *me = p + n;
			size_t rest = (size_t)(me - m);
			if (rest >= sizeof MARK_BEGIN - 1 && !memcmp(m, MARK_BEGIN, sizeof MARK_BEGIN - 1))
				rc = begin_line(&s, m + sizeof MARK_BEGIN - 1, me, lno);
			else if (rest >= sizeof MARK_END - 1 && !memcmp(m, MARK_END, sizeof MARK_END - 1))
				rc = end_line(&s, m + sizeof MARK_END - 1, me, lno);
			else if (rest >= sizeof MARK_DATA - 1 &&
				 !memcmp(m, MARK_DATA, sizeof MARK_DATA - 1))
				rc = data_line(&s, m + sizeof MARK_DATA - 1, me, lno);
			/* else: the word in passing (a message about frames) */
		}
		p = nl ? nl + 1 : end;
	}
	char b[80];
	for (size_t i = 0; i < s.n && !rc; i++) {
		struct part *q = &s.v[i];
		if (q->have < q->lines) {
			size_t first = 0;
			while (q->b64[first])
				first++;
			text_errf(err, errlen, "line %zu: %s: %zu of its %zu data lines are missing (the "
					       "first: %zu)%s",
				  q->begin_line, who(q, b, sizeof b), q->lines - q->have, q->lines,
				  first + 1, q->ended ? "" : ", and its end line: truncated");
			rc = PACER_EPARSE;
		} else if (!q->ended) {
			text_errf(err, errlen, "line %zu: %s: no end line (truncated)", q->begin_line,
				  who(q, b, sizeof b));
			rc = PACER_EPARSE;
		}
	}
	if (!rc && s.n) {
		out->v = calloc(s.n, sizeof *out->v);
		if (!out->v)
			rc = -ENOMEM;
	}
	for (size_t i = 0; i < s.n && !rc; i++) {
		rc = decode(&s, &s.v[i], &out->v[i]);
		if (!rc)
			out->n++;
	}
	for (size_t i = 0; i < s.n; i++) {
		free(s.v[i].b64);
		free(s.v[i].b64_len);
	}
	free(s.v);
	if (rc) {
		frame_list_free(out);
		if (rc == -ENOMEM)
			text_errf(err, errlen, "out of memory");
	}
	return rc;
}
