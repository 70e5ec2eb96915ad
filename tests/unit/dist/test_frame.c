/* Tests of framed results (src/dist/frame.c): a frame round-trips inside a
 * log with stderr lines interleaved, kubectl prefixes and CRLF endings;
 * two frames' lines mixed decode to both; a frame seen twice is one; and
 * a truncated, cut, corrupted or contradictory frame is one clear error
 * naming the frame and the line. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <zlib.h>

#include "dist/frame.h"
#include "util/err.h"
#include "util/rng.h"

#define BIG ((size_t)1 << 30)

/* A document of n bytes that compresses like a result (numbers, keys). */
static char *doc(size_t n, uint64_t seed)
{
	struct rng r;
	rng_seed(&r, seed);
	char *d = malloc(n + 1);
	size_t at = 0;
	while (at < n) {
		char w[48];
		int k = snprintf(w, sizeof w, "{\"t_s\":%u,\"completed\":%u},",
				 (unsigned)(rng_next(&r) % 3600), (unsigned)(rng_next(&r) % 100000));
		for (int i = 0; i < k && at < n; i++)
			d[at++] = w[i];
	}
	d[n] = '\0';
	return d;
}

static char *encode(const char *json, const char *kind, const char *label, size_t *len)
{
	char *f;
	assert_int_equal(frame_encode(json, strlen(json), kind, label, &f, len), 0);
	return f;
}

/* text's lines, as an array of n strings (each without its newline). */
static char **lines_of(const char *text, size_t *n)
{
	size_t cap = 16;
	char **v = malloc(cap * sizeof *v);
	*n = 0;
	for (const char *p = text; *p;) {
		const char *nl = strchr(p, '\n');
		size_t l = nl ? (size_t)(nl - p) : strlen(p);
		if (*n == cap)
			v = realloc(v, (cap *= 2) * sizeof *v);
		v[(*n)++] = strndup(p, l);
		p += l + (nl ? 1 : 0);
	}
	return v;
}

static void free_lines(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/* Join lines into one text; prefix before each, and an "stderr" line
 * after every `every`-th (0: none). */
static char *join(char **v, size_t n, const char *prefix, size_t every, const char *eol)
{
	size_t cap = 64;
	for (size_t i = 0; i < n; i++)
		cap += strlen(v[i]) + strlen(prefix) + 80;
	char *t = malloc(cap), *o = t;
	for (size_t i = 0; i < n; i++) {
		o += sprintf(o, "%s%s%s", prefix, v[i], eol);
		if (every && i % every == 0)
			o += sprintf(o, "%spacer run: --start-at has passed: starting at once, late%s",
				     prefix, eol);
	}
	*o = '\0';
	return t;
}

static int scan(const char *text, struct frame_list *l, char *err, size_t errlen)
{
	return frame_scan(text, strlen(text), BIG, l, err, errlen);
}

static void test_round_trip_mixed_log(void **state)
{
	(void)state;
	char *json = doc(300000, 1);
	size_t flen;
	char *f = encode(json, "segment", "1/3", &flen);
	assert_int_equal(f[flen - 1], '\n');
	assert_true(frame_present(f, flen));
	assert_false(frame_present(json, strlen(json)));
	/* far smaller than the document, lines of bounded width */
	assert_true(flen < strlen(json) / 2);
	size_t n;
	char **v = lines_of(f, &n);
	for (size_t i = 0; i < n; i++)
		assert_true(strlen(v[i]) <= 300);
	const char *prefixes[] = {"", "[pod/pacer-x-1-abcde/pacer] ", "2026-12-01T12:00:00.123456789Z "};
	const char *eols[] = {"\n", "\r\n"};
	for (size_t pi = 0; pi < 3; pi++)
		for (size_t ei = 0; ei < 2; ei++) {
			char *t = join(v, n, prefixes[pi], 3, eols[ei]);
			struct frame_list l;
			char err[256];
			assert_int_equal(scan(t, &l, err, sizeof err), 0);
			assert_int_equal(l.n, 1);
			assert_string_equal(l.v[0].kind, "segment");
			assert_string_equal(l.v[0].label, "1/3");
			assert_int_equal(l.v[0].len, strlen(json));
			assert_memory_equal(l.v[0].json, json, strlen(json));
			assert_int_equal(l.v[0].first_line, 1);
			frame_list_free(&l);
			free(t);
		}
	free_lines(v, n);
	free(f);
	free(json);
}

static void test_two_frames_interleaved_and_duplicated(void **state)
{
	(void)state;
	char *a = doc(20000, 2), *b = doc(30000, 3);
	size_t la, lb, na, nb;
	char *fa = encode(a, "segment", "0/2", &la), *fb = encode(b, "merged", "2", &lb);
	char **va = lines_of(fa, &na), **vb = lines_of(fb, &nb);
	/* a's and b's lines alternating (two pods' logs followed together),
	 * then the whole of a again (a log fetched twice) */
	size_t n = 0;
	char **all = malloc((na + nb + na) * sizeof *all);
	for (size_t i = 0; i < na || i < nb; i++) {
		if (i < na)
			all[n++] = va[i];
		if (i < nb)
			all[n++] = vb[i];
	}
	for (size_t i = 0; i < na; i++)
		all[n++] = va[i];
	char *t = join(all, n, "", 0, "\n");
	struct frame_list l;
	char err[256];
	assert_int_equal(scan(t, &l, err, sizeof err), 0);
	assert_int_equal(l.n, 2);
	assert_string_equal(l.v[0].json, a);
	assert_string_equal(l.v[1].json, b);
	assert_string_equal(l.v[1].kind, "merged");
	frame_list_free(&l);
	free(t);
	free(all);
	free_lines(va, na);
	free_lines(vb, nb);
	free(fa);
	free(fb);
	free(a);
	free(b);
}

/* Each way of breaking a frame gives one line naming it and why. */
static void test_broken_frames(void **state)
{
	(void)state;
	char *json = doc(50000, 4);
	size_t flen, n;
	char *f = encode(json, "segment", "2/3", &flen);
	char **v = lines_of(f, &n);
	assert_true(n > 6);
	char id[13];
	memcpy(id, v[0] + strlen("pacer-frame-begin 1 "), 12);
	id[12] = '\0';
	struct {
		const char *what;
		char *text;
		const char *needle;
	} cases[8];
	size_t nc = 0;
	/* truncated: the last data lines and the end line gone */
	cases[nc].what = "truncated";
	cases[nc].text = join(v, n - 3, "", 0, "\n");
	cases[nc++].needle = "missing (the first: ";
	/* the end line alone gone */
	cases[nc].what = "no end";
	cases[nc].text = join(v, n - 1, "", 0, "\n");
	cases[nc++].needle = "no end line (truncated)";
	/* cut at the start: the begin line gone */
	cases[nc].what = "cut";
	cases[nc].text = join(v + 1, n - 1, "", 0, "\n");
	cases[nc++].needle = "whose begin line is missing";
	/* corrupted: one character of a data line changed */
	char *c1 = strdup(v[3]);
	c1[strlen(c1) - 5] = c1[strlen(c1) - 5] == 'A' ? 'B' : 'A';
	char *save = v[3];
	v[3] = c1;
	cases[nc].what = "corrupted";
	cases[nc].text = join(v, n, "", 0, "\n");
	cases[nc++].needle = "CRC-32 does not match";
	v[3] = save;
	/* a line dropped from the middle */
	char **gap = malloc(n * sizeof *gap);
	size_t g = 0;
	for (size_t i = 0; i < n; i++)
		if (i != 2)
			gap[g++] = v[i];
	cases[nc].what = "gap";
	cases[nc].text = join(gap, g, "", 0, "\n");
	cases[nc++].needle = "1 of its";
	/* the begin line's SHA-256 changed: the data does not decode to it */
	char *b1 = strdup(v[0]);
	char *last = b1 + strlen(b1) - 1;
	*last = *last == '0' ? '1' : '0';
	save = v[0];
	v[0] = b1;
	cases[nc].what = "sha";
	cases[nc].text = join(v, n, "", 0, "\n");
	cases[nc++].needle = "does not decode";
	v[0] = save;
	/* a newer format */
	char *b2 = strdup(v[0]);
	b2[strlen("pacer-frame-begin ")] = '2';
	save = v[0];
	v[0] = b2;
	cases[nc].what = "version";
	cases[nc].text = join(v, n, "", 0, "\n");
	cases[nc++].needle = "format 2";
	v[0] = save;
	/* a line number with two different contents (two runs' logs whose
	 * frames share an id cannot happen; a forged one can) */
	char *d1 = strdup(v[1]);
	cases[nc].what = "twice";
	{
		/* re-encode line 1 with other data but a valid CRC: take line 2's
		 * payload under line 1's number */
		char *p2 = strrchr(v[2], ' ') + 1;
		char seq[32];
		sscanf(v[1] + strlen("pacer-frame ") + 13, "%31s", seq);
		char *fake = malloc(strlen(v[2]) + 64);
		/* the CRC is over "ID SEQ/LINES BASE64" */
		char buf[512];
		snprintf(buf, sizeof buf, "%s %s %s", id, seq, p2);
		unsigned long crc = crc32(0L, (const Bytef *)buf, (uInt)strlen(buf));
		sprintf(fake, "pacer-frame %s %s %08lx %s", id, seq, crc, p2);
		char **dup = malloc((n + 1) * sizeof *dup);
		size_t k = 0;
		for (size_t i = 0; i < n; i++) {
			dup[k++] = v[i];
			if (i == 1)
				dup[k++] = fake;
		}
		cases[nc].text = join(dup, k, "", 0, "\n");
		cases[nc++].needle = "appears twice with different contents";
		free(dup);
		free(fake);
	}
	for (size_t i = 0; i < nc; i++) {
		struct frame_list l = {(void *)1, 7};
		char err[256];
		memset(err, 'x', sizeof err);
		int rc = scan(cases[i].text, &l, err, sizeof err);
		if (rc != PACER_EPARSE)
			fail_msg("%s: rc %d", cases[i].what, rc);
		assert_int_equal(l.n, 0);
		assert_null(l.v);
		assert_non_null(memchr(err, '\0', sizeof err));
		assert_null(strchr(err, '\n'));
		if (!strstr(err, cases[i].needle))
			fail_msg("%s: '%s' lacks '%s'", cases[i].what, err, cases[i].needle);
		/* the frame is named, and the line */
		if (strcmp(cases[i].what, "version") && !strstr(err, id))
			fail_msg("%s: '%s' does not name frame %s", cases[i].what, err, id);
		assert_memory_equal(err, "line ", 5);
		free(cases[i].text);
	}
	free(d1);
	free(b1);
	free(b2);
	free(c1);
	free(gap);
	free_lines(v, n);
	free(f);
	free(json);
}


/* A line a log split (conmon logs a long write in pieces; kubectl and
 * podman logs join the pieces of both streams as they came): another
 * stream's line spliced into a frame line, the rest on a later line,
 * maybe behind kubectl's prefix. The frame is whole again. */
static void test_split_lines_joined(void **state)
{
	(void)state;
	char *json = doc(40000, 6);
	size_t flen, n;
	char *f = encode(json, "segment", "0/3", &flen);
	char **v = lines_of(f, &n);
	const char *prefixes[] = {"", "[pod/pacer-x-0-abcde/pacer] ",
				  "2026-12-01T12:00:00.123456789Z "};
	/* where a line is cut: in the payload, in the numbers, in the marker,
	 * and the begin and end lines too */
	const struct {
		size_t line;
		size_t at;
	} cuts[] = {{3, 60}, {4, 20}, {5, 5}, {0, 40}, {0, 15}, {0, 0}, {1, 130}};
	for (size_t pi = 0; pi < 3; pi++)
		for (size_t c = 0; c < sizeof cuts / sizeof cuts[0]; c++) {
			size_t li = cuts[c].line == 0 && cuts[c].at == 0 ? n - 1 : cuts[c].line;
			size_t at = cuts[c].at == 0 ? 10 : cuts[c].at;
			if (at >= strlen(v[li]))
				at = strlen(v[li]) - 1;
			size_t cap = flen * 2 + 4096;
			char *t = malloc(cap), *o = t;
			for (size_t i = 0; i < n; i++) {
				if (i == li) {
					/* the piece, the other stream's lines, the rest */
					o += sprintf(o, "%s%.*spacer run: hand-in: waiting for the "
							"others\n",
						     prefixes[pi], (int)at, v[i]);
					o += sprintf(o, "%sanother stderr line\n", prefixes[pi]);
					o += sprintf(o, "%s%s\n", prefixes[pi], v[i] + at);
				} else {
					o += sprintf(o, "%s%s\n", prefixes[pi], v[i]);
				}
			}
			*o = '\0';
			struct frame_list l;
			char err[256];
			if (scan(t, &l, err, sizeof err) != 0)
				fail_msg("prefix %zu, line %zu cut at %zu: %s", pi, li, at, err);
			assert_int_equal(l.n, 1);
			assert_string_equal(l.v[0].json, json);
			frame_list_free(&l);
			free(t);
		}
	free_lines(v, n);
	free(f);
	free(json);
}

static void test_limits_and_refusals(void **state)
{
	(void)state;
	char *f;
	size_t flen;
	assert_int_equal(frame_encode("{}", 2, "bad kind", "x", &f, &flen), -EINVAL);
	assert_int_equal(frame_encode("{}", 2, "segment", "", &f, &flen), -EINVAL);
	assert_int_equal(frame_encode("", 0, "segment", "1/2", &f, &flen), -EINVAL);
	/* no frame at all: an empty list, not an error */
	struct frame_list l;
	char err[256];
	assert_int_equal(scan("just a log\nwith pacer-frame mentioned in passing\n", &l, err,
			      sizeof err),
			 0);
	assert_int_equal(l.n, 0);
	/* the documents' total is capped */
	char *json = doc(5000, 5);
	f = encode(json, "result", "-", &flen);
	assert_int_equal(frame_scan(f, flen, 4999, &l, err, sizeof err), PACER_ETOOBIG);
	assert_non_null(strstr(err, "exceed"));
	assert_int_equal(frame_scan(f, flen, 5000, &l, err, sizeof err), 0);
	assert_int_equal(l.n, 1);
	frame_list_free(&l);
	/* a begin line declaring more lines than the text holds */
	char big[256];
	snprintf(big, sizeof big, "pacer-frame-begin 1 aaaaaaaaaaaa result - 100 100000000 694445 "
				  "aaaaaaaaaaaa%052d\n",
		 0);
	assert_int_equal(scan(big, &l, err, sizeof err), PACER_EPARSE);
	assert_non_null(strstr(err, "more than the whole text"));
	free(f);
	free(json);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip_mixed_log),
		cmocka_unit_test(test_two_frames_interleaved_and_duplicated),
		cmocka_unit_test(test_broken_frames),
		cmocka_unit_test(test_split_lines_joined),
		cmocka_unit_test(test_limits_and_refusals),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
