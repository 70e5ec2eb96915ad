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

/* A marker line that did not parse: maybe a line the log split, another
 * stream's text spliced into it, its rest on a later line (conmon, which
 * podman and CRI-O use, logs a long write in pieces, and kubectl logs
 * joins the pieces of both streams in arrival order). */
struct head {
	const char *p; /* from its marker to the end of its line */
	size_t len, lno;
};

#define MAX_HEADS 16       /* heads waiting for their rest */
#define HEAD_LINES 256     /* a head waits this many lines at most */
#define JOIN_CAP 512       /* bytes of a joined line */
#define JOIN_BUDGET(len) ((len) * 4 + (256u << 10)) /* bytes of joined candidates a
							   * scan of len bytes looks at */

struct scan {
	struct head heads[MAX_HEADS];
	size_t n_heads;
	char **joined;        /* the joined lines kept (data lines point into them) */
	size_t n_joined, cap_joined;
	size_t join_budget;   /* bytes of candidates still allowed (JOIN_BUDGET(len)) */
	bool dry;             /* the line parsers check a candidate, keep nothing */
	size_t bad_lno, bad_seq; /* the first data line whose CRC-32 failed (0: none) */
	const struct part *bad_part;
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

/* The line parsers: 0 taken, 1 not a line of their kind (left for the
 * caller: maybe a head), or an error. quiet: a joined candidate, which is
 * taken only when whole and consistent, never an error. */
static int begin_line(struct scan *s, const char *p, const char *end, size_t lno, bool quiet)
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
	if (!quiet && k >= 2 && n[1] == 12 && is_hex(w[1], 12) && !(n[0] == 1 && w[0][0] == '1')) {
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
		return 1; /* not a begin line: its data lines will say it is missing */
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
			if (quiet)
				return 1;
			text_errf(s->err, s->errlen, "line %zu: %s begins again with other sizes than at "
						     "line %zu (corrupted?)",
				  lno, who(&q, b, sizeof b), old->begin_line);
			return PACER_EPARSE;
		}
		return 0; /* the same frame again (a log read twice) */
	}
	if (quiet && (q.lines > max_lines || s->n == FRAME_MAX_FRAMES ||
		      q.json_len > s->max_json_total - s->json_total))
		return 1;
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
	if (s->dry)
		return 0;
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

static int data_line(struct scan *s, const char *p, const char *end, size_t lno, bool quiet)
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
		return 1; /* not a data line (the word in passing, or a head) */
	struct part *q = find(s, w[0]);
	if (!q) {
		if (quiet)
			return 1;
		text_errf(s->err, s->errlen, "line %zu: data of frame %.12s, whose begin line is "
					     "missing (the log was cut at its start, or the line is "
					     "corrupted)",
			  lno, w[0]);
		return PACER_EPARSE;
	}
	char b[80];
	const char *slash = memchr(w[1], '/', n[1]);
	size_t seq = 0, lines;
	uint32_t crc = 0;
	for (int i = 0; i < 8; i++)
		crc = crc << 4 | (uint32_t)unhex(w[2][i]);
	bool numbers = parse_size(w[1], (size_t)(slash - w[1]), q->lines, &seq) &&
		       parse_size(slash + 1, n[1] - (size_t)(slash - w[1]) - 1, q->lines, &lines) &&
		       lines == q->lines && seq >= 1;
	size_t want = numbers && seq < q->lines
			      ? FRAME_LINE_B64
			      : numbers ? (size_t)B64_ENCODED_LEN(q->z_len - (seq - 1) * LINE_BYTES) : 0;
	if (!numbers || n[3] != want || line_crc(q->id, w[1], n[1], w[3], n[3]) != crc) {
		/* corrupted, or a head whose rest comes later: a line missing at
		 * the end is reported as corrupted when this was it */
		if (!quiet && numbers && !s->bad_lno) {
			s->bad_lno = lno;
			s->bad_seq = seq;
			s->bad_part = q;
		}
		return 1;
	}
	size_t i = seq - 1;
	if (q->b64[i]) {
		if (memcmp(q->b64[i], w[3], n[3])) {
			if (quiet)
				return 1;
			text_errf(s->err, s->errlen, "line %zu: %s: data line %zu/%zu appears twice with "
						     "different contents",
				  lno, who(q, b, sizeof b), seq, q->lines);
			return PACER_EPARSE;
		}
		return 0;
	}
	if (s->dry)
		return 0;
	q->b64[i] = w[3];
	q->b64_len[i] = (uint16_t)n[3];
	q->have++;
	return 0;
}

static int end_line(struct scan *s, const char *p, const char *end, size_t lno, bool quiet)
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
		return 1; /* not an end line: the frame will say its end is missing */
	struct part *q = find(s, w[1]);
	if (!q && quiet)
		return 1;
	if (!q) {
		text_errf(s->err, s->errlen, "line %zu: the end of frame %.12s, whose begin line is "
					     "missing (the log was cut at its start?)",
			  lno, w[1]);
		return PACER_EPARSE;
	}
	if (!s->dry)
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

/* A line from its marker m[0..n): taken (0), not a frame line (1), or an
 * error. */
static int marker_line(struct scan *s, const char *m, size_t n, size_t lno, bool quiet)
{
	const char *me = m + n;
	if (n >= sizeof MARK_BEGIN - 1 && !memcmp(m, MARK_BEGIN, sizeof MARK_BEGIN - 1))
		return begin_line(s, m + sizeof MARK_BEGIN - 1, me, lno, quiet);
	if (n >= sizeof MARK_END - 1 && !memcmp(m, MARK_END, sizeof MARK_END - 1))
		return end_line(s, m + sizeof MARK_END - 1, me, lno, quiet);
	if (n >= sizeof MARK_DATA - 1 && !memcmp(m, MARK_DATA, sizeof MARK_DATA - 1))
		return data_line(s, m + sizeof MARK_DATA - 1, me, lno, quiet);
	return 1; /* the word in passing (a message about frames) */
}

/* The line's text without a prefix kubectl adds ("[pod/NAME/CONTAINER] ",
 * a timestamp and a blank): variant v (0 as it is, 1 and 2 prefixes off),
 * or false when there is no such variant. */
static bool tail_variant(const char *p, size_t n, int v, const char **t, size_t *tn)
{
	*t = p;
	*tn = n;
	for (int i = 0; i < v; i++) {
		const char *sp = NULL;
		if (*tn && ((*t)[0] == '[' || ((*t)[0] >= '0' && (*t)[0] <= '9')))
			sp = memchr(*t, ' ', *tn);
		if (!sp)
			return false;
		*tn -= (size_t)(sp + 1 - *t);
		*t = sp + 1;
	}
	return true;
}

static int take_joined(struct scan *s, const char *buf, size_t n, size_t lno, bool shaped);

/* Whether buf[0..n) has the words of a frame line (its marker's count:
 * begin 9, data 5, end 3), a cheap test before a joined candidate is
 * parsed. */
static bool shape_ok(const char *buf, size_t n)
{
	size_t words = 0;
	for (size_t i = 0; i < n; i++)
		words += buf[i] != ' ' && (i == 0 || buf[i - 1] == ' ');
	if (n >= sizeof MARK_BEGIN - 1 && !memcmp(buf, MARK_BEGIN, sizeof MARK_BEGIN - 1))
		return words == 9;
	if (n >= sizeof MARK_END - 1 && !memcmp(buf, MARK_END, sizeof MARK_END - 1))
		return words == 3;
	return n >= sizeof MARK_DATA - 1 && !memcmp(buf, MARK_DATA, sizeof MARK_DATA - 1) &&
	       words == 5;
}

/* Try the pending heads with the line p[0..n) as their rest: a head's
 * first k bytes and the line (or the line without kubectl's prefix) make a
 * whole frame line, checked (a data line by its CRC-32). 0 (joined or
 * not), or -ENOMEM. */
static int join_heads(struct scan *s, const char *p, size_t n, size_t lno)
{
	(void)lno;
	for (size_t h = s->n_heads; h-- > 0;) {
		struct head hd = s->heads[h];
		for (int v = 0; v < 3; v++) {
			const char *t;
			size_t tn;
			if (!tail_variant(p, n, v, &t, &tn) || tn == 0 || tn >= JOIN_CAP)
				continue;
			/* the words of the tail, and of each head's first k bytes: a
			 * candidate needs a frame line's count (3, 5 or 9) */
			if (s->join_budget < hd.len + tn)
				return 0; /* enough tried: a frame still missing a line says so */
			s->join_budget -= hd.len + tn;
			size_t wt = 0;
			for (size_t i = 0; i < tn; i++)
				wt += t[i] != ' ' && (i == 0 || t[i - 1] == ' ');
			size_t wh = 0;
			for (size_t k = 0; k <= hd.len && k + tn < JOIN_CAP; k++) {
				if (k > 0 && hd.p[k - 1] != ' ' && (k == 1 || hd.p[k - 2] == ' '))
					wh++;
				size_t words = wh + wt - (k > 0 && hd.p[k - 1] != ' ' && t[0] != ' ' ? 1 : 0);
				if (words != 3 && words != 5 && words != 9)
					continue;
				if (s->join_budget < k + tn)
					return 0; /* enough tried: a frame still missing a line says so */
				s->join_budget -= k + tn;
				char buf[JOIN_CAP];
				memcpy(buf, hd.p, k);
				memcpy(buf + k, t, tn);
				int rc = take_joined(s, buf, k + tn, hd.lno, false);
				if (rc < 0)
					return rc;
				if (rc)
					continue;
				memmove(&s->heads[h], &s->heads[h + 1],
					(s->n_heads - h - 1) * sizeof s->heads[0]);
				s->n_heads--;
				return 0;
			}
		}
	}
	return 0;
}

/* Keep the joined line buf[0..n) when it is a whole frame line: 0 taken,
 * 1 not, or -ENOMEM. */
static int take_joined(struct scan *s, const char *buf, size_t n, size_t lno, bool shaped)
{
	if (!shaped && !shape_ok(buf, n))
		return 1;
	s->dry = true; /* checked where it stands, copied only when taken */
	int dry = marker_line(s, buf, n, lno, true);
	s->dry = false;
	if (dry != 0)
		return dry < 0 ? dry : 1;
	if (s->n_joined == s->cap_joined) {
		size_t cap = s->cap_joined ? s->cap_joined * 2 : 8;
		char **nj = realloc(s->joined, cap * sizeof *nj);
		if (!nj)
			return -ENOMEM;
		s->joined = nj;
		s->cap_joined = cap;
	}
	char *keep = malloc(n + 1);
	if (!keep)
		return -ENOMEM;
	memcpy(keep, buf, n);
	keep[n] = '\0';
	int rc = marker_line(s, keep, n, lno, true);
	if (rc != 0) {
		free(keep);
		return rc < 0 ? rc : 1;
	}
	s->joined[s->n_joined++] = keep;
	return 0;
}

/* The rest of a line cut inside its marker ("-frame ID ...", its head a
 * "pacer" lost in another stream's text): the marker made whole again.
 * 0 taken, 1 not, or -ENOMEM. */
static int join_marker_rest(struct scan *s, const char *p, size_t n, size_t lno)
{
	static const char *const marks[] = {"pacer-frame-begin", "pacer-frame-end", "pacer-frame"};
	for (int v = 0; v < 3; v++) {
		const char *t;
		size_t tn;
		if (!tail_variant(p, n, v, &t, &tn) || tn == 0 || tn + 20 >= JOIN_CAP)
			continue;
		for (size_t m = 0; m < sizeof marks / sizeof marks[0]; m++) {
			size_t ml = strlen(marks[m]);
			for (size_t j = 1; j < ml; j++) {
				if (tn < ml - j || memcmp(t, marks[m] + j, ml - j))
					continue;
				if (s->join_budget < j + tn)
					return 1;
				s->join_budget -= j + tn;
				char buf[JOIN_CAP];
				memcpy(buf, marks[m], j);
				memcpy(buf + j, t, tn);
				int rc = take_joined(s, buf, j + tn, lno, false);
				if (rc <= 0)
					return rc;
			}
		}
	}
	return 1;
}

int frame_scan(const char *text, size_t len, size_t max_json_total, struct frame_list *out,
	       char *err, size_t errlen)
{
	out->v = NULL;
	out->n = 0;
	if (err && errlen)
		err[0] = '\0';
	struct scan s = {.max_json_total = max_json_total, .err = err, .errlen = errlen,
			 .join_budget = JOIN_BUDGET(len)};
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
		int taken = 1;
		if (at >= 0)
			taken = marker_line(&s, p + at, n - (size_t)at, lno, false);
		if (taken < 0) {
			rc = taken;
			break;
		}
		/* heads wait HEAD_LINES lines for their rest */
		while (s.n_heads && lno - s.heads[0].lno > HEAD_LINES) {
			memmove(&s.heads[0], &s.heads[1], (s.n_heads - 1) * sizeof s.heads[0]);
			s.n_heads--;
		}
		if (taken == 1 && at < 0) {
			/* maybe the rest of a line cut inside its marker */
			int j = join_marker_rest(&s, p, n, lno);
			if (j < 0)
				rc = j;
			else if (j == 0)
				taken = 0;
		}
		if (taken == 1 && s.n_heads && !rc)
			rc = join_heads(&s, p, n, lno);
		if (taken == 1 && at >= 0 && !rc && n - (size_t)at < JOIN_CAP) {
			if (s.n_heads == MAX_HEADS) {
				memmove(&s.heads[0], &s.heads[1], (MAX_HEADS - 1) * sizeof s.heads[0]);
				s.n_heads--;
			}
			s.heads[s.n_heads++] = (struct head){p + at, n - (size_t)at, lno};
		}
		p = nl ? nl + 1 : end;
	}
	char b[80];
	for (size_t i = 0; i < s.n && !rc; i++) {
		struct part *q = &s.v[i];
		if (q->have < q->lines && s.bad_part == q && !q->b64[s.bad_seq - 1]) {
			text_errf(err, errlen, "line %zu: %s: data line %zu/%zu is corrupted (its CRC-32 "
					       "does not match)",
				  s.bad_lno, who(q, b, sizeof b), s.bad_seq, q->lines);
			rc = PACER_EPARSE;
		} else if (q->have < q->lines) {
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
	for (size_t i = 0; i < s.n_joined; i++)
		free(s.joined[i]);
	free(s.joined);
	if (rc) {
		frame_list_free(out);
		if (rc == -ENOMEM)
			text_errf(err, errlen, "out of memory");
	}
	return rc;
}
