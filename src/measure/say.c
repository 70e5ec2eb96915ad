/* pacer — how a step of a measurement's set-up reports (measure/measure.h):
 * its failure as one line in m->err, its notices in m->notes. Below every
 * other file of the module, which all report through it. */
#include <stdarg.h>
#include <stdio.h>

#include "measure/measure.h"

int measure_fail(struct measure *m, int code, const char *fmt, ...)
{
	if (!m->err[0]) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(m->err, sizeof m->err, fmt, ap);
		va_end(ap);
	}
	return code;
}

void measure_note(struct measure *m, const char *fmt, ...)
{
	if (m->n_notes > MEASURE_NOTES)
		return;
	if (m->n_notes == MEASURE_NOTES) {
		snprintf(m->notes[MEASURE_NOTES - 1], MEASURE_NOTE_CAP,
			 "... and more notices than pacer keeps (%d)", MEASURE_NOTES);
		m->n_notes++;
		return;
	}
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(m->notes[m->n_notes++], MEASURE_NOTE_CAP, fmt, ap);
	va_end(ap);
}
