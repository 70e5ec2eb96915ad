/* The embedded target server's dynamic bodies: templates and kv answers
 * (pure; see target/render.h). */
#include <stdlib.h>
#include <string.h>

#include "http/h1req.h"
#include "target/render.h"

#define ID_DIGITS 16 /* {{id}}: one 64-bit draw in hex */

/* SplitMix64's finaliser (Steele, Lea, Flood 2014): a bijection of 64-bit
 * values with good avalanche, the step that turns a counter into a draw. */
#define SPLITMIX_M1 0xbf58476d1ce4e5b9ull
#define SPLITMIX_M2 0x94d049bb133111ebull
/* Offset of a kv value's generator state from its key number (any odd
 * constant; this one keeps values of small key numbers unlike each other). */
#define KV_GEN_OFFSET 0x632be59bd9b4e019ull

static const char hex_digits[] = "0123456789abcdef";
static const char kv_alphabet[] = "abcdefghijklmnopqrstuvwxyz0123456789";

bool target_dyn_reserve(struct target_dyn *d, size_t need)
{
	if (d->len + need <= d->cap)
		return true;
	size_t cap = d->cap ? d->cap : TARGET_DYN_INIT;
	while (cap < d->len + need)
		cap *= 2;
	if (cap > TARGET_DYN_CAP)
		cap = TARGET_DYN_CAP;
	if (d->len + need > cap)
		return false;
	char *p = realloc(d->buf, cap);
	if (!p)
		return false;
	d->buf = p;
	d->cap = (uint32_t)cap;
	return true;
}

void target_dyn_put(struct target_dyn *d, const void *p, size_t n)
{
	if (target_dyn_reserve(d, n)) {
		memcpy(d->buf + d->len, p, n);
		d->len += (uint32_t)n;
	}
}

size_t target_fmt_u64(char *p, uint64_t v)
{
	char tmp[24];
	size_t n = 0;
	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	for (size_t i = 0; i < n; i++)
		p[i] = tmp[n - 1 - i];
	return n;
}

static int hexval(char ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

size_t target_pct_decode(const char *s, size_t n, char *out, size_t cap)
{
	size_t o = 0;
	for (size_t i = 0; i < n && o < cap; i++) {
		int hi, lo;
		if (s[i] == '%' && i + 2 < n && (hi = hexval(s[i + 1])) >= 0 && (lo = hexval(s[i + 2])) >= 0) {
			out[o++] = (char)(hi * 16 + lo);
			i += 2;
		} else if (s[i] == '+') {
			out[o++] = ' ';
		} else {
			out[o++] = s[i];
		}
	}
	return o;
}

static bool echo_safe(unsigned char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
	       ch == ' ' || ch == '.' || ch == '_' || ch == '~' || ch == ',' || ch == ':' || ch == '-';
}

void target_render_template(struct target_dyn *d, const struct target_body *b, const char *query,
                            size_t qlen, struct rng *r, uint64_t seq)
{
	char id[ID_DIGITS];
	bool have_id = false;
	for (size_t i = 0; i < b->n_segs; i++) {
		const struct target_seg *s = &b->segs[i];
		switch (s->kind) {
		case TARGET_SEG_TEXT:
			target_dyn_put(d, s->text, s->len);
			break;
		case TARGET_SEG_ID:
			if (!have_id) {
				uint64_t v = rng_next(r);
				for (int k = 0; k < ID_DIGITS; k++)
					id[k] = hex_digits[(v >> (60 - 4 * k)) & 15];
				have_id = true;
			}
			target_dyn_put(d, id, sizeof id);
			break;
		case TARGET_SEG_SEQ: {
			char num[24];
			target_dyn_put(d, num, target_fmt_u64(num, seq));
			break;
		}
		case TARGET_SEG_QUERY: {
			char name[TARGET_QUERY_NAME_CAP + 1];
			size_t nl = s->len < TARGET_QUERY_NAME_CAP ? s->len : TARGET_QUERY_NAME_CAP;
			memcpy(name, s->text, nl);
			name[nl] = '\0';
			const char *v;
			size_t vl;
			if (h1req_query_param(query, qlen, name, &v, &vl)) {
				char dec[TARGET_QUERY_ECHO_CAP];
				size_t n = target_pct_decode(v, vl, dec, sizeof dec);
				for (size_t k = 0; k < n; k++)
					if (!echo_safe((unsigned char)dec[k]))
						dec[k] = '_';
				target_dyn_put(d, dec, n);
			}
			break;
		}
		}
	}
}

void target_json_str(struct target_dyn *d, const char *s, size_t n)
{
	target_dyn_put(d, "\"", 1);
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)s[i];
		if (ch == '"' || ch == '\\') {
			char e[2] = {'\\', (char)ch};
			target_dyn_put(d, e, 2);
		} else if (ch < 0x20 || ch >= 0x7f) {
			char e[6] = {'\\', 'u', '0', '0', hex_digits[ch >> 4], hex_digits[ch & 15]};
			target_dyn_put(d, e, 6);
		} else {
			target_dyn_put(d, s + i, 1);
		}
	}
	target_dyn_put(d, "\"", 1);
}

void target_kv_gen_value(struct target_dyn *d, uint64_t i, uint32_t n)
{
	if (!target_dyn_reserve(d, (size_t)n + 2))
		return;
	char *p = d->buf + d->len;
	*p++ = '"';
	uint64_t x = i * TARGET_GOLDEN_GAMMA + KV_GEN_OFFSET;
	for (uint32_t k = 0; k < n; k++) {
		if (k % 8 == 0) { /* one SplitMix64 draw gives 8 characters */
			x += TARGET_GOLDEN_GAMMA;
			uint64_t z = x;
			z = (z ^ (z >> 30)) * SPLITMIX_M1;
			z = (z ^ (z >> 27)) * SPLITMIX_M2;
			x = z ^ (z >> 31);
		}
		*p++ = kv_alphabet[((x >> (8 * (k % 8))) & 0xff) % (sizeof kv_alphabet - 1)];
	}
	*p++ = '"';
	d->len += n + 2;
}

const char *target_kv_lookup(const struct target_kv *kv, const char *key, size_t n, uint64_t *gen,
                             bool *is_gen)
{
	*is_gen = false;
	size_t pl = strlen(kv->prefix);
	/* at most 10 digits: enough for any key below a plan's generate count
	 * (at most 10^9), and v cannot overflow */
	if (kv->generate && n > pl && !memcmp(key, kv->prefix, pl) && n - pl <= 10) {
		uint64_t v = 0;
		bool ok = !(key[pl] == '0' && n - pl > 1);
		for (size_t i = pl; i < n && ok; i++) {
			ok = key[i] >= '0' && key[i] <= '9';
			v = v * 10 + (uint64_t)(key[i] - '0');
		}
		if (ok && v < kv->generate) {
			*is_gen = true;
			*gen = v;
			return NULL;
		}
	}
	size_t lo = 0, hi = kv->n_table;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		const char *k = kv->table[mid].name;
		int cmp = strncmp(k, key, n);
		if (cmp == 0 && k[n] != '\0')
			cmp = 1;
		if (cmp == 0)
			return kv->table[mid].value;
		if (cmp < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

void target_render_kv(struct target_dyn *d, const struct target_kv *kv, const char *query,
                      size_t qlen)
{
	const char *v;
	size_t vl;
	target_dyn_put(d, "{", 1);
	if (h1req_query_param(query, qlen, kv->param, &v, &vl)) {
		char dec[H1REQ_LINE_CAP];
		size_t n = target_pct_decode(v, vl, dec, sizeof dec);
		size_t i = 0, keys = 0;
		while (i < n && keys < TARGET_KV_MAX_KEYS) {
			size_t j = i;
			while (j < n && dec[j] != ',')
				j++;
			if (j > i) {
				if (keys++)
					target_dyn_put(d, ",", 1);
				target_json_str(d, dec + i, j - i);
				target_dyn_put(d, ":", 1);
				uint64_t gi;
				bool is_gen;
				const char *val = target_kv_lookup(kv, dec + i, j - i, &gi, &is_gen);
				if (is_gen)
					target_kv_gen_value(d, gi, kv->value_size);
				else if (val)
					target_json_str(d, val, strlen(val));
				else
					target_dyn_put(d, "null", 4);
			}
			i = j + 1;
		}
	}
	target_dyn_put(d, "}\n", 2);
}
