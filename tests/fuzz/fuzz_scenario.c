/* Fuzz the scenario-file parser: any bytes give either a scenario whose
 * argv starts with its kind and is NULL-terminated, or one error line that
 * names the source. Bounded: inputs over the file cap are rejected. */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "plan/scenario.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 65536)
		return 0;
	static struct scenario s;
	char err[512];
	int rc = scenario_parse((const char *)data, size, "fuzz.yaml", &s, err, sizeof err);
	if (rc == 0) {
		assert(s.nargs >= 1 && s.nargs < SCENARIO_MAX_ARGS);
		assert(strcmp(s.args[0], s.kind) == 0);
		assert(s.args[s.nargs] == NULL);
		for (int i = 0; i < s.nargs; i++)
			assert(s.args[i] != NULL);
		scenario_free(&s);
	} else {
		assert(strncmp(err, "fuzz.yaml", 9) == 0);
		assert(strchr(err, '\n') == NULL);
	}
	return 0;
}
