#include "util/b64.h"

#include <stdint.h>

#include "util/err.h"

static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

size_t b64_encode(const unsigned char *in, size_t n, char *out)
{
	size_t o = 0, i = 0;
	for (; i + 3 <= n; i += 3) {
		uint32_t v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8 | in[i + 2];
		out[o++] = alphabet[v >> 18];
		out[o++] = alphabet[(v >> 12) & 63];
		out[o++] = alphabet[(v >> 6) & 63];
		out[o++] = alphabet[v & 63];
	}
	if (n - i == 1) {
		uint32_t v = (uint32_t)in[i] << 16;
		out[o++] = alphabet[v >> 18];
		out[o++] = alphabet[(v >> 12) & 63];
		out[o++] = '=';
		out[o++] = '=';
	} else if (n - i == 2) {
		uint32_t v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8;
		out[o++] = alphabet[v >> 18];
		out[o++] = alphabet[(v >> 12) & 63];
		out[o++] = alphabet[(v >> 6) & 63];
		out[o++] = '=';
	}
	return o;
}

static int value_of(char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

int b64_decode(const char *in, size_t n, unsigned char *out, size_t *out_len)
{
	if (n % 4)
		return PACER_EPARSE;
	size_t o = 0;
	for (size_t i = 0; i < n; i += 4) {
		int v[4];
		size_t pad = 0;
		for (int k = 0; k < 4; k++) {
			if (in[i + k] == '=' && i + 4 == n && k >= 2) {
				v[k] = 0;
				pad++;
				continue;
			}
			if (pad)
				return PACER_EPARSE; /* data after '=' */
			v[k] = value_of(in[i + k]);
			if (v[k] < 0)
				return PACER_EPARSE;
		}
		uint32_t x = (uint32_t)v[0] << 18 | (uint32_t)v[1] << 12 | (uint32_t)v[2] << 6 |
			     (uint32_t)v[3];
		/* canonical form only: the bits the padding hides must be zero */
		if ((pad == 1 && (x & 0xff)) || (pad == 2 && (x & 0xffff)))
			return PACER_EPARSE;
		out[o++] = (unsigned char)(x >> 16);
		if (pad < 2)
			out[o++] = (unsigned char)(x >> 8);
		if (pad < 1)
			out[o++] = (unsigned char)x;
	}
	*out_len = o;
	return 0;
}
