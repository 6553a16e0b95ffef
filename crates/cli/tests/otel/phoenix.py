"""Talks to a running Arize Phoenix through its REST API (/v1).

  phoenix.py wait URL SECONDS   waits until Phoenix answers /healthz
  phoenix.py dump URL FILE      writes every trace of the default project with
                                its spans (kinds, Phoenix's own token counts)
                                and every span with its attributes to FILE
"""

import json
import sys
import time
import urllib.error
import urllib.parse
import urllib.request


def get(url):
    with urllib.request.urlopen(url, timeout=60) as r:
        return json.loads(r.read().decode("utf-8"))


def pages(url, params):
    cursor = None
    while True:
        q = dict(params)
        if cursor:
            q["cursor"] = cursor
        body = get(url + "?" + urllib.parse.urlencode(q))
        yield from body["data"]
        cursor = body.get("next_cursor")
        if not cursor:
            return


def wait(base, seconds):
    deadline = time.time() + seconds
    last = None
    while time.time() < deadline:
        try:
            with urllib.request.urlopen(base + "/healthz", timeout=10) as r:
                if r.status == 200:
                    return
        except (urllib.error.URLError, OSError) as e:
            last = e
        time.sleep(0.5)
    print("Phoenix did not answer /healthz in %ss: %s" % (seconds, last), file=sys.stderr)
    sys.exit(1)


def dump(base, path):
    try:
        traces = list(pages(base + "/v1/projects/default/traces", {"include_spans": "true", "limit": 1000}))
        spans = list(pages(base + "/v1/projects/default/spans", {"limit": 1000}))
    except urllib.error.HTTPError as e:
        if e.code == 404:
            traces, spans = [], []
        else:
            raise
    out = {
        "traces": [
            {
                "trace_id": t["trace_id"],
                "prompt": t["token_count_prompt"],
                "completion": t["token_count_completion"],
                "kinds": [s["span_kind"] for s in (t.get("spans") or [])],
                "names": [s["name"] for s in (t.get("spans") or [])],
            }
            for t in traces
        ],
        "spans": spans,
    }
    with open(path, "w", encoding="utf-8") as f:
        json.dump(out, f)


if sys.argv[1] == "wait":
    wait(sys.argv[2], float(sys.argv[3]))
else:
    dump(sys.argv[2], sys.argv[3])
