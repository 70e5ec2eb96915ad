#include "util/yaml_msg.h"

#include <stdio.h>

#include "util/text.h"

unsigned yaml_node_line(const yaml_node_t *n)
{
	return n ? (unsigned)n->start_mark.line + 1 : 0;
}

const char *yaml_kind_name(const yaml_node_t *n)
{
	switch (n ? n->type : YAML_NO_NODE) {
	case YAML_SCALAR_NODE: return "a scalar";
	case YAML_SEQUENCE_NODE: return "a list";
	case YAML_MAPPING_NODE: return "a mapping";
	default: return "nothing";
	}
}

void yaml_msg_v(char *err, size_t cap, const char *src, const yaml_node_t *n, const char *where,
		const char *fmt, va_list ap)
{
	if (!err || !cap)
		return;
	int k = n ? snprintf(err, cap, "%s:%u: ", src, yaml_node_line(n))
		  : snprintf(err, cap, "%s: ", src);
	if (k >= 0 && (size_t)k < cap && where && *where) {
		int w = snprintf(err + k, cap - (size_t)k, "%s: ", where);
		if (w > 0)
			k += w;
	}
	if (k >= 0 && (size_t)k < cap)
		vsnprintf(err + k, cap - (size_t)k, fmt, ap);
	text_one_line(err);
}
