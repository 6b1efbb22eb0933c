#!/usr/bin/env python3
# scale_report.py -- the figures of bench_scale_real.sh: metric snapshots and their deltas, the audit log by client, the lights-out clock.
#
#   scale_report.py snap KDIR ETCD_URL OUT       apiserver and etcd counters now, as JSON in OUT
#   scale_report.py delta A B                    rates between two snapshots (writes, watch events, requests)
#   scale_report.py audit LOG FROM TO SECONDS LEADER_NODE
#                                                rssd's requests in the audit log bytes [FROM, TO): by verb and
#                                                resource (per second, all agents), per agent per minute, the
#                                                leader node's and the leader's share
#   scale_report.py lights EVENTS FROM_BOOT      the lights-out clock of events.log (scale_sim.py) after `boot N`
#   scale_report.py procs PIDFILE LEADER_NODE    VmRSS of every rssd (min/median/max), the leader's CPU seconds and VmRSS
#   scale_report.py probes PIDFILE               the failsafe's probes since start, all rssd together, from each
#                                                one's /metrics (its listening port found through /proc)
#   scale_report.py cpu OUT PIDFILE APISERVER_PID ETCD_PID
#                                                CPU seconds now (the machine's busy time, the API server, etcd,
#                                                all rssd), as JSON in OUT
#   scale_report.py cpu-window A B               cores used between two of those: is the machine the bound?
import json
import os
import re
import ssl
import statistics
import sys
import time
import urllib.request
from collections import Counter, defaultdict


def fetch(url, kdir=None):
    ctx = None
    if kdir:
        ctx = ssl.create_default_context(cafile=os.path.join(kdir, "ca.crt"))
        ctx.load_cert_chain(os.path.join(kdir, "admin.crt"), os.path.join(kdir, "admin.key"))
    with urllib.request.urlopen(url, context=ctx, timeout=30) as r:
        return r.read().decode()


LINE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+(\S+)')
LABEL = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')


def parse(text):
    for line in text.splitlines():
        if line.startswith("#"):
            continue
        m = LINE.match(line)
        if m:
            yield m.group(1), dict(LABEL.findall(m.group(2) or "")), float(m.group(3))


def snap(kdir, etcd_url, out):
    server = open(os.path.join(kdir, "server")).read().strip()
    s = {"t": time.time(), "requests": Counter(), "watch_events": Counter(), "etcd": Counter()}
    for name, lb, v in parse(fetch(server + "/metrics", kdir)):
        if name == "apiserver_request_total":
            res = lb.get("resource", "") + ("/" + lb["subresource"] if lb.get("subresource") else "")
            s["requests"]["%s %s" % (lb.get("verb", ""), res)] += v
        elif name == "apiserver_watch_events_total":
            s["watch_events"][lb.get("kind", "") or lb.get("resource", "")] += v
    for name, lb, v in parse(fetch(etcd_url + "/metrics")):
        if name in ("etcd_mvcc_put_total", "etcd_mvcc_delete_total", "etcd_mvcc_txn_total",
                    "etcd_server_proposals_committed_total", "etcd_disk_wal_fsync_duration_seconds_count",
                    "etcd_mvcc_range_total"):
            s["etcd"][name] += v
    json.dump(s, open(out, "w"))


def delta(a, b):
    a, b = json.load(open(a)), json.load(open(b))
    dt = b["t"] - a["t"]
    print("window %.1f s" % dt)
    for k in ("etcd_mvcc_put_total", "etcd_mvcc_delete_total", "etcd_mvcc_txn_total",
              "etcd_server_proposals_committed_total", "etcd_disk_wal_fsync_duration_seconds_count",
              "etcd_mvcc_range_total"):
        d = b["etcd"].get(k, 0) - a["etcd"].get(k, 0)
        print("etcd %-45s %10.0f  %8.2f/s" % (k, d, d / dt))
    tot = 0
    for k in sorted(b["watch_events"]):
        d = b["watch_events"][k] - a["watch_events"].get(k, 0)
        tot += d
        if d:
            print("watch events %-33s %10.0f  %8.2f/s" % (k, d, d / dt))
    print("watch events %-33s %10.0f  %8.2f/s" % ("(all)", tot, tot / dt))
    rt = sum(b["requests"].values()) - sum(a["requests"].values())
    print("apiserver requests, all clients %-14s %10.0f  %8.2f/s" % ("", rt, rt / dt))


def stamp(e):
    t = e.get("stageTimestamp", "")
    try:
        return time.mktime(time.strptime(t[:19], "%Y-%m-%dT%H:%M:%S")) - time.timezone + float("0" + t[19:-1])
    except ValueError:
        return 0


def audit(log, frm, to, seconds, leader, t_from=None, t_to=None):
    by = Counter()
    per_node = Counter()
    leader_by = Counter()
    with open(log, "rb") as f:
        f.seek(frm)
        data = f.read(to - frm)
    events = []
    renewals = Counter()
    for line in data.splitlines():
        try:
            e = json.loads(line)
        except ValueError:
            continue
        if t_from is not None and not (t_from <= stamp(e) < t_to):
            continue
        events.append(e)
        if e.get("verb") == "update" and e.get("objectRef", {}).get("name") == "rssd-leader" and \
                e.get("responseStatus", {}).get("code") == 200:
            m = re.search(r"rssd/\S+ \(([^)]*)\)", e.get("userAgent", ""))
            if m:
                renewals[m.group(1)] += 1
    if leader == "auto":
        # The leader is whoever renewed rssd-leader most in the window (a leader change shows up here).
        leader = renewals.most_common(1)[0][0] if renewals else "?"
        print("leader: %s (renewals of rssd-leader in the window: %s)" % (leader, dict(renewals.most_common(3))))
    for e in events:
        verb = e.get("verb", "")
        stage = e.get("stage")
        if not ((verb == "watch" and stage == "ResponseStarted") or (verb != "watch" and stage == "ResponseComplete")):
            continue
        m = re.search(r"rssd/\S+ \(([^)]*)\)", e.get("userAgent", ""))
        if not m:
            continue
        node = m.group(1)
        ref = e.get("objectRef", {})
        res = ref.get("resource", e.get("requestURI", "?")) + ("/" + ref["subresource"] if ref.get("subresource") else "")
        key = "%s %s" % (verb, res)
        by[key] += 1
        per_node[node] += 1
        if node == leader:
            leader_by[key] += 1
    total = sum(by.values())
    print("rssd requests: %d in %.1f s = %.2f/s" % (total, seconds, total / seconds))
    print("%-50s %10s %10s %12s" % ("verb resource", "all /s", "leader /s", "leader share"))
    for k, v in by.most_common():
        print("%-50s %10.2f %10.2f %11.0f%%" % (k, v / seconds, leader_by[k] / seconds, 100.0 * leader_by[k] / v))
    others = [v for n, v in per_node.items() if n != leader]
    if others:
        med = statistics.median(others)
        print("per agent (not the leader's node), requests/min: median %.1f, min %.1f, max %.1f (%d agents)" % (
            med * 60 / seconds, min(others) * 60 / seconds, max(others) * 60 / seconds, len(others)))
        ln = per_node[leader]
        print("leader's node: %.1f/min; the leader's share (its node minus a median agent): %.1f/min = %.0f%% of all rssd requests" % (
            ln * 60 / seconds, (ln - med) * 60 / seconds, 100.0 * (ln - med) / total if total else 0))


def lights(events, boot):
    t_boot = None
    seq = {}  # pod -> when its first sequence report after the power-on arrived
    left = {}
    running = {}
    for line in open(events):
        p = line.split()
        t = int(p[0])
        if p[1] == "boot" and int(p[2]) == boot:
            t_boot = t
        if t_boot is None:
            continue
        if p[1] == "seq":
            seq.setdefault(p[2], t)
        elif p[1] == "phase":
            key, ph = p[2], p[3]
            if ph != "Running":
                left[key] = True
                running.pop(key, None)
            elif left.get(key) and key not in running:
                running[key] = t
    if t_boot is None or not seq:
        print("no lights-out %d in %s" % (boot, events))
        return 1
    last_seq = max(seq.values())
    print("lights-out %d: %d members reported a sequence, the last at +%d ms; %d RSS left Running and came back" % (
        boot, len(seq), last_seq - t_boot, len(running)))
    if running:
        last = max(running.values())
        print("last RSS Running at +%d ms after the power-on: %d ms after the last sequence report" % (
            last - t_boot, last - last_seq))
        not_back = [k for k in left if k not in running]
        if not_back:
            print("NOT back to Running: %d (%s)" % (len(not_back), " ".join(sorted(not_back)[:5])))
    return 0


def procs(pidfile, leader):
    rss = {}
    cpu = {}
    tck = os.sysconf("SC_CLK_TCK")
    for line in open(pidfile):
        node, pid = line.split()
        try:
            st = open("/proc/%s/status" % pid).read()
            stat = open("/proc/%s/stat" % pid).read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        rss[node] = int(re.search(r"VmRSS:\s+(\d+)", st).group(1)) / 1024.0
        cpu[node] = (int(stat[11]) + int(stat[12])) / tck
    others = sorted(v for n, v in rss.items() if n != leader)
    if others:
        print("agents' VmRSS: min %.1f MB, median %.1f MB, max %.1f MB (%d agents); all agents together %.0f MB" % (
            others[0], statistics.median(others), others[-1], len(others), sum(others)))
        oc = sorted(v for n, v in cpu.items() if n != leader)
        print("agents' CPU since start: median %.2f s, max %.2f s" % (statistics.median(oc), oc[-1]))
    if leader in rss:
        print("leader (%s): VmRSS %.1f MB, CPU since start %.2f s" % (leader, rss[leader], cpu[leader]))
    print("CPU %s %.2f" % (leader, cpu.get(leader, 0)))


def listen_ports(pid):
    inodes = set()
    for fd in os.listdir("/proc/%s/fd" % pid):
        try:
            m = re.match(r"socket:\[(\d+)\]", os.readlink("/proc/%s/fd/%s" % (pid, fd)))
        except OSError:
            continue
        if m:
            inodes.add(m.group(1))
    ports = []
    for table in ("tcp", "tcp6"):
        for line in open("/proc/%s/net/%s" % (pid, table)).readlines()[1:]:
            f = line.split()
            if f[3] == "0A" and f[9] in inodes:  # LISTEN
                ports.append(int(f[1].rsplit(":", 1)[1], 16))
    return ports


def probes(pidfile):
    total = Counter()
    probing = unread = 0
    for line in open(pidfile):
        _, pid = line.split()
        got = None
        try:
            for port in listen_ports(pid):
                try:
                    got = Counter()
                    for name, _, v in parse(fetch("http://127.0.0.1:%d/metrics" % port)):
                        got[name] += v
                    break
                except OSError:
                    got = None
        except OSError:
            pass
        if got is None:
            unread += 1
            continue
        n = got.get("rssd_failsafe_probes_total", 0)
        total["probes"] += n
        total["conns"] += got.get("rssd_failsafe_probe_connections_total", 0)
        probing += n > 0
    print("failsafe probes since start, all rssd: %d by %d agent(s), %d new connection(s)%s" % (
        total["probes"], probing, total["conns"], "; %d rssd unread" % unread if unread else ""))


def cpu_seconds(pid):
    stat = open("/proc/%s/stat" % pid).read().rsplit(")", 1)[1].split()
    return (int(stat[11]) + int(stat[12])) / os.sysconf("SC_CLK_TCK")


def cpu(out, pidfile, apiserver, etcd):
    """CPU seconds so far: the machine's busy time (all cores), the API server, etcd, all rssd together."""
    f = [int(x) for x in open("/proc/stat").readline().split()[1:]]
    busy = (sum(f) - f[3] - f[4]) / os.sysconf("SC_CLK_TCK")  # less idle and iowait
    rssd = 0.0
    for line in open(pidfile):
        try:
            rssd += cpu_seconds(line.split()[1])
        except OSError:
            pass
    json.dump({"t": time.monotonic(), "busy": busy, "apiserver": cpu_seconds(apiserver),
               "etcd": cpu_seconds(etcd), "rssd": rssd}, open(out, "w"))


def cpu_window(a, b):
    a, b = json.load(open(a)), json.load(open(b))
    dt = b["t"] - a["t"]
    print("CPU in the window (cores of %d): machine busy %.2f, apiserver %.2f, etcd %.2f, all rssd %.2f" % (
        os.cpu_count(), *((b[k] - a[k]) / dt for k in ("busy", "apiserver", "etcd", "rssd"))))


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "snap":
        snap(sys.argv[2], sys.argv[3], sys.argv[4])
    elif cmd == "delta":
        delta(sys.argv[2], sys.argv[3])
    elif cmd == "audit":
        audit(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5]), sys.argv[6])
    elif cmd == "audit-window":  # LOG SNAP_A SNAP_B: rssd's requests between two snapshots' times
        ta, tb = json.load(open(sys.argv[3]))["t"], json.load(open(sys.argv[4]))["t"]
        audit(sys.argv[2], 0, os.path.getsize(sys.argv[2]), tb - ta, "auto", ta, tb)
    elif cmd == "lights":
        sys.exit(lights(sys.argv[2], int(sys.argv[3])))
    elif cmd == "procs":
        procs(sys.argv[2], sys.argv[3])
    elif cmd == "probes":
        probes(sys.argv[2])
    elif cmd == "cpu":
        cpu(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5])
    elif cmd == "cpu-window":
        cpu_window(sys.argv[2], sys.argv[3])
    else:
        sys.exit("unknown command %s" % cmd)
