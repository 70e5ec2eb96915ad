"""pacer k8s: the manifests it prints parse into Debian's python3-kubernetes
models (V1ConfigMap, V1Secret, V1Service, V1Job) with every field known to
the model (a typo would be dropped silently by a lenient reader) and the
required ones present, and they say what docs/distributed.md promises: an
Indexed Job of N pods on different nodes, each running one segment, started
together by pod 0's barrier (reached through a headless Service by a name
the pods' subdomain gives, authenticated by the Secret's token) or, with
--start-in, at one time; a loopback target is refused."""

import base64
import datetime
import json
import os
import re
import socket
import subprocess
import tempfile
import unittest

import harness
from harness import PacerTestCase

try:
    import yaml
    from kubernetes import client as k8s
except ImportError:  # pragma: no cover - the CI image has both
    yaml = k8s = None

SCENARIO = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "scenarios",
                        "run-k8s.yaml")
LOOPBACK = os.path.join(os.path.dirname(SCENARIO), "run-nginx.yaml")


def strict(data, type_name, path=""):
    """Paths in data that the model type_name does not know (recursively)."""
    bad = []
    m = re.match(r"list\[(.+)\]$", type_name)
    if m:
        if not isinstance(data, list):
            return [f"{path}: expected a list"]
        for i, x in enumerate(data):
            bad += strict(x, m.group(1), f"{path}[{i}]")
        return bad
    m = re.match(r"dict\(str, (.+)\)$", type_name)
    if m:
        if not isinstance(data, dict):
            return [f"{path}: expected a mapping"]
        for k, v in data.items():
            bad += strict(v, m.group(1), f"{path}.{k}")
        return bad
    cls = getattr(k8s, type_name, None)
    if cls is None:  # str, int, bool, object
        return []
    if not isinstance(data, dict):
        return [f"{path}: expected a {type_name}"]
    by_json = {v: k for k, v in cls.attribute_map.items()}
    for k, v in data.items():
        if k not in by_json:
            bad.append(f"{path}.{k}: unknown to {type_name}")
            continue
        bad += strict(v, cls.openapi_types[by_json[k]], f"{path}.{k}")
    return bad


def to_model(data, type_name):
    """data as a model object (the client's own deserializer, which checks
    the required fields as the constructors do)."""
    api = k8s.ApiClient()

    class R:  # the deserializer reads a response body
        def __init__(self, d):
            self.data = json.dumps(d)

    return api.deserialize(R(data), type_name)


def manifests(args):
    r = subprocess.run([harness.pacer_bin(), "k8s"] + args, capture_output=True, timeout=30)
    return r, (list(yaml.safe_load_all(r.stdout)) if r.returncode == 0 else [])


def container_of(job):
    return job["spec"]["template"]["spec"]["containers"][0]


@unittest.skipIf(k8s is None, "python3-kubernetes or python3-yaml missing")
class K8sManifestsTest(PacerTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.before = datetime.datetime.now(datetime.timezone.utc)
        cls.r, cls.docs = manifests([SCENARIO, "--segments", "4", "--image",
                                     "registry.example/pacer:1", "--namespace", "load"])
        cls.r_at, cls.docs_at = manifests([SCENARIO, "--segments", "4", "--image",
                                           "registry.example/pacer:1", "--namespace", "load",
                                           "--start-in", "90s"])

    def test_known_documents(self):
        self.assertEqual(self.r.returncode, 0, self.r.stderr)
        self.assertEqual([d["kind"] for d in self.docs], ["ConfigMap", "Secret", "Service", "Job"])
        for d in self.docs:
            self.assertEqual(strict(d, "V1" + d["kind"]), [], d["kind"])
            self.assertIsInstance(to_model(d, "V1" + d["kind"]), getattr(k8s, "V1" + d["kind"]))
            self.assertEqual(d["metadata"]["namespace"], "load")
        cm = to_model(self.docs[0], "V1ConfigMap")
        # the scenario travels byte for byte
        with open(SCENARIO) as f:
            self.assertEqual(cm.data["scenario.yaml"], f.read())
        # --start-in: no barrier, so no Secret or Service
        self.assertEqual(self.r_at.returncode, 0, self.r_at.stderr)
        self.assertEqual([d["kind"] for d in self.docs_at], ["ConfigMap", "Job"])
        for d in self.docs_at:
            self.assertEqual(strict(d, "V1" + d["kind"]), [], d["kind"])

    def test_indexed_job(self):
        for docs in (self.docs, self.docs_at):
            job = to_model(docs[-1], "V1Job")
            spec = job.spec
            self.assertEqual(spec.completion_mode, "Indexed")
            self.assertEqual(spec.parallelism, 4)
            self.assertEqual(spec.completions, 4)
            pod = spec.template.spec
            self.assertEqual(pod.restart_policy, "Never")
            c = pod.containers[0]
            self.assertEqual(c.image, "registry.example/pacer:1")
            args = c.args
            self.assertEqual(args[:2], ["bench", "/etc/pacer/scenario.yaml"])
            self.assertEqual(args[args.index("--segment") + 1], "$(JOB_COMPLETION_INDEX)/4")
            self.assertEqual(args[args.index("--out") + 1], "-")
            self.assertIn("--framed", args)
            self.assertEqual(c.resources.requests["cpu"], "2")
            self.assertIn("memory", c.resources.limits)
            # one segment per node
            term = pod.affinity.pod_anti_affinity.required_during_scheduling_ignored_during_execution[0]
            self.assertEqual(term.topology_key, "kubernetes.io/hostname")
            self.assertEqual(term.label_selector.match_labels,
                             {"app.kubernetes.io/instance": job.metadata.name})
            self.assertEqual(pod.volumes[0].config_map.name, docs[0]["metadata"]["name"])
            mounts = {m.name: m.mount_path for m in c.volume_mounts}
            self.assertEqual(mounts["scenario"], "/etc/pacer")

    def test_barrier_wiring(self):
        secret = to_model(self.docs[1], "V1Secret")
        svc = to_model(self.docs[2], "V1Service")
        job = to_model(self.docs[3], "V1Job")
        pod = job.spec.template.spec
        c = pod.containers[0]
        # a headless Service whose name is the pods' subdomain: pod K is
        # JOB-K.SERVICE, and pod 0's name is what the others check in with
        self.assertEqual(svc.spec.cluster_ip, "None")
        self.assertTrue(svc.spec.publish_not_ready_addresses)
        self.assertEqual(pod.subdomain, svc.metadata.name)
        labels = job.spec.template.metadata.labels
        for k, v in svc.spec.selector.items():
            self.assertEqual(labels.get(k), v)
        port = svc.spec.ports[0].port
        self.assertEqual(c.ports[0].container_port, port)
        args = c.args
        self.assertEqual(args[args.index("--barrier") + 1],
                         "%s-0.%s:%d" % (job.metadata.name, svc.metadata.name, port))
        self.assertEqual(args[args.index("--barrier-timeout") + 1], "5m")
        self.assertEqual(args[args.index("--merged-out") + 1], "-")
        self.assertNotIn("--start-at", args)
        # the token comes from the Secret, not the command line
        env = {e.name: e.value_from.secret_key_ref for e in c.env}
        ref = env["PACER_BARRIER_TOKEN"]
        self.assertEqual(ref.name, secret.metadata.name)
        self.assertRegex(secret.string_data[ref.key], r"^[0-9a-f]{32}$")
        # each generation its own token
        _, again = manifests([SCENARIO, "--segments", "4", "--image", "x"])
        self.assertNotEqual(again[1]["stringData"]["token"], secret.string_data["token"])

    def test_start_at_mode(self):
        args = container_of(self.docs_at[1])["args"]
        self.assertNotIn("--barrier", args)
        start = datetime.datetime.strptime(args[args.index("--start-at") + 1],
                                           "%Y-%m-%dT%H:%M:%S.%fZ").replace(
            tzinfo=datetime.timezone.utc)
        ahead = (start - self.before).total_seconds()
        self.assertTrue(85 <= ahead <= 95, ahead)

    def test_the_pods_command_runs(self):
        # what the pods run, run here: the scenario's two segments against
        # the embedded target, pod 0's name replaced by the loopback
        d = tempfile.mkdtemp(prefix="pacer-k8s-")
        scen = os.path.join(d, "s.yaml")
        with open(scen, "w") as f:
            f.write("kind: run\ntarget: self-contained\nrate: 200\nduration: 1s\n")
        _, docs = manifests([scen, "--segments", "2", "--image", "x"])
        job, token = docs[3], docs[1]["stringData"]["token"]
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        procs = []
        for k in (1, 0):
            args = [a.replace("$(JOB_COMPLETION_INDEX)", str(k))
                    .replace("/etc/pacer/scenario.yaml", scen) for a in container_of(job)["args"]]
            args[args.index("--barrier") + 1] = "127.0.0.1:%d" % port
            procs.append(subprocess.Popen([harness.pacer_bin()] + args, cwd=d,
                                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                          env=dict(os.environ, PACER_BARRIER_TOKEN=token)))
        outs = [p.communicate(timeout=60)[0].decode() for p in procs]
        self.assertEqual([p.returncode for p in procs], [0, 0], outs)
        # pod 0's log alone gives the merged result
        r = subprocess.run([harness.pacer_bin(), "merge", "-", "-o", "-"], input=outs[1].encode(),
                           capture_output=True, timeout=30)
        self.assertEqual(r.returncode, 0, r.stderr)
        m = json.loads(r.stdout)
        self.assertEqual(m["merged"]["segments"], 2)
        self.assertEqual(m["measure"]["requests"]["scheduled"], 200)

    def test_injection(self):
        """A scenario whose text holds the line and paragraph separators YAML
        1.1 readers break lines at (U+2028, U+2029, NEL), or whose file name
        holds a newline, still gives exactly the four documents, in the
        namespace asked, with the scenario byte for byte: nothing of it
        becomes a document of its own (a Secret in kube-system)."""
        d = tempfile.mkdtemp(prefix="pacer-k8s-inj-")
        evil = ["---", "apiVersion: v1", "kind: Secret", "metadata:", "  name: evil",
                "  namespace: kube-system", "stringData:", "  a: b"]
        texts = {}
        for name, sep in (("ls", "\u2028"), ("ps", "\u2029"), ("nel", "\u0085")):
            # in a comment, where the scenario's own reader ends the line
            texts[name + ".yaml"] = ("kind: run\ntarget: http://nginx.load.svc/\nrate: 10\n"
                                     "# note" + sep + sep.join(evil) + "\n")
            # in a header's value, quoted
            texts[name + "-header.yaml"] = (
                "kind: run\ntarget: http://nginx.load.svc/\nrate: 10\nheader:\n"
                "  X-Note: \"a" + sep.join(evil).replace('"', "") + "\"\n")
        texts["x\nkind: Secret\nmetadata: {name: evil, namespace: kube-system}\n.yaml"] = (
            "kind: run\ntarget: http://nginx.load.svc/\nrate: 10\n")
        for fname, text in texts.items():
            path = os.path.join(d, fname)
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
            r, docs = manifests([path, "--segments", "2", "--image", "x", "--namespace", "load"])
            self.assertEqual(r.returncode, 0, (fname, r.stderr))
            self.assertEqual([x["kind"] for x in docs], ["ConfigMap", "Secret", "Service", "Job"],
                             fname)
            for x in docs:
                self.assertEqual(x["metadata"]["namespace"], "load", fname)
                self.assertEqual(strict(x, "V1" + x["kind"]), [], (fname, x["kind"]))
                to_model(x, "V1" + x["kind"])
            self.assertEqual(docs[0]["data"]["scenario.yaml"], text, fname)
            # the header comment stays one line
            self.assertTrue(r.stdout.startswith(b"# pacer k8s: 2 segments of "), fname)
            self.assertEqual(r.stdout.split(b"\n")[1], b"apiVersion: v1", fname)

    def test_secret_header_scenario(self):
        """A scenario that sets a secret header (Authorization, or a name its
        redact_header gives) travels in a Secret, never in a ConfigMap."""
        d = tempfile.mkdtemp(prefix="pacer-k8s-sec-")
        for extra, header in (("", "Authorization: Bearer s3cret-token"),
                              ("redact_header: X-Api-Key\n", "X-Api-Key: s3cret-token")):
            scen = os.path.join(d, "s.yaml")
            text = ("kind: run\ntarget: http://nginx.load.svc/\nrate: 10\n%sheader:\n  - \"%s\"\n"
                    % (extra, header))
            with open(scen, "w") as f:
                f.write(text)
            for mode in ([], ["--start-in", "60s"]):
                r, docs = manifests([scen, "--segments", "2", "--image", "x"] + mode)
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertNotIn(b"s3cret-token", r.stdout)
                kinds = [x["kind"] for x in docs]
                self.assertEqual(kinds, ["Secret", "Job"] if mode
                                 else ["Secret", "Secret", "Service", "Job"])
                sec = to_model(docs[0], "V1Secret")
                self.assertEqual(strict(docs[0], "V1Secret"), [])
                self.assertEqual(base64.b64decode(sec.data["scenario.yaml"]).decode(), text)
                pod = to_model(docs[-1], "V1Job").spec.template.spec
                self.assertEqual(pod.volumes[0].secret.secret_name, sec.metadata.name)
                self.assertIsNone(pod.volumes[0].config_map)

    def test_refusals(self):
        cmp = os.path.join(os.path.dirname(SCENARIO), "compare-builds.yaml")
        cases = [
            ([SCENARIO, "--image", "x"], b"--segments N"),
            ([SCENARIO, "--segments", "3"], b"--image IMAGE is required"),
            ([SCENARIO, "--segments", "3", "--image", "x", "--namespace", "Bad_NS"], b"--namespace"),
            ([cmp, "--segments", "3", "--image", "x"], b"segments are for run and ramp"),
            # the loopback is the pod itself
            ([LOOPBACK, "--segments", "3", "--image", "x"],
             b"the target http://127.0.0.1:8080/ is the loopback: in a pod that is the pod itself"),
            ([SCENARIO, "--segments", "3", "--image", "x", "--barrier-timeout", "0s"],
             b"--barrier-timeout"),
        ]
        for args, needle in cases:
            r = subprocess.run([harness.pacer_bin(), "k8s"] + args, capture_output=True, timeout=30)
            self.assertEqual(r.returncode, 2, (args, r.stderr))
            self.assertIn(needle, r.stderr)
            self.assertEqual(r.stdout, b"")
        d = tempfile.mkdtemp(prefix="pacer-k8s-lo-")
        for target, refused in (("http://localhost:8080/", True), ("http://[::1]/", True),
                                ("http://127.1.2.3/", True), ("http://10.0.0.5:8080/", False),
                                ("http://nginx.load.svc/", False)):
            scen = os.path.join(d, "s.yaml")
            with open(scen, "w") as f:
                f.write("kind: run\ntarget: %s\nrate: 10\n" % target)
            r = subprocess.run([harness.pacer_bin(), "k8s", scen, "--segments", "2", "--image",
                                "x"], capture_output=True, timeout=30)
            self.assertEqual(r.returncode, 2 if refused else 0, (target, r.stderr))
            r = subprocess.run([harness.pacer_bin(), "k8s", scen, "--segments", "2", "--image",
                                "x", "--allow-loopback"], capture_output=True, timeout=30)
            self.assertEqual(r.returncode, 0, (target, r.stderr))


if __name__ == "__main__":
    unittest.main()
