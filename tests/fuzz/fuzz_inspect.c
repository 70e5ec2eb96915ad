/* libFuzzer harness for response inspection (src/plan/inspect.c) over the
 * h1 parser's capture (src/http/h1.c).
 *
 * Input: a --server-time spec up to the first newline, then raw response
 * bytes. The spec either fails with one line of error or parses; the
 * response is fed with a capture attached (headers + a 256-byte body cap),
 * in two splits (whole, then byte by byte): the capture must come out the
 * same, stay within its caps, and extraction must give the same value both
 * times (>= 0 or -1). The JSON scanner is also run on the raw bytes with
 * the spec's name as the path. Violations abort(). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http/h1.h"
#include "engine/inspect_eval.h"
#include "plan/inspect.h"
#include "util/err.h"

#define FUZZ_NAME "fuzz_inspect"
#include "common/fuzz_check.h"

static int64_t feed(const uint8_t *p, size_t n, bool bytewise, struct h1_capture *cap,
		    const struct srvtime_spec *s, bool *done)
{
	static struct h1_resp r;
	h1_resp_init(&r, false);
	h1_resp_capture(&r, cap);
	if (bytewise) {
		for (size_t i = 0; i < n && !h1_resp_done(&r); i++)
			if (h1_resp_feed(&r, (const char *)p + i, 1) < 0)
				break;
	} else {
		(void)h1_resp_feed(&r, (const char *)p, n);
	}
	*done = h1_resp_done(&r);
	CHECK(cap->body_len <= cap->body_cap);
	CHECK(cap->hbuf_len <= H1_CAPTURE_HDR_CAP);
	CHECK(cap->n_fields <= H1_CAPTURE_MAX_FIELDS);
	int64_t v = s ? srvtime_extract(s, cap) : -1;
	CHECK(v >= -1);
	return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nl = memchr(data, '\n', size);
	size_t spec_len = nl ? (size_t)(nl - data) : size;
	if (spec_len > 200)
		spec_len = 200;
	char spec[201];
	memcpy(spec, data, spec_len);
	spec[spec_len] = '\0';
	const uint8_t *resp = nl ? nl + 1 : data + size;
	size_t resp_len = (size_t)(data + size - resp);

	struct srvtime_spec s;
	char err[256];
	err[0] = '\0';
	int rc = srvtime_parse(spec, &s, err, sizeof err);
	if (rc) {
		CHECK(rc == PACER_EPARSE);
		CHECK(err[0] && !strchr(err, '\n'));
	}
	struct h1_capture a = {.headers = true, .body_cap = 256};
	struct h1_capture b = {.headers = true, .body_cap = 256};
	bool da, db;
	int64_t va = feed(resp, resp_len, false, &a, rc ? NULL : &s, &da);
	int64_t vb = feed(resp, resp_len, true, &b, rc ? NULL : &s, &db);
	if (da && db) {
		CHECK(va == vb);
		CHECK(a.n_fields == b.n_fields && a.hbuf_len == b.hbuf_len);
		CHECK(!a.hbuf_len || !memcmp(a.hbuf, b.hbuf, a.hbuf_len));
		CHECK(a.body_len == b.body_len);
		CHECK(!a.body_len || !memcmp(a.body, b.body, a.body_len));
	}
	h1_capture_free(&a);
	h1_capture_free(&b);
	if (!rc && s.src == SRVTIME_JSON) {
		double d;
		(void)inspect_json_number((const char *)resp, resp_len, s.name, &d);
	}
	return 0;
}
