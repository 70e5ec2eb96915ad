/* libFuzzer harness for the mix generator's spec parser and generator
 * (src/table/mix.c).
 *
 * Input: the YAML spec. On failure: a negative code, no spec, and one line
 * "fuzz.yaml..." without a newline. On success: a table of 24 requests is
 * generated twice with one seed (the JSON Lines must be identical) and once
 * with size 1; generation either fails with a one-line message naming the
 * spec, or gives a table whose requests all carry a shape name, a valid
 * method, URL and headers, within the limits. Violations abort(). */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http/req.h"
#include "http/url.h"
#include "table/mix.h"
#include "table/table.h"
#include "util/err.h"

#define FUZZ_NAME "fuzz_mix"
#include "common/fuzz_check.h"

static const struct table_limits lim = {
	.max_requests = 64, .max_body_bytes = 8192, .max_line_bytes = 8192,
	.max_headers = 40, .max_total_bytes = 1 << 22,
};

static struct url u;

static char *jsonl_of(const struct table *t, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);
	CHECK(f != NULL);
	char err[256];
	CHECK(table_write_jsonl(f, t, err, sizeof err) == 0); /* YAML text is UTF-8 */
	fclose(f);
	return buf;
}

static void check_table(const struct table *t, size_t size)
{
	CHECK(t->n == size && t->format == TABLE_FMT_MIX);
	for (size_t i = 0; i < t->n; i++) {
		const struct table_req *q = &t->reqs[i];
		const char *why = NULL;
		CHECK(q->shape != NULL && q->shape[0] != '\0');
		CHECK(req_method_check(q->method) == 0);
		CHECK(url_parse(&u, q->url, &why) == 0);
		CHECK(q->line == i + 1);
		for (size_t k = 0; k < q->n_headers; k++)
			CHECK(req_header_check(q->headers[k], &why) == 0);
		CHECK(q->body_len <= lim.max_body_bytes);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct table_mix *m = (struct table_mix *)&u;
	char err[512] = "unset";
	int rc = table_mix_parse((const char *)data, size, "fuzz.yaml", &m, err, sizeof err);
	if (rc) {
		CHECK(rc < 0);
		CHECK(m == NULL);
		CHECK(strncmp(err, "fuzz.yaml", 9) == 0 && strlen(err) > 11);
		CHECK(!strchr(err, '\n'));
		return 0;
	}
	CHECK(m != NULL);
	struct table *a = NULL, *b = NULL;
	char err2[512] = "unset";
	rc = table_mix_generate(m, 24, 7, &lim, &a, err, sizeof err);
	int rc2 = table_mix_generate(m, 24, 7, &lim, &b, err2, sizeof err2);
	CHECK(rc == rc2);
	if (rc) {
		CHECK(rc < 0 && a == NULL && b == NULL);
		CHECK(strcmp(err, err2) == 0);
		CHECK(strncmp(err, "fuzz.yaml: request ", 19) == 0 && !strchr(err, '\n'));
	} else {
		check_table(a, 24);
		check_table(b, 24);
		size_t la, lb;
		char *ja = jsonl_of(a, &la), *jb = jsonl_of(b, &lb);
		CHECK(la == lb && memcmp(ja, jb, la) == 0);
		free(ja);
		free(jb);
		table_free(a);
		table_free(b);
	}
	struct table *one = NULL;
	rc = table_mix_generate(m, 1, 0, &lim, &one, err, sizeof err);
	if (rc == 0) {
		check_table(one, 1);
		table_free(one);
	} else {
		CHECK(one == NULL && !strchr(err, '\n'));
	}
	CHECK(table_mix_generate(m, 0, 0, &lim, &one, err, sizeof err) == PACER_ERANGE && one == NULL);
	table_mix_free(m);
	return 0;
}
