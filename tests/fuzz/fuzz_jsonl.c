/* libFuzzer harness for tables in JSON Lines (src/table/jsonl.c and the
 * checks of src/table/table.c).
 *
 * Input: the file's bytes, parsed as JSONL and as AUTO under small limits
 * with body files forbidden (no file system access). On failure: a negative
 * code, no table, and one line "fuzz.jsonl..." without a newline. On success: a table
 * within the limits whose every request has a method token, a URL that
 * parses to its host and target, "Name: value" headers that pass
 * req_header_check; its wire bytes start with the request line and end with
 * the body; and, when its headers are UTF-8, the JSON Lines written from it
 * read back to the same hash and are written again byte for byte. The same
 * bytes read as a stream (table_stream, in small pieces and in one) give
 * the same requests, lines, hosts and hash, or the same error.
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

#define FUZZ_NAME "fuzz_jsonl"
#include "table_checks.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct table *t = (struct table *)&u;
	char err[512] = "unset";
	int rc = table_parse((const char *)data, size, TABLE_FMT_JSONL, "fuzz.jsonl", NULL, &lim, &t,
	                     err, sizeof err);
	/* AUTO picks JSONL or targets; either way the same contract */
	struct table *a = NULL;
	char err2[512] = "unset";
	int rc2 = table_parse((const char *)data, size, TABLE_FMT_AUTO, "fuzz.jsonl", NULL, &lim, &a,
	                      err2, sizeof err2);
	/* AUTO streamed: the format found after the comments, the same table or error */
	check_stream(data, size, TABLE_FMT_AUTO, "fuzz.jsonl", rc2, rc2 ? NULL : a, err2,
	             1 + size % 37);
	if (rc2 == 0) {
		check_table(a, &lim);
		if (a->format == TABLE_FMT_JSONL)
			CHECK(rc == 0 && a->n == t->n);
		table_free(a);
	} else {
		CHECK(a == NULL && strncmp(err2, "fuzz.jsonl", 10) == 0 && !strchr(err2, '\n'));
	}
	/* streamed in small pieces and in one: the same table, or the same error */
	check_stream(data, size, TABLE_FMT_JSONL, "fuzz.jsonl", rc, rc ? NULL : t, err, 1 + size % 61);
	check_stream(data, size, TABLE_FMT_JSONL, "fuzz.jsonl", rc, rc ? NULL : t, err, 0);
	if (rc) {
		CHECK(rc < 0);
		CHECK(t == NULL);
		CHECK(strncmp(err, "fuzz.jsonl", 10) == 0 && strlen(err) > 12);
		CHECK(!strchr(err, '\n'));
		return 0;
	}
	CHECK(t != NULL && t->format == TABLE_FMT_JSONL);
	check_table(t, &lim);
	check_round_trip(t);
	table_free(t);
	return 0;
}
