/* pacer — request tables: format names, table_parse (dispatch to the
 * targets and JSON Lines parsers) and table_load. The builder is in
 * build.c, file reading in load.c, the arena in arena.c, encoding and the
 * hash in wire.c. See table.h and table_int.h. */
#include "table/table.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "table/table_int.h"
#include "util/err.h"
#include "util/file.h"

const char *table_format_name(enum table_format f)
{
	switch (f) {
	case TABLE_FMT_AUTO: return "auto";
	case TABLE_FMT_TARGETS: return "targets";
	case TABLE_FMT_JSONL: return "jsonl";
	case TABLE_FMT_BODIES: return "bodies";
	case TABLE_FMT_HAR: return "har";
	case TABLE_FMT_MIX: return "mix";
	}
	return "?";
}

int table_format_parse(const char *s, enum table_format *f)
{
	if (strcmp(s, "auto") == 0)
		*f = TABLE_FMT_AUTO;
	else if (strcmp(s, "targets") == 0)
		*f = TABLE_FMT_TARGETS;
	else if (strcmp(s, "jsonl") == 0)
		*f = TABLE_FMT_JSONL;
	else
		return PACER_EPARSE;
	return 0;
}

enum table_format tb_detect(const char *text, size_t len, bool *known)
{
	size_t i = 0;
	if (known)
		*known = false;
	while (i < len) {
		char c = text[i];
		if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
			i++;
			continue;
		}
		if (c == '#') {
			const char *nl = memchr(text + i, '\n', len - i);
			if (!nl)
				break;
			i = (size_t)(nl - text) + 1;
			continue;
		}
		if (known)
			*known = true;
		return c == '{' ? TABLE_FMT_JSONL : TABLE_FMT_TARGETS;
	}
	return TABLE_FMT_TARGETS;
}

int table_parse(const char *text, size_t len, enum table_format fmt, const char *source,
                const char *base_dir, const struct table_limits *lim, struct table **out,
                char *err, size_t cap)
{
	*out = NULL;
	if (err && cap)
		err[0] = '\0';
	if (!source)
		source = "(table)";
	if (fmt == TABLE_FMT_AUTO)
		fmt = tb_detect(text, len, NULL);
	if (fmt != TABLE_FMT_TARGETS && fmt != TABLE_FMT_JSONL)
		return tb_err(err, cap, PACER_EUNSUPPORTED, "%s: table_parse reads targets or jsonl", source);
	struct tb b;
	int rc = tb_init(&b, lim, fmt, source);
	if (rc)
		return tb_err(err, cap, rc, "%s: out of memory", source);
	if (len > b.lim.max_file_bytes) {
		tb_abort(&b);
		return tb_err(err, cap, PACER_ETOOBIG, "%s: over the limit of %zu bytes", source,
		              b.lim.max_file_bytes);
	}
	rc = fmt == TABLE_FMT_JSONL ? tb_parse_jsonl(&b, text, len, base_dir, err, cap)
	                            : tb_parse_targets(&b, text, len, base_dir, err, cap);
	if (rc) {
		tb_abort(&b);
		return rc;
	}
	struct table *t = tb_finish(&b);
	if (!t)
		return tb_err(err, cap, PACER_EPARSE, "%s: no requests", source);
	*out = t;
	return 0;
}

int table_load(const char *path, enum table_format fmt, const struct table_limits *lim,
               struct table **out, char *err, size_t cap)
{
	*out = NULL;
	struct table_limits l;
	tb_limits(&l, lim);
	char *text = NULL;
	size_t len = 0;
	int rc = tb_read_file(path, l.max_file_bytes, &text, &len, err, cap);
	if (rc)
		return rc;
	char *dir = tb_dirname(path);
	if (!dir) {
		free(text);
		return tb_err(err, cap, -ENOMEM, "%s: out of memory", path);
	}
	rc = table_parse(text, len, fmt, file_shown(path), dir, &l, out, err, cap);
	free(dir);
	free(text);
	return rc;
}
