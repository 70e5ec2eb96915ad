#include "util/err.h"

#include <string.h>

const char *err_name(int code)
{
	switch (code) {
	case PACER_EPARSE: return "malformed input";
	case PACER_ERANGE: return "value out of range";
	case PACER_ETOOBIG: return "input too large";
	case PACER_EUNSUPPORTED: return "not supported";
	case PACER_ESTATUS: return "bad HTTP status line";
	case PACER_EHEADER: return "bad HTTP header";
	case PACER_ECHUNK: return "bad chunked encoding";
	case PACER_EHDRSIZE: return "response headers too large";
	case PACER_EEOF: return "connection closed mid-response";
	case PACER_EURL: return "bad URL";
	case PACER_ERESOLVE: return "name did not resolve";
	case PACER_ELAYOUT: return "histogram layouts differ";
	default: break;
	}
	if (code < 0 && code > PACER_EBASE)
		return strerror(-code);
	return "unknown error";
}
