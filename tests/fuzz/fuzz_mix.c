/* libFuzzer harness for the mix generator's spec parser and generator
 * (src/table/mix.c).
 *
 * Input: the YAML spec. On failure: a negative code, no spec, and one line
 * "fuzz.yaml..." without a newline. On success: a table of 24 requests is
 * generated twice with one seed (the JSON Lines must be identical) and once
 * with size 1; generation either fails with a one-line message naming the
 * spec, or gives a table whose requests all carry a shape name, a valid
 * method, URL and headers, within the limits. The second generation runs
 * while glibc fills fresh memory with 0xaa (M_PERTURB), and the spec is
 * parsed twice more, with fresh memory reading 0x00 and then 0xaa: each
 * gives the same result (the same table, or the same message), so nothing
 * the generator emits comes from memory it did not write. Violations
 * abort(). */
#include <malloc.h>
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

/* glibc fills every fresh allocation with p ^ 0xff (and freed ones with
 * p); 0 turns that off. A no-op elsewhere and under ASan, which fills fresh
 * memory itself. */
static void perturb(int p)
{
#ifdef M_PERTURB
	(void)mallopt(M_PERTURB, p);
#else
	(void)p;
#endif
}

/* Parse data again and generate 24 requests with the heap perturbed by p:
 * the same code and message or JSON Lines as the first time (ja[la] when
 * rc is 0, else err). */
static void check_again(const uint8_t *data, size_t size, int p, int rc, const char *err,
                        const char *ja, size_t la)
{
	struct table_mix *m = NULL;
	struct table *t = NULL;
	char e[512] = "unset";
	perturb(p);
	CHECK(table_mix_parse((const char *)data, size, "fuzz.yaml", &m, e, sizeof e) == 0);
	int rc2 = table_mix_generate(m, 24, 7, &lim, &t, e, sizeof e);
	perturb(0);
	CHECK(rc2 == rc);
	if (rc) {
		CHECK(strcmp(e, err) == 0);
	} else {
		size_t lt;
		char *jt = jsonl_of(t, &lt);
		CHECK(lt == la && memcmp(jt, ja, la) == 0);
		free(jt);
		table_free(t);
	}
	table_mix_free(m);
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
	perturb(0x55);
	int rc2 = table_mix_generate(m, 24, 7, &lim, &b, err2, sizeof err2);
	perturb(0);
	CHECK(rc == rc2);
	char *ja = NULL;
	size_t la = 0;
	if (rc) {
		CHECK(rc < 0 && a == NULL && b == NULL);
		CHECK(strcmp(err, err2) == 0);
		CHECK(strncmp(err, "fuzz.yaml: request ", 19) == 0 && !strchr(err, '\n'));
	} else {
		check_table(a, 24);
		check_table(b, 24);
		size_t lb;
		char *jb = jsonl_of(b, &lb);
		ja = jsonl_of(a, &la);
		CHECK(la == lb && memcmp(ja, jb, la) == 0);
		free(jb);
		table_free(a);
		table_free(b);
	}
	check_again(data, size, 0xff, rc, err, ja, la);
	check_again(data, size, 0x55, rc, err, ja, la);
	free(ja);
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
