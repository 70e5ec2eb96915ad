/* libFuzzer harness for the check of the requests a script makes
 * (sreq_check, src/script/lstate.c): the bytes request() returns, which
 * pacer sends as they are when they are exactly one HTTP/1.1 request.
 *
 * Input: the bytes (at most 64 KiB). Checked: the verdict is the same
 * twice (no state), an accepted request starts with a token and a space
 * and its head flag says HEAD; an accepted request is no longer one with
 * its last byte taken away (its body or its head's end is short) nor with
 * a byte added (bytes past its Content-Length); a refusal names a reason
 * (a non-empty sentence). Violations abort(). */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "script/script_int.h"

#define FUZZ_NAME "fuzz_sreq"
#include "common/fuzz_check.h"

#define SREQ_MAX_INPUT (64u * 1024u)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > SREQ_MAX_INPUT)
		size = SREQ_MAX_INPUT;
	/* an exactly-sized copy, one byte of room for the longer one */
	char *buf = malloc(size + 1);
	if (!buf)
		return 0;
	if (size)
		memcpy(buf, data, size);
	bool head = true, head2 = false;
	const char *why = sreq_check(buf, size, &head);
	const char *why2 = sreq_check(buf, size, &head2);
	CHECK((why == NULL) == (why2 == NULL));
	CHECK(!why || !strcmp(why, why2));
	CHECK(head == head2);
	if (why) {
		CHECK(why[0] != '\0');
	} else {
		CHECK(size > 0);
		const char *sp = memchr(buf, ' ', size);
		CHECK(sp && sp > buf);
		CHECK(head == (sp - buf == 4 && !memcmp(buf, "HEAD", 4)));
		bool h;
		CHECK(sreq_check(buf, size - 1, &h) != NULL);
		buf[size] = 'x';
		CHECK(sreq_check(buf, size + 1, &h) != NULL);
	}
	free(buf);
	return 0;
}
