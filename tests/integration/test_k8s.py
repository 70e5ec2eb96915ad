"""pacer k8s: the manifests it prints parse into Debian's python3-kubernetes
models (V1ConfigMap, V1Job) with every field known to the model (a typo
would be dropped silently by a lenient reader) and the required ones
present, and they say what docs/distributed.md promises: an Indexed Job
of N pods on different nodes, each running one segment from one start."""

import datetime
import json
import os
import re
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
                        "run-nginx.yaml")


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


@unittest.skipIf(k8s is None, "python3-kubernetes or python3-yaml missing")
class K8sManifestsTest(PacerTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.before = datetime.datetime.now(datetime.timezone.utc)
        cls.r = subprocess.run([harness.pacer_bin(), "k8s", SCENARIO, "--segments", "4",
                                "--image", "registry.example/pacer:1", "--namespace", "load",
                                "--start-in", "90s"], capture_output=True, timeout=30)
        cls.docs = list(yaml.safe_load_all(cls.r.stdout)) if cls.r.returncode == 0 else []

    def test_two_known_documents(self):
        self.assertEqual(self.r.returncode, 0, self.r.stderr)
        self.assertEqual([d["kind"] for d in self.docs], ["ConfigMap", "Job"])
        self.assertEqual(strict(self.docs[0], "V1ConfigMap"), [])
        self.assertEqual(strict(self.docs[1], "V1Job"), [])
        cm = to_model(self.docs[0], "V1ConfigMap")
        job = to_model(self.docs[1], "V1Job")
        self.assertIsInstance(cm, k8s.V1ConfigMap)
        self.assertIsInstance(job, k8s.V1Job)
        # the scenario travels byte for byte
        with open(SCENARIO) as f:
            self.assertEqual(cm.data["scenario.yaml"], f.read())
        self.assertEqual(cm.metadata.namespace, "load")

    def test_indexed_job(self):
        job = to_model(self.docs[1], "V1Job")
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
        self.assertIn("--out", args)
        self.assertEqual(args[args.index("--out") + 1], "-")
        start = datetime.datetime.strptime(args[args.index("--start-at") + 1],
                                           "%Y-%m-%dT%H:%M:%S.%fZ").replace(
            tzinfo=datetime.timezone.utc)
        ahead = (start - self.before).total_seconds()
        self.assertTrue(85 <= ahead <= 95, ahead)
        self.assertEqual(c.resources.requests["cpu"], "2")
        self.assertIn("memory", c.resources.limits)
        # one segment per node
        term = pod.affinity.pod_anti_affinity.required_during_scheduling_ignored_during_execution[0]
        self.assertEqual(term.topology_key, "kubernetes.io/hostname")
        self.assertEqual(term.label_selector.match_labels,
                         spec.template.metadata.labels and
                         {"app.kubernetes.io/instance": job.metadata.name})
        self.assertEqual(pod.volumes[0].config_map.name, self.docs[0]["metadata"]["name"])
        # the mounted scenario is where the args read it
        mounts = {m.name: m.mount_path for m in c.volume_mounts}
        self.assertEqual(mounts["scenario"], "/etc/pacer")

    def test_the_pod_command_runs(self):
        # what a pod runs, run here: bench the scenario's segment with the
        # manifest's arguments (against the embedded target, briefly)
        d = tempfile.mkdtemp(prefix="pacer-k8s-")
        scen = os.path.join(d, "s.yaml")
        with open(scen, "w") as f:
            f.write("kind: run\ntarget: self-contained\nrate: 200\nduration: 1s\n")
        r = subprocess.run([harness.pacer_bin(), "k8s", scen, "--segments", "2", "--image", "x",
                            "--start-in", "1s"], capture_output=True, timeout=30)
        self.assertEqual(r.returncode, 0, r.stderr)
        args = list(yaml.safe_load_all(r.stdout))[1]["spec"]["template"]["spec"]["containers"][0]["args"]
        args = [a.replace("$(JOB_COMPLETION_INDEX)", "1").replace("/etc/pacer/scenario.yaml", scen)
                for a in args]
        run = subprocess.run([harness.pacer_bin()] + args, capture_output=True, timeout=30, cwd=d)
        self.assertEqual(run.returncode, 0, run.stderr)
        res = json.loads(run.stdout)
        self.assertEqual(res["plan"]["segment"], {"index": 1, "count": 2})
        self.assertEqual(res["measure"]["requests"]["scheduled"], 100)

    def test_refusals(self):
        pacer = harness.pacer_bin()
        cmp = os.path.join(os.path.dirname(SCENARIO), "compare-builds.yaml")
        cases = [
            ([SCENARIO, "--image", "x"], b"--segments N"),
            ([SCENARIO, "--segments", "3"], b"--image IMAGE is required"),
            ([SCENARIO, "--segments", "3", "--image", "x", "--namespace", "Bad_NS"], b"--namespace"),
            ([cmp, "--segments", "3", "--image", "x"], b"segments are for run and ramp"),
        ]
        for args, needle in cases:
            r = subprocess.run([pacer, "k8s"] + args, capture_output=True, timeout=30)
            self.assertEqual(r.returncode, 2, (args, r.stderr))
            self.assertIn(needle, r.stderr)
            self.assertEqual(r.stdout, b"")


if __name__ == "__main__":
    unittest.main()
