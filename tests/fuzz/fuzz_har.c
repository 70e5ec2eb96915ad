/* libFuzzer harness for HAR import (src/table/har.c and the checks of
 * src/table/table.c).
 *
 * Input: the HAR file's bytes, imported under small limits without and with
 * keep_cookies. On failure: a negative code, no table, and one line
 * "fuzz.har..." without a newline; both imports fail or succeed together,
 * and keeping cookies never drops more. On success: a table
 * within the limits whose every request has a method token, a URL that
 * parses to its host and target, "Name: value" headers that pass
 * req_header_check; its wire bytes start with the request line and end with
 * the body; and, when its headers are UTF-8, the JSON Lines written from it
 * read back to the same hash and are written again byte for byte.
 * Violations abort(). */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "http/req.h"
#include "http/url.h"
#include "table/table.h"
#include "util/err.h"

#define FUZZ_NAME "fuzz_har"
#include "table_checks.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct table *t = (struct table *)&u;
	char err[512] = "unset";
	struct table_har_stats st, st2;
	struct table_har_opts keep = {.keep_cookies = true};
	int rc = table_har_parse((const char *)data, size, "fuzz.har", NULL, &lim, &t, &st, err, sizeof err);
	struct table *k = NULL;
	char err2[512] = "unset";
	int rc2 = table_har_parse((const char *)data, size, "fuzz.har", &keep, &lim, &k, &st2, err2, sizeof err2);
	if (rc) {
		CHECK(rc < 0);
		CHECK(t == NULL);
		CHECK(strncmp(err, "fuzz.har", 8) == 0 && strlen(err) > 10);
		CHECK(!strchr(err, '\n'));
		/* keeping cookies adds to a request, it cannot mend another error */
		CHECK(rc2 != 0 && k == NULL);
		return 0;
	}
	CHECK(t != NULL && t->format == TABLE_FMT_HAR);
	CHECK(st.skipped <= st.entries && t->n + st.skipped == st.entries);
	check_table(t, &lim);
	check_round_trip(t);
	if (rc2 == 0) {
		CHECK(k->n == t->n && st2.dropped_cookies == 0);
		CHECK(st2.dropped_headers == st.dropped_headers);
		check_table(k, &lim);
		table_free(k);
	} else {
		CHECK(k == NULL && strncmp(err2, "fuzz.har", 8) == 0);
	}
	table_free(t);
	return 0;
}
