#!/usr/bin/env python3
"""Charts (SVG) and a Markdown table from the JSON that bench.py writes.

    report.py RESULTS.json [--charts DIR] [--markdown FILE]
"""

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from stats import mean, ratio, summary  # noqa: E402


def ms(value):
    return "—" if value is None else f"{value * 1000:.0f} ms"


def sec(value, digits=2):
    return "—" if value is None else f"{value:.{digits}f} s"


def mib(kib):
    return "—" if kib is None else f"{kib / 1024:.1f} MiB"


def times(value):
    return "—" if value is None else f"{value:.2f}×"


def latency_chart(path, title, samples, unit="s"):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    labels = [k for k, v in samples.items() if v]
    data = [[x * (1000 if unit == "ms" else 1) for x in samples[k]] for k in labels]
    fig, ax = plt.subplots(figsize=(7, 0.9 + 0.8 * len(labels)))
    try:
        ax.boxplot(data, orientation="horizontal", whis=(5, 95), showfliers=False, widths=0.5)
    except TypeError:  # matplotlib before 3.10
        ax.boxplot(data, vert=False, whis=(5, 95), showfliers=False, widths=0.5)
    for row, values in enumerate(data, start=1):
        jitter = [row + ((i * 37) % 21 - 10) / 70 for i in range(len(values))]
        ax.scatter(values, jitter, s=9, alpha=0.55)
    ax.set_yticks(range(1, len(labels) + 1))
    ax.set_yticklabels(labels)
    ax.set_xlabel(f"{unit} (box: quartiles and median; whiskers: 5th–95th percentile; dots: trials)")
    ax.set_title(title)
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def visibility_phases_table(phases):
    """Where a registration's time goes, from the listener next to the browser: each phase's mean (median; range)."""
    names = list(next(iter(phases.values())))
    lines = ["Where the time goes, from a listener next to the browser: mean (median; min–max) of the trials it saw whole. "
             "RFC 6762 §8.1 sets the first two phases: a random wait before the first probe, which Avahi draws from "
             "0–250 ms (mean 125 ms) and Herald from 20–120 ms (mean 70 ms) for a client's registration on a link up "
             "for two seconds, and 750 ms from the first probe to the first announcement. The listener and the browser each stamp a message "
             "when they read it, so the last phase can come out a fraction of a millisecond below zero.", "",
             "| registered through | trials | " + " | ".join(names) + " |",
             "|---|---:|" + "---:|" * len(names)]
    for label, split in phases.items():
        cells = [f"{mean(v) * 1000:.1f} ms ({summary(v)['median'] * 1000:.1f}; {min(v) * 1000:.1f}–{max(v) * 1000:.1f})"
                 if v else "—" for v in split.values()]
        lines.append(f"| {label} | {len(split[names[0]])} | " + " | ".join(cells) + " |")
    return lines + [""]


def bars_chart(path, title, groups, unit):
    """groups: {metric: {label: value}} drawn as grouped horizontal bars."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, len(groups), figsize=(3.3 * len(groups), 2.6))
    if len(groups) == 1:
        axes = [axes]
    for ax, (metric, values) in zip(axes, groups.items()):
        labels = list(values)
        numbers = [values[k] if values[k] is not None else 0 for k in labels]
        ax.barh(range(len(labels)), numbers, color=[f"C{i}" for i in range(len(labels))])
        ax.set_yticks(range(len(labels)))
        ax.set_yticklabels(labels, fontsize=8)
        ax.invert_yaxis()
        ax.set_title(metric, fontsize=9)
        ax.grid(axis="x", alpha=0.3)
        for i, v in enumerate(numbers):
            ax.text(v, i, f" {v:.2f}" if v < 100 else f" {v:.0f}", va="center", fontsize=7)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def latency_table(summaries, baseline):
    """Markdown rows: one browser per row, its median against `baseline` (Avahi's median)."""
    rows = ["| browser | median | p95 | min | max | median / Avahi |", "|---|---:|---:|---:|---:|---:|"]
    for k, v in summaries.items():
        rows.append(f"| {k} | {ms(v['median'])} | {ms(v['p95'])} | {ms(v['min'])} | {ms(v['max'])} | "
                    f"{times(ratio(v['median'], baseline))} |")
    return rows


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("results")
    parser.add_argument("--charts")
    parser.add_argument("--markdown")
    args = parser.parse_args()
    with open(args.results) as f:
        results = json.load(f)
    b = results["benchmarks"]
    lines = []
    charts = args.charts
    if charts:
        os.makedirs(charts, exist_ok=True)

    if "cold_browse" in b:
        r = b["cold_browse"]
        s = {k: summary(v) for k, v in r["samples"].items()}
        avahi = s["Avahi (avahi-browse)"]["median"]
        lines += ["### Cold browse latency", "",
                  f"{s['Avahi (avahi-browse)']['n']} trials each; fresh daemon per trial. Failures: "
                  + ", ".join(f"{k} {v}" for k, v in r["failures"].items()) + ".", "",
                  *latency_table(s, avahi), ""]
        if charts:
            latency_chart(f"{charts}/cold-browse.svg", "Cold browse: start of browse → first result",
                          r["samples"], "ms")
            lines += ["![cold browse latency](charts/cold-browse.svg)", ""]
        if r.get("avahi_advertiser"):
            p = {k: summary(v) for k, v in r["avahi_advertiser"]["samples"].items()}
            base = next((v["median"] for k, v in p.items() if k.startswith("Avahi")), None)
            lines += ["The same with an avahi-daemon advertiser (`avahi-publish`) in a third namespace, in the same trials:",
                      "", *latency_table(p, base), ""]

    if "time_to_visible" in b:
        r = b["time_to_visible"]
        s = {k: summary(v) for k, v in r["samples"].items()}
        avahi = next(v["median"] for k, v in s.items() if k.startswith("Avahi"))
        lines += ["### Time to visible", "",
                  "| registered through | n | median | p95 | min | max | median / Avahi |",
                  "|---|---:|---:|---:|---:|---:|---:|"]
        for k, v in s.items():
            lines.append(f"| {k} | {v['n']} of {r['trials']} | {ms(v['median'])} | {ms(v['p95'])} | "
                         f"{ms(v['min'])} | {ms(v['max'])} | {times(ratio(v['median'], avahi))} |")
        lines.append("")
        if r.get("phases"):
            lines += visibility_phases_table(r["phases"])
        if charts:
            latency_chart(f"{charts}/time-to-visible.svg",
                          "Time to visible: registration request → seen by a browser in another namespace",
                          r["samples"], "ms")
            lines += ["![time to visible](charts/time-to-visible.svg)", ""]

    if "scale" in b:
        r = b["scale"]
        runs = r["runs"]
        herald = next((x for x in runs if x["label"] == "Herald"), None)
        lines += ["### Scale", "",
                  f"{r['instances']} instances of {r['types']} types advertised by python-zeroconf in 4 namespaces.",
                  "", "| daemon | discovered | resolved | discover all | resolve all | daemon CPU | peak RSS | "
                  "CPU / Herald's |", "|---|---:|---:|---:|---:|---:|---:|---:|"]
        for x in runs:
            extra = f" (+ dbus-daemon {mib(x['dbus_rss_kib'])})" if "dbus_rss_kib" in x else ""
            lines.append(
                f"| {x['label']} | {x['discovered']} | {x['resolved']} | {sec(x['discover_s'])} | "
                f"{sec(x['resolve_s'])} | {x['cpu_s']:.2f} s | {mib(x['peak_rss_kib'])}{extra} | "
                f"{times(ratio(x['cpu_s'], herald and herald['cpu_s']))} |")
        lines.append("")
        if charts:
            bars_chart(f"{charts}/scale.svg", f"Scale: {r['instances']} instances of {r['types']} types", {
                "resolve all (s; 0 = never)": {x["label"]: x["resolve_s"] for x in runs},
                "daemon CPU (s)": {x["label"]: x["cpu_s"] for x in runs},
                "peak RSS (MiB)": {x["label"]: x["peak_rss_kib"] / 1024 for x in runs}}, "")
            lines += ["![scale](charts/scale.svg)", ""]

    if "footprint" in b:
        r = b["footprint"]
        lines += ["### Footprint", "",
                  f"Idle: 10 s after start. Loaded: after browsing and resolving {r['instances']} instances "
                  f"(about {3 * r['instances'] + 4:,} records: PTR, SRV, TXT each, plus the peers' A records), "
                  "10 s after the browsing clients were stopped: besides the records, it counts what a daemon keeps "
                  f"from serving {r['instances']:,} resolves (tables grown for the operations, Herald's audit log of "
                  "requests).",
                  "Avahi's default cache holds 4,096 entries, so it is full here and resolves only some instances.",
                  "Peak at start: the processes' peak RSS (VmHWM) at the idle reading.",
                  "", "| daemon | processes | peak at start | idle RSS | idle PSS | idle anonymous | loaded RSS | "
                  "loaded anonymous | bytes per record (estimate, anonymous) |",
                  "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for x in r["runs"]:
            records = min(x["resolved"], x["discovered"]) * 3 + 4
            if x["label"].startswith("Avahi"):
                # Avahi keeps what its cache holds (4,096 entries by default), resolved or not.
                records = min(x["discovered"] * 3 + 4, 4096)
            idle, loaded = x["idle"], x["loaded"]
            per = (loaded["anon_kib"] - idle["anon_kib"]) * 1024 / records if records > 4 else None
            extra = f" (+ dbus-daemon {mib(x['dbus_rss_kib'])})" if "dbus_rss_kib" in x else ""
            peak = mib(idle["peak_kib"]) if "peak_kib" in idle else "—"
            lines.append(f"| {x['label']} | {x['processes']} | {peak} | {mib(idle['rss_kib'])}{extra} | {mib(idle['pss_kib'])} | "
                         f"{mib(idle['anon_kib'])} | {mib(loaded['rss_kib'])} | {mib(loaded['anon_kib'])} | "
                         + (f"{per:.0f} ({records:,} records) |" if per is not None else "— |"))
        lines.append("")
        if r.get("passive"):
            lines += ["Cached records alone: both daemons run before the peers advertise, so the peers' announcements "
                      "fill their caches with no client asking anything. Avahi's cache stops at 4,096 entries.", "",
                      "| daemon | records cached | anonymous before | anonymous after | RSS before → after 3 s | "
                      "RSS settled (10 s) | bytes per record |",
                      "|---|---:|---:|---:|---:|---:|---:|"]
            for x in r["passive"]:
                records = x.get("records") or 4096
                grown = (x["cached"]["anon_kib"] - x["idle"]["anon_kib"]) * 1024
                shown = f"{records:,}" if x.get("records") else "4,096 (its limit)"
                settled = mib(x["settled"]["rss_kib"]) if "settled" in x else "—"
                lines.append(f"| {x['label']} | {shown} | {mib(x['idle']['anon_kib'])} | {mib(x['cached']['anon_kib'])} | "
                             f"{mib(x['idle']['rss_kib'])} → {mib(x['cached']['rss_kib'])} | {settled} | "
                             f"{grown / records:.0f} |")
            lines.append("")

    if "many_clients" in b:
        r = b["many_clients"]
        passes = r.get("passes") or [{"label": "—", "samples": r["samples"], "summary": r["summary"]}]
        lines += ["### Many clients (Herald only)", "",
                  f"{r['clients']} app-socket connections, each browsing; {r['rounds']} announcements per pass → "
                  f"{r['clients'] * r['rounds']:,} events per pass. RSS {mib(r['rss_before_kib'])} before the clients, "
                  f"{mib(r['rss_after_kib'])} with them: {r['bytes_per_client'] / 1024:.1f} KiB per client.", "",
                  "| CPUs | packet arrival → client event p50 | p99 | max |",
                  "|---|---:|---:|---:|"]
        for p in passes:
            s = p["summary"]
            lines.append(f"| {p['label']} | {s['median'] * 1000:.2f} ms | {s['p99'] * 1000:.2f} ms | "
                         f"{s['max'] * 1000:.2f} ms |")
        lines.append("")
        if charts:
            latency_chart(f"{charts}/many-clients.svg",
                          f"{r['clients']} clients: packet arrival → each client's event",
                          {p["label"]: p["samples"] for p in passes}, "ms")
            lines += ["![many clients](charts/many-clients.svg)", ""]

    if "storm" in b:
        r = b["storm"]
        lines += ["### Storm", "",
                  f"{r['rate']:,} useless responses/s for {r['seconds']} s from another namespace; "
                  "a browse of a real (never cached) service type starts every 2 s during the flood. "
                  f"The real services' advertiser, flooded too: {r.get('advertiser', 'python-zeroconf')}; what its "
                  "socket dropped is in the last column.", "",
                  "| daemon | flood sent | daemon CPU | of a core | peak RSS | socket drops | browses OK | "
                  "browse median | browse max | advertiser's drops |", "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for x in r["runs"]:
            ok = [v for v in x["browses"] if v is not None]
            s = summary(ok)
            lines.append(f"| {x['label']} | {x['sent']:,} ({x['send_rate']:,.0f}/s) | {x['cpu_s']:.1f} s | "
                         f"{100 * x['cpu_fraction']:.0f} % | {mib(x['peak_rss_kib'])} | {x['drops']:,} | "
                         f"{len(ok)}/{len(x['browses'])} | {sec(s['median'])} | {sec(s['max'])} | "
                         f"{x.get('advertiser_drops', 0):,} |")
        lines.append("")
        if charts:
            latency_chart(f"{charts}/storm-browses.svg", "Browses started during the flood: time to first result",
                          {x["label"]: [v for v in x["browses"] if v is not None] for x in r["runs"]}, "s")
            lines += ["![browses during the storm](charts/storm-browses.svg)", ""]

    loads = {k: v.get("load_at_start", {}).get("loadavg") for k, v in b.items()}
    lines += ["Load average (1/5/15 min) when each benchmark started: "
              + "; ".join(f"{k} {' '.join(v) if v else '?'}" for k, v in loads.items()) + ".", ""]
    text = "\n".join(lines)
    print(text)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
