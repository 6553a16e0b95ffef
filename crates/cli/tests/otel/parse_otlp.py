"""Parses OTLP JSON files with the official OpenTelemetry protobuf messages.

Each argument is a file written by `agentlog export --to otel`. It is parsed
strictly (no unknown field) into opentelemetry.proto ExportTraceServiceRequest
with google.protobuf.json_format, and checked against the GenAI semantic
conventions' shape: 16-byte trace ids and 8-byte span ids in hex (as OTLP
JSON writes them, where the plain protobuf JSON mapping has base64), every
parent in the trace, the operation name on every span, the messages as JSON in the
conventions' message schema. Prints one JSON object per file: the spans by
operation and the token sums. Exits 1 at the first file that fails, naming it.
"""

import base64
import json
import re
import sys

from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest


def value(v):
    kind = v.WhichOneof("value")
    if kind == "array_value":
        return [value(x) for x in v.array_value.values]
    return getattr(v, kind) if kind else None


def otlp_id(raw, size):
    """An id as OTLP JSON writes it: hex, where the protobuf JSON mapping
    has base64 (json_format reads the hex digits as base64)."""
    text = base64.b64encode(raw).decode("ascii")
    assert re.fullmatch("[0-9a-f]{%d}" % (2 * size), text), "not a %d-byte hex id: %r" % (size, text)
    return bytes.fromhex(text)


def check(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    req = json_format.Parse(text, ExportTraceServiceRequest(), ignore_unknown_fields=False)
    out = {"file": path, "traces": set(), "spans": 0, "ops": {}, "input_tokens": 0, "output_tokens": 0}
    for rs in req.resource_spans:
        attrs = {a.key: value(a.value) for a in rs.resource.attributes}
        assert attrs.get("service.name"), "no service.name"
        for ss in rs.scope_spans:
            ids = {otlp_id(s.span_id, 8) for s in ss.spans}
            for s in ss.spans:
                trace_id = otlp_id(s.trace_id, 16)
                assert not s.parent_span_id or otlp_id(s.parent_span_id, 8) in ids, "parent not in the trace: " + s.name
                assert s.end_time_unix_nano >= s.start_time_unix_nano, "ends before it starts: " + s.name
                a = {x.key: value(x.value) for x in s.attributes}
                op = a["gen_ai.operation.name"]
                out["ops"][op] = out["ops"].get(op, 0) + 1
                out["traces"].add(trace_id.hex())
                out["spans"] += 1
                if op == "chat":
                    assert s.name.startswith("chat"), s.name
                    for key in ("gen_ai.input.messages", "gen_ai.output.messages"):
                        msgs = json.loads(a[key])
                        assert isinstance(msgs, list), key
                        for m in msgs:
                            assert isinstance(m["role"], str) and isinstance(m["parts"], list), key
                            for p in m["parts"]:
                                assert isinstance(p["type"], str), key
                    assert json.loads(a["gen_ai.output.messages"])[0]["finish_reason"], "no finish_reason"
                    out["input_tokens"] += a.get("gen_ai.usage.input_tokens", 0)
                    out["output_tokens"] += a.get("gen_ai.usage.output_tokens", 0)
                elif op == "execute_tool":
                    assert s.name == "execute_tool " + a["gen_ai.tool.name"], s.name
                    json.loads(a["gen_ai.tool.call.arguments"])
                else:
                    assert op == "invoke_agent" and s.name.startswith("invoke_agent"), s.name
                    assert a["gen_ai.conversation.id"], "no conversation id"
    out["traces"] = len(out["traces"])
    return out


def main():
    for path in sys.argv[1:]:
        try:
            print(json.dumps(check(path)))
        except Exception as e:  # noqa: BLE001 - the test shows the reason
            print("%s: %s: %s" % (path, type(e).__name__, e), file=sys.stderr)
            sys.exit(1)


main()
