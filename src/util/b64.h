/* pacer — Base64 (RFC 4648 section 4: the standard alphabet, '=' padding).
 * Pure: no allocation, the caller sizes the buffers. */
#ifndef PACER_UTIL_B64_H
#define PACER_UTIL_B64_H

#include <stddef.h>

/* Bytes b64_encode writes for n input bytes: 4 * ceil(n / 3). */
#define B64_ENCODED_LEN(n) (((n) + 2) / 3 * 4)

/* Encode in[n] into out, which holds B64_ENCODED_LEN(n) bytes (no NUL is
 * written). Returns that count. */
size_t b64_encode(const unsigned char *in, size_t n, char *out);

/* Decode in[n], which must be exactly what b64_encode writes: a multiple of
 * 4 bytes, '=' only as the last one or two, and the bits the padding hides
 * zero (one canonical form per byte string). out holds at least
 * 3 * (n / 4) bytes; *out_len gets the count written. 0, or PACER_EPARSE
 * (out and *out_len then undefined). */
int b64_decode(const char *in, size_t n, unsigned char *out, size_t *out_len);

#endif
