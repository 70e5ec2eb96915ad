/* libFuzzer harness for outcome and success rules (src/plan/rule.c).
 *
 * Input: the rule text (cut at the first NUL; up to RULE_MAX_EXPR + 16
 * bytes so the length limit is crossed). On failure: a negative PACER_E*
 * code (or -ENOMEM), *out NULL, and one terminated line starting "rule: ".
 * On success: the text is within RULE_MAX_EXPR bytes; needing the body or
 * headers implies the word "body" / "header" is in the text; evaluation on
 * three fixed responses (JSON 200 with headers, 204 with nothing, 503 with
 * a NUL in its body and NULL header entries) does not crash and gives the
 * same answers twice. "x=" + text parsed as a named rule gives the same
 * code, the name "x", the same answers, and an error message whose column
 * is 2 more. Violations abort(). */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan/rule.h"
#include "util/err.h"

static char text[RULE_MAX_EXPR + 17];
static char named[RULE_MAX_EXPR + 19];

#define FUZZ_NAME "fuzz_rule"
#define FUZZ_INPUT text
#include "common/fuzz_check.h"

static const char *const names_a[] = {"Content-Type", "X-Id", "x-id"};
static const char *const values_a[] = {"application/json", "42", "43"};
static const char body_a[] = "{\"result\": 1, \"bid\": [ ]}";
static const char *const names_c[] = {NULL, "Server", "Content-Type"};
static const char *const values_c[] = {"x", NULL, "text/html"};
static const char body_c[] = "bad\0gateway <Ad";

static const struct rule_input inputs[3] = {
	{200, body_a, sizeof body_a - 1, names_a, values_a, 3},
	{204, NULL, 0, NULL, NULL, 0},
	{503, body_c, sizeof body_c - 1, names_c, values_c, 3},
};

static void check_err(int rc, const char *err, size_t cap)
{
	CHECK(rc == PACER_EPARSE || rc == PACER_ERANGE || rc == PACER_ETOOBIG || rc == -ENOMEM);
	CHECK(memchr(err, '\0', cap) != NULL);
	CHECK(strncmp(err, "rule: ", 6) == 0);
	CHECK(strchr(err, '\n') == NULL);
}

/* The column in "rule: at column N: ...", or 0 when there is none. */
static unsigned long column(const char *err)
{
	const char *p = strstr(err, "at column ");
	return p ? strtoul(p + 10, NULL, 10) : 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t n = size < sizeof text - 1 ? size : sizeof text - 1;
	memcpy(text, data, n);
	text[n] = '\0';
	n = strlen(text);

	struct rule *r = (struct rule *)text;
	char err[256];
	memset(err, 0x5a, sizeof err);
	int rc = rule_parse(text, &r, err, sizeof err);
	bool got[3] = {false, false, false};
	if (rc != 0) {
		check_err(rc, err, sizeof err);
		CHECK(r == NULL);
	} else {
		CHECK(r != NULL);
		CHECK(n <= RULE_MAX_EXPR);
		CHECK(!rule_needs_body(r) || strstr(text, "body"));
		CHECK(!rule_needs_headers(r) || strstr(text, "header"));
		for (int k = 0; k < 3; k++)
			got[k] = rule_eval(r, &inputs[k]);
		for (int k = 0; k < 3; k++)
			CHECK(rule_eval(r, &inputs[k]) == got[k]);
		rule_free(r);
	}

	/* the same text as a named rule */
	snprintf(named, sizeof named, "x=%s", text);
	char name[RULE_NAME_MAX];
	char err2[256];
	memset(err2, 0x5a, sizeof err2);
	struct rule *r2 = (struct rule *)named;
	int rc2 = rule_parse_named(named, name, &r2, err2, sizeof err2);
	CHECK(rc2 == rc);
	if (rc2 != 0) {
		check_err(rc2, err2, sizeof err2);
		CHECK(r2 == NULL);
		CHECK(name[0] == '\0');
		unsigned long c1 = column(err), c2 = column(err2);
		CHECK(c1 == 0 ? c2 == 0 : c2 == c1 + 2);
	} else {
		CHECK(strcmp(name, "x") == 0);
		for (int k = 0; k < 3; k++)
			CHECK(rule_eval(r2, &inputs[k]) == got[k]);
		rule_free(r2);
	}
	return 0;
}
