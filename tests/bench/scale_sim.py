#!/usr/bin/env python3
# scale_sim.py -- the kubelets' part of bench_scale_real.sh, against a real apiserver: the Nodes, the pods' status, and the clock of a lights-out.
#
# Usage: scale_sim.py KUBECONFIG_DIR nodes N       create node-1..node-N, Ready, each with a bootID
#        scale_sim.py KUBECONFIG_DIR run OUTDIR     the kubelets' stand-in and the observer, until killed
#
# KUBECONFIG_DIR holds server (the URL), ca.crt, admin.crt and admin.key.
# `run` watches every pod bound to a node and writes its status as a kubelet would once its container
# runs (phase Running, Ready, the first container running with containerID containerd://c-<uid>-<boot>,
# the id scale_cri answers). SIGUSR1 is a lights-out (sent to scale_cri at the same moment): the boot
# goes up and every pod gets its new container id and one more restart. It also watches the member
# records and the RSS objects, and appends to OUTDIR/events.log one line per change that the bench
# judges from, with the time it arrived here (ms since the epoch, one clock for everything):
#   T seq NS/POD SEQUENCE GENERATION   a record's observed that reports a sequence (a stopped member)
#   T phase NS/NAME PHASE              an RSS status phase change
#   T boot N                           a lights-out was sent
import http.client
import json
import os
import queue
import signal
import ssl
import sys
import threading
import time
import uuid

kdir = sys.argv[1]
server = open(os.path.join(kdir, "server")).read().strip()
host, port = server.replace("https://", "").split(":")
ctx = ssl.create_default_context(cafile=os.path.join(kdir, "ca.crt"))
ctx.load_cert_chain(os.path.join(kdir, "admin.crt"), os.path.join(kdir, "admin.key"))
UA = "scale-sim"


def conn():
    return http.client.HTTPSConnection(host, int(port), context=ctx, timeout=60)


class Client:
    def __init__(self):
        self.c = conn()

    def req(self, method, path, body=None, ctype="application/json"):
        for attempt in range(5):
            try:
                hdr = {"User-Agent": UA, "Accept": "application/json"}
                if body is not None:
                    hdr["Content-Type"] = ctype
                self.c.request(method, path, body=json.dumps(body) if body is not None else None, headers=hdr)
                r = self.c.getresponse()
                data = r.read()
                return r.status, (json.loads(data) if data else None)
            except (http.client.HTTPException, OSError):
                self.c.close()
                self.c = conn()
                time.sleep(0.2 * (attempt + 1))
        raise RuntimeError("%s %s failed" % (method, path))


def now_ms():
    return int(time.time() * 1000)


def make_nodes(n):
    cl = Client()
    for i in range(1, n + 1):
        t = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        node = {
            "apiVersion": "v1", "kind": "Node",
            "metadata": {"name": "node-%d" % i, "labels": {"kubernetes.io/hostname": "node-%d" % i}},
            "status": {
                "capacity": {"cpu": "64", "memory": "256Gi", "pods": "110"},
                "allocatable": {"cpu": "64", "memory": "256Gi", "pods": "110"},
                "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                                "lastHeartbeatTime": t, "lastTransitionTime": t}],
                "addresses": [{"type": "InternalIP", "address": "127.0.0.1"},
                              {"type": "Hostname", "address": "node-%d" % i}],
                "nodeInfo": {"bootID": str(uuid.uuid4()), "machineID": "", "systemUUID": "",
                             "kernelVersion": "", "osImage": "", "containerRuntimeVersion": "scale-cri://0.0.1",
                             "kubeletVersion": "v1.34.4", "kubeProxyVersion": "", "operatingSystem": "linux",
                             "architecture": "amd64"},
            },
        }
        st, body = cl.req("POST", "/api/v1/nodes", node)
        if st not in (201, 409):
            sys.exit("node-%d: %s %s" % (i, st, body))
        # The TaintNodesByCondition admission taints a new node not-ready; the node lifecycle controller,
        # off here (no kubelets renew node Leases), would lift it once the node is Ready.
        st, body = cl.req("PATCH", "/api/v1/nodes/node-%d" % i, {"spec": {"taints": None}},
                          "application/merge-patch+json")
        if st != 200:
            sys.exit("node-%d untaint: %s %s" % (i, st, body))


def watch(path, on_event):
    """LIST then WATCH from its resourceVersion, forever; on_event(type, obj)."""
    while True:
        try:
            cl = Client()
            st, lst = cl.req("GET", path)
            if st != 200:
                time.sleep(1)
                continue
            for o in lst.get("items", []):
                on_event("ADDED", o)
            rv = lst["metadata"]["resourceVersion"]
            sep = "&" if "?" in path else "?"
            c = conn()
            c.request("GET", "%s%swatch=1&allowWatchBookmarks=true&resourceVersion=%s" % (path, sep, rv),
                      headers={"User-Agent": UA})
            r = c.getresponse()
            while True:
                line = r.readline()
                if not line:
                    break
                ev = json.loads(line)
                if ev["type"] == "ERROR":
                    break
                if ev["type"] != "BOOKMARK":
                    on_event(ev["type"], ev["object"])
            c.close()
        except (http.client.HTTPException, OSError, ValueError):
            time.sleep(0.5)


boot = 1
lock = threading.Lock()
pods = {}  # "ns/name" -> (uid, container name, node, boot written)
work = queue.Queue()
log_lock = threading.Lock()
log_f = None


def log(line):
    with log_lock:
        log_f.write("%d %s\n" % (now_ms(), line))
        log_f.flush()


def status_for(uid, cname, b):
    t = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    cond = [{"type": c, "status": "True", "lastTransitionTime": t}
            for c in ("PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled")]
    return {"status": {
        "phase": "Running", "conditions": cond, "hostIP": "127.0.0.1", "podIP": "127.0.0.1",
        "podIPs": [{"ip": "127.0.0.1"}], "startTime": t,
        "containerStatuses": [{"name": cname, "ready": True, "started": True, "restartCount": b - 1,
                               "image": "scale/none:1", "imageID": "scale/none@sha256:0",
                               "containerID": "containerd://c-%s-%d" % (uid, b),
                               "state": {"running": {"startedAt": t}}}]}}


def patcher():
    cl = Client()
    while True:
        key = work.get()
        with lock:
            p = pods.get(key)
            b = boot
        if not p or p[3] == b:
            continue
        ns, name = key.split("/")
        st, _ = cl.req("PATCH", "/api/v1/namespaces/%s/pods/%s/status" % (ns, name), status_for(p[0], p[1], b),
                       "application/merge-patch+json")
        if st == 200:
            with lock:
                if key in pods and pods[key][0] == p[0]:
                    pods[key] = (p[0], p[1], p[2], b)


def on_pod(typ, o):
    md, spec = o["metadata"], o.get("spec", {})
    key = "%s/%s" % (md["namespace"], md["name"])
    if typ == "DELETED":
        with lock:
            pods.pop(key, None)
        return
    node = spec.get("nodeName")
    if not node or md.get("deletionTimestamp"):
        return
    cname = spec["containers"][0]["name"]
    written = 0
    for cs in o.get("status", {}).get("containerStatuses", []) or []:
        cid = cs.get("containerID", "")
        if cs.get("name") == cname and cid.startswith("containerd://c-%s-" % md["uid"]):
            written = int(cid.rsplit("-", 1)[1])
    with lock:
        old = pods.get(key)
        pods[key] = (md["uid"], cname, node, written)
        stale = written != boot and (not old or old[0] != md["uid"] or old[3] != written or written == 0)
    if stale:
        work.put(key)


def on_record(typ, o):
    if typ == "DELETED":
        return
    md = o["metadata"]
    lb = md.get("labels", {})
    obs = (o.get("data") or {}).get("observed")
    if not obs:
        return
    try:
        ob = json.loads(obs)
    except ValueError:
        return
    if ob.get("sequence") is not None and ob.get("role") == "stopped":
        log("seq %s/%s %s %s" % (lb.get("rss.clusterlabs.org/namespace"), lb.get("rss.clusterlabs.org/member"),
                                 ob["sequence"], ob.get("generation")))


phases = {}


def on_rss(typ, o):
    if typ == "DELETED":
        return
    key = "%s/%s" % (o["metadata"]["namespace"], o["metadata"]["name"])
    ph = (o.get("status") or {}).get("phase")
    if ph and phases.get(key) != ph:
        phases[key] = ph
        log("phase %s %s" % (key, ph))


def on_usr1(sig, frame):
    global boot
    with lock:
        boot += 1
        keys = list(pods)
    log("boot %d" % boot)
    for k in keys:
        work.put(k)


def run(outdir):
    global log_f
    log_f = open(os.path.join(outdir, "events.log"), "a")
    signal.signal(signal.SIGUSR1, on_usr1)
    for _ in range(4):
        threading.Thread(target=patcher, daemon=True).start()
    threading.Thread(target=watch, args=("/api/v1/pods?fieldSelector=spec.nodeName!%3D", on_pod), daemon=True).start()
    threading.Thread(target=watch, args=("/api/v1/namespaces/rssd-system/configmaps?labelSelector="
                                         "rss.clusterlabs.org%2Fmember", on_record), daemon=True).start()
    threading.Thread(target=watch, args=("/apis/clusterlabs.org/v1alpha1/replicatedstatefulsets", on_rss),
                     daemon=True).start()
    while True:
        signal.pause()


if __name__ == "__main__":
    if sys.argv[2] == "nodes":
        make_nodes(int(sys.argv[3]))
    elif sys.argv[2] == "run":
        run(sys.argv[3])
    else:
        sys.exit("usage: scale_sim.py KUBECONFIG_DIR nodes N | run OUTDIR")
