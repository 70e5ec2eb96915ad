/* pacer — error messages about a YAML node, shared by the parsers of YAML
 * inputs (mix specs, target plans): "SRC:LINE: WHERE: message", one line.
 * Pure; needs libyaml's node types only. */
#ifndef PACER_UTIL_YAML_MSG_H
#define PACER_UTIL_YAML_MSG_H

#include <stdarg.h>
#include <stddef.h>

#include <yaml.h>

/* The node's 1-based line, or 0 for NULL. */
unsigned yaml_node_line(const yaml_node_t *n);

/* "a scalar", "a list", "a mapping" or "nothing" (NULL too), for
 * "expected X, got Y" messages. */
const char *yaml_kind_name(const yaml_node_t *n);

/* Write "SRC:LINE: " (or "SRC: " without a node), then "WHERE: " when where
 * is not empty, then the formatted message into err[cap], truncated and
 * folded to one line (text echoed from the input may hold line breaks).
 * Nothing when err is NULL or cap is 0. */
void yaml_msg_v(char *err, size_t cap, const char *src, const yaml_node_t *n, const char *where,
		const char *fmt, va_list ap);

#endif
