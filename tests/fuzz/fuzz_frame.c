/* libFuzzer harness for framed results (src/dist/frame.c): frame_scan on
 * any text, as pacer merge reads a log and segment 0 a hand-in.
 *
 * On failure: a code of the documented set, no frames, and one terminated
 * line. On success: every frame's document has the length it claims and
 * encodes again to a frame that scans back to the same document. The
 * documents' total is capped at 1 MiB here, so a hostile begin line cannot
 * make the harness allocate more. Violations abort(). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dist/frame.h"
#include "util/err.h"

#define CHECK(c)                                                                           \
	do {                                                                               \
		if (!(c)) {                                                                \
			fprintf(stderr, "fuzz_frame: invariant failed: %s (%s:%d)\n", #c,  \
				__FILE__, __LINE__);                                       \
			abort();                                                           \
		}                                                                          \
	} while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct frame_list l;
	char err[256];
	memset(err, 0x5a, sizeof err);
	int rc = frame_scan((const char *)data, size, 1u << 20, &l, err, sizeof err);
	if (rc) {
		CHECK(rc == PACER_EPARSE || rc == PACER_ETOOBIG || rc == -ENOMEM);
		CHECK(l.n == 0 && l.v == NULL);
		CHECK(memchr(err, '\0', sizeof err) != NULL && err[0] && !strchr(err, '\n'));
		return 0;
	}
	for (size_t i = 0; i < l.n; i++) {
		CHECK(l.v[i].len >= 1 && l.v[i].json[l.v[i].len] == '\0');
		char *f;
		size_t fl;
		CHECK(frame_encode(l.v[i].json, l.v[i].len, l.v[i].kind, l.v[i].label, &f, &fl) == 0);
		struct frame_list back;
		CHECK(frame_scan(f, fl, 1u << 20, &back, err, sizeof err) == 0);
		CHECK(back.n == 1 && back.v[0].len == l.v[i].len &&
		      !memcmp(back.v[0].json, l.v[i].json, l.v[i].len) &&
		      !strcmp(back.v[0].id, l.v[i].id));
		frame_list_free(&back);
		free(f);
	}
	frame_list_free(&l);
	return 0;
}
