#include "result/variant.h"

#include <stdlib.h>
#include <string.h>

void variant_result_free(struct variant_result *v)
{
	run_result_free(&v->run);
	for (size_t k = 0; k < v->n_ramps; k++)
		ramp_result_free(&v->ramps[k]);
	free(v->ramps);
	memset(v, 0, sizeof *v);
}
