/* pacer — error codes.
 *
 * Functions return 0 (or a non-negative count) on success and a negative code
 * on failure: either a negated errno value (-ENOMEM, -ECONNREFUSED, ...) or one
 * of the PACER_E* codes below, which live far from the errno range.
 * err_name() gives a static, human-readable name for either kind. */
#ifndef PACER_UTIL_ERR_H
#define PACER_UTIL_ERR_H

enum pacer_err {
	PACER_EBASE = -10000,
	PACER_EPARSE = PACER_EBASE - 1,       /* malformed input */
	PACER_ERANGE = PACER_EBASE - 2,       /* value outside the accepted range */
	PACER_ETOOBIG = PACER_EBASE - 3,      /* input exceeds a hard cap */
	PACER_EUNSUPPORTED = PACER_EBASE - 4, /* valid, but not something pacer does */
	PACER_ESTATUS = PACER_EBASE - 5,      /* bad HTTP status line */
	PACER_EHEADER = PACER_EBASE - 6,      /* bad HTTP header line */
	PACER_ECHUNK = PACER_EBASE - 7,       /* bad chunked framing */
	PACER_EHDRSIZE = PACER_EBASE - 8,     /* response headers over the cap */
	PACER_EEOF = PACER_EBASE - 9,         /* connection closed mid-message */
	PACER_EURL = PACER_EBASE - 10,        /* bad URL */
	PACER_ERESOLVE = PACER_EBASE - 11,    /* name did not resolve */
	PACER_ELAYOUT = PACER_EBASE - 12,     /* histograms of different layouts */
};

/* Static name of an error code (negative errno or PACER_E*); never NULL. */
const char *err_name(int code);

#endif
