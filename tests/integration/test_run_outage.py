"""An outage of refused connections in the middle of an open-loop run (issue
19 item 7): `pacer serve` is stopped about 2 s into a 6 s run at 200
requests/s and started again on the same port 2 s later. While it is down,
nothing completes and every connect is refused; requests are not errors
then, they wait for a connection. The per-second series must show those
seconds as they were (connects refused and requests unsent, nothing
completed), its counts must add up to the phase's, the text report must show
them, and the warning must name refused connections as the cause, not too
few connections.

Timing-robust: the assertions are about which seconds saw what and about
exact sums, not about when the outage began (the signals come from this
process, and timer wake-ups on this VM can be late).
"""

import os
import subprocess
import unittest

import harness
import test_report
from harness import PacerServe, PacerTestCase

RATE = 200
DURATION_S = 6
DOWN_AT_S = 2.0  # after pacer's process start
DOWN_S = 2.0


class FixedPortServe(PacerServe):
    """pacer serve on a given port, so that a second one can take it over."""

    def __init__(self, port, **kw):
        super().__init__("hello", **kw)
        self.fixed_port = port

    def argv(self):
        return [a.replace("127.0.0.1:0", "127.0.0.1:%d" % self.fixed_port)
                for a in super().argv()]


def connect_failures(obj):
    return sum((obj.get("connect_failures") or {}).values())


class OutageTest(PacerTestCase):
    def test_refused_connections_show_per_second_and_name_the_cause(self):
        port = harness.free_port()
        servers = [FixedPortServe(port).start()]

        def down(_pid):
            servers[0].stop()

        def up(_pid):
            servers.append(FixedPortServe(port).start())

        try:
            run = harness.run_pacer(
                ["http://127.0.0.1:%d/" % port, "--rate", RATE, "--duration", "%ds" % DURATION_S,
                 "--threads", 1, "--timeout", "2s"],
                timeout=30.0, actions=[(DOWN_AT_S, down), (DOWN_AT_S + DOWN_S, up)])
        finally:
            for s in servers:
                s.stop()
        self.assertFalse(run.timed_out, harness.describe(run))
        self.assertIsNotNone(run.json, harness.describe(run))
        self.assertEqual(len(servers), 2, "the target was not restarted")
        res = run.json
        m = res["measure"]
        series = res["series"]

        # the outage: seconds of the load in which nothing completed, each
        # with requests waiting for a connection at its end, and connects
        # refused in them
        dark = [p for p in series if p["t_s"] < DURATION_S and p["completed"] == 0]
        self.assertTrue(dark, "no second without a response: %s" % series)
        for p in dark:
            self.assertGreater(p["unsent"], 0, p)
        self.assertTrue(any(p["connect_failures"]["refused"] > 0 for p in dark), dark)
        self.assertGreater(m["connect_failures"]["refused"], 0, m["connect_failures"])
        # a second before the outage saw none of it
        first_dark = series.index(dark[0])
        self.assertTrue(any(p["completed"] > 0 and connect_failures(p) == 0
                            for p in series[:first_dark]), series)

        # one count: the seconds add up to the phase
        for k in ("refused", "reset", "timeout", "other"):
            self.assertEqual(sum(p["connect_failures"][k] for p in series),
                             m["connect_failures"][k], k)
        self.assertEqual(connect_failures(m), m["transport_errors"]["connect"])
        self.assertEqual(sum(p["dropped"] for p in series), m["requests"]["dropped"])
        self.assertEqual(sum(p["completed"] for p in series), m["requests"]["completed"])
        self.assertEqual(sum(p["errors"] for p in series), m["errors"]["total"])
        # every due request was sent after all (the backlog holds 2 s of it)
        self.assertEqual(m["requests"]["dropped"], 0, m["requests"])
        self.assertEqual(m["requests"]["sent"], m["requests"]["scheduled"], m["requests"])

        # the cause, from the evidence
        warnings = res.get("warnings") or []
        self.assertTrue(any("the target refused connections" in w for w in warnings), warnings)
        self.assertFalse(any("--connections is too low" in w for w in warnings), warnings)
        self.assertEqual(test_report.undescribed_fields(test_report.schema(), res), [])

        # the text report shows the outage seconds
        txt = subprocess.run([harness.pacer_bin(), "report", "--format", "text", run.out_path],
                             capture_output=True, text=True, timeout=30)
        self.assertEqual(txt.returncode, 0, txt.stderr)
        self.assertIn("Seconds with failed connects or unsent requests", txt.stdout)
        for p in dark:
            self.assertRegex(txt.stdout, r"\n\s+%d\s+0\s" % p["t_s"])


if __name__ == "__main__":
    harness.run_suite()
