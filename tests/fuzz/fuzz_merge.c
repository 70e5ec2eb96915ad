/* libFuzzer harness for the merge input reader and result_merge
 * (src/doc/merge.c, behind src/doc/read.c).
 *
 * Input: up to MAX_PARTS result files separated by NUL bytes, each read
 * with result_read_mem as pacer merge reads its files. The ones that load
 * are merged. On failure: a code of the documented set and one terminated
 * line naming a file (or the segment). On success: the merged tree is a
 * result result_read_mem accepts again, every count in it a whole number
 * from 0 to MERGE_COUNT_MAX (no sum wrapped, none negative), and merging
 * the same inputs again gives an equal tree. Violations abort(); with
 * FUZZ_SAN's -fno-sanitize-recover=all, so does undefined behaviour (a
 * signed overflow in a sum). */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "doc/read.h"
#include "doc/merge.h"
#include "util/err.h"

#define MAX_PARTS 5

/* Every integer under v is from 0 to MERGE_COUNT_MAX (the merged result's
 * counts; pacer writes no negative integer). */
static bool counts_in_range(const json_t *v)
{
	if (json_is_integer(v))
		return json_integer_value(v) >= 0 &&
		       (unsigned long long)json_integer_value(v) <= MERGE_COUNT_MAX;
	const char *k;
	const json_t *x;
	size_t i;
	if (json_is_object(v)) {
		json_object_foreach((json_t *)v, k, x) {
			if (!counts_in_range(x))
				return false;
		}
	}
	if (json_is_array(v)) {
		json_array_foreach(v, i, x) {
			if (!counts_in_range(x))
				return false;
		}
	}
	return true;
}

#define FUZZ_NAME "fuzz_merge"
#include "common/fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct loaded_result r[MAX_PARTS];
	struct merge_input in[MAX_PARTS];
	static const char *const names[MAX_PARTS] = {"s0.json", "s1.json", "s2.json", "s3.json",
						     "s4.json"};
	size_t n = 0, at = 0;
	char err[512];
	while (at <= size && n < MAX_PARTS) {
		const uint8_t *nul = memchr(data + at, '\0', size - at);
		size_t len = nul ? (size_t)(nul - (data + at)) : size - at;
		if (result_read_mem(&r[n], (const char *)data + at, len, names[n], err, sizeof err) == 0) {
			in[n] = (struct merge_input){.name = names[n], .root = r[n].root};
			n++;
		}
		if (!nul)
			break;
		at += len + 1;
	}
	if (n) {
		json_t *out = NULL;
		memset(err, 0x5a, sizeof err);
		int rc = result_merge(in, n, &out, err, sizeof err);
		if (rc) {
			CHECK(rc == PACER_EPARSE || rc == PACER_EUNSUPPORTED || rc == PACER_ERANGE ||
			      rc == -ENOMEM);
			CHECK(out == NULL);
			CHECK(memchr(err, '\0', sizeof err) != NULL && err[0] && !strchr(err, '\n'));
		} else {
			CHECK(out != NULL);
			CHECK(counts_in_range(json_object_get(out, "measure")));
			CHECK(counts_in_range(json_object_get(out, "series")));
			CHECK(counts_in_range(json_object_get(out, "steps")));
			char *text = json_dumps(out, JSON_COMPACT | JSON_REAL_PRECISION(15));
			CHECK(text != NULL);
			struct loaded_result back;
			int brc = result_read_mem(&back, text, strlen(text), "merged.json", err, sizeof err);
			CHECK(brc == 0 || brc == -ENOMEM);
			if (!brc)
				result_free(&back);
			free(text);
			json_t *again = NULL;
			CHECK(result_merge(in, n, &again, err, sizeof err) == 0);
			CHECK(json_equal(out, again));
			json_decref(again);
			json_decref(out);
		}
	}
	for (size_t i = 0; i < n; i++)
		result_free(&r[i]);
	return 0;
}
