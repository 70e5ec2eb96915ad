/* pacer — framed results: a result document as text lines that survive
 * being mixed into a log (docs/distributed.md#framed-results).
 *
 * A pod's log (kubectl logs) interleaves stdout and stderr line by line and
 * may prefix each line (--prefix, --timestamps). A frame is a begin line,
 * data lines and an end line, each starting with a marker that is found
 * wherever it stands in its line; the data is the document compressed
 * (zlib) and encoded (base64), FRAME_LINE_B64 characters a line, each line
 * numbered and with its own CRC-32, the whole with the SHA-256 of the
 * document:
 *
 *   pacer-frame-begin 1 ID KIND LABEL JSON_BYTES Z_BYTES LINES SHA256
 *   pacer-frame ID SEQ/LINES CRC32 BASE64
 *   ...
 *   pacer-frame-end 1 ID
 *
 * ID is the first 12 hex digits of the SHA-256, so a frame that appears
 * twice (a log read twice) is one frame. KIND and LABEL are what the frame
 * holds, for messages: "segment" "K/N", "merged" "N", or "result" "-".
 *
 * Pure: no I/O, no clocks. Bounded: a scan keeps pointers into the text it
 * is given, decodes a frame only once all its lines are there, and
 * inflates at most the size the begin line declares, within the caps. */
#ifndef PACER_DIST_FRAME_H
#define PACER_DIST_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FRAME_LINE_B64 192                 /* base64 characters of a data line (144 bytes) */
#define FRAME_MAX_JSON (256u * 1024u * 1024u) /* a frame's document, bytes (RESULT_READ_CAP) */
#define FRAME_MAX_FRAMES 4096              /* frames one scan accepts */

/* Encode the document json[len] (1..FRAME_MAX_JSON bytes) as a frame of
 * kind and label (each 1..23 characters of [A-Za-z0-9/._-]) into *out[*out_len]
 * (malloc'd, NUL-terminated, every line ending in '\n'; the caller frees
 * it). 0, -EINVAL (a bad length, kind or label), -ENOMEM. */
int frame_encode(const char *json, size_t len, const char *kind, const char *label, char **out,
		 size_t *out_len);

/* Whether text holds a frame's begin marker (a log, not a JSON file). */
bool frame_present(const char *text, size_t len);

/* One decoded frame. */
struct frame_doc {
	char id[13];
	char kind[24], label[24];
	char *json; /* the document, NUL-terminated (owned) */
	size_t len;
	size_t first_line; /* 1-based line of the text where its begin line stands */
};

struct frame_list {
	struct frame_doc *v; /* in the order of their begin lines */
	size_t n;
};

/* Every frame in text[len], in order; lines that hold no frame marker are
 * skipped, and the same frame seen more than once (each copy whole, or
 * their lines mixed) counts once. max_json_total caps the sum of the
 * documents' sizes. 0 and *out (release with frame_list_free; n may be 0),
 * or, with *out empty and one line in err naming the frame (id, kind and
 * label) and the line:
 *   PACER_EPARSE   a marker line that does not parse; a frame whose begin
 *                  line is missing (the log was cut before it), whose data
 *                  lines are missing or whose end line is (cut after it:
 *                  truncated), a line whose CRC-32 does not match
 *                  (corrupted), one line number with two different
 *                  contents, or a document that does not inflate to its
 *                  declared size and SHA-256
 *   PACER_ETOOBIG  over FRAME_MAX_FRAMES frames, a frame over
 *                  FRAME_MAX_JSON, or the documents over max_json_total
 *   -ENOMEM */
int frame_scan(const char *text, size_t len, size_t max_json_total, struct frame_list *out,
	       char *err, size_t errlen);

void frame_list_free(struct frame_list *l);

#endif
