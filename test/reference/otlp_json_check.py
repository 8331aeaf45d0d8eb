#!/usr/bin/env python3
"""Checks OTLP/JSON files against the OTLP protobuf JSON mapping, without the protobuf library.

The messages restate opentelemetry-proto by hand (open-telemetry/opentelemetry-proto, v1.x:
opentelemetry/proto/trace/v1/trace.proto, logs/v1/logs.proto, common/v1/common.proto,
resource/v1/resource.proto), field names in the lowerCamelCase the JSON mapping uses. Value
kinds follow the protobuf JSON mapping as OTLP/JSON narrows it
(opentelemetry-specification, specification/protocol/otlp.md, "JSON Protobuf Encoding"):
int64 and fixed64 as a decimal string or a number; enums as an integer (or their name);
trace and span ids as hex strings (not base64); unknown fields are ignored by receivers, so
they are allowed here, except inside AnyValue, which must hold exactly one of its kinds.
The deprecated instrumentationLibrarySpans / instrumentationLibrary (proto before v0.19) are
accepted. Prints "ok", or one line per problem and exits 1.
Run: python3 test/reference/otlp_json_check.py FILE.json|FILE.jsonl ..."""
import json, re, sys

INT64 = 'int64'
STR, BOOL, DOUBLE, UINT32, ENUM, HEXID = 'string', 'bool', 'double', 'uint32', 'enum', 'hexid'
ANY = 'AnyValue'

MESSAGES = {
    'TracesData': {'resourceSpans': ['ResourceSpans']},
    'LogsData': {'resourceLogs': ['ResourceLogs']},
    'ResourceSpans': {'resource': 'Resource', 'scopeSpans': ['ScopeSpans'], 'instrumentationLibrarySpans': ['ScopeSpans'], 'schemaUrl': STR},
    'ResourceLogs': {'resource': 'Resource', 'scopeLogs': ['ScopeLogs'], 'schemaUrl': STR},
    'Resource': {'attributes': ['KeyValue'], 'droppedAttributesCount': UINT32},
    'ScopeSpans': {'scope': 'InstrumentationScope', 'instrumentationLibrary': 'InstrumentationScope', 'spans': ['Span'], 'schemaUrl': STR},
    'ScopeLogs': {'scope': 'InstrumentationScope', 'logRecords': ['LogRecord'], 'schemaUrl': STR},
    'InstrumentationScope': {'name': STR, 'version': STR, 'attributes': ['KeyValue'], 'droppedAttributesCount': UINT32},
    'Span': {'traceId': HEXID, 'spanId': HEXID, 'traceState': STR, 'parentSpanId': HEXID, 'flags': UINT32, 'name': STR, 'kind': ENUM,
             'startTimeUnixNano': INT64, 'endTimeUnixNano': INT64, 'attributes': ['KeyValue'], 'droppedAttributesCount': UINT32,
             'events': ['Event'], 'droppedEventsCount': UINT32, 'links': ['Link'], 'droppedLinksCount': UINT32, 'status': 'Status'},
    'Event': {'timeUnixNano': INT64, 'name': STR, 'attributes': ['KeyValue'], 'droppedAttributesCount': UINT32},
    'Link': {'traceId': HEXID, 'spanId': HEXID, 'traceState': STR, 'attributes': ['KeyValue'], 'droppedAttributesCount': UINT32, 'flags': UINT32},
    'Status': {'message': STR, 'code': ENUM},
    'LogRecord': {'timeUnixNano': INT64, 'observedTimeUnixNano': INT64, 'severityNumber': ENUM, 'severityText': STR, 'body': ANY,
                  'attributes': ['KeyValue'], 'droppedAttributesCount': UINT32, 'flags': UINT32, 'traceId': HEXID, 'spanId': HEXID, 'eventName': STR},
    'KeyValue': {'key': STR, 'value': ANY},
}


def scalar(kind, v):
    if kind == STR:
        return isinstance(v, str)
    if kind == BOOL:
        return isinstance(v, bool)
    if kind == DOUBLE:
        return (isinstance(v, (int, float)) and not isinstance(v, bool)) or v in ('NaN', 'Infinity', '-Infinity')
    if kind in (INT64, UINT32):
        return (isinstance(v, int) and not isinstance(v, bool)) or (isinstance(v, str) and re.fullmatch(r'-?\d+', v) is not None)
    if kind == ENUM:
        return (isinstance(v, int) and not isinstance(v, bool)) or (isinstance(v, str) and re.fullmatch(r'[A-Z_0-9]+', v) is not None)
    if kind == HEXID:
        return isinstance(v, str) and (v == '' or re.fullmatch(r'[0-9a-fA-F]+', v) is not None)
    raise ValueError(kind)


def any_value(where, v, out):
    if not isinstance(v, dict):
        out.append(f'{where}: AnyValue is not an object')
        return
    kinds = [k for k in ('stringValue', 'boolValue', 'intValue', 'doubleValue', 'arrayValue', 'kvlistValue', 'bytesValue') if k in v]
    if len(kinds) > 1 or set(v) - set(kinds):
        out.append(f'{where}: AnyValue holds {sorted(v)}')
        return
    if not kinds:
        return  # an empty AnyValue is allowed
    k = kinds[0]
    x = v[k]
    ok = {'stringValue': scalar(STR, x), 'boolValue': scalar(BOOL, x), 'intValue': scalar(INT64, x), 'doubleValue': scalar(DOUBLE, x), 'bytesValue': isinstance(x, str)}.get(k)
    if k == 'arrayValue':
        for j, e in enumerate((x or {}).get('values', [])):
            any_value(f'{where}.arrayValue.values[{j}]', e, out)
        return
    if k == 'kvlistValue':
        for j, e in enumerate((x or {}).get('values', [])):
            message(f'{where}.kvlistValue.values[{j}]', 'KeyValue', e, out)
        return
    if not ok:
        out.append(f'{where}.{k}: {x!r} is not a {k[:-5]}')


def message(where, name, v, out):
    if not isinstance(v, dict):
        out.append(f'{where}: {name} is not an object')
        return
    for field, kind in MESSAGES[name].items():
        if field not in v or v[field] is None:
            continue
        x = v[field]
        if isinstance(kind, list):
            if not isinstance(x, list):
                out.append(f'{where}.{field}: not a list')
                continue
            for j, e in enumerate(x):
                message(f'{where}.{field}[{j}]', kind[0], e, out)
        elif kind == ANY:
            any_value(f'{where}.{field}', x, out)
        elif kind in MESSAGES:
            message(f'{where}.{field}', kind, x, out)
        elif not scalar(kind, x):
            out.append(f'{where}.{field}: {x!r} is not a {kind}')


def check(path):
    out = []
    text = open(path, encoding='utf-8').read()
    values = [json.loads(l) for l in text.splitlines() if l.strip()] if path.endswith('.jsonl') else [json.loads(text)]
    for n, v in enumerate(values):
        where = f'{path}:{n + 1}' if path.endswith('.jsonl') else path
        if 'resourceSpans' in v:
            message(where, 'TracesData', v, out)
        elif 'resourceLogs' in v:
            message(where, 'LogsData', v, out)
        elif 'scopeSpans' in v:
            message(where, 'ResourceSpans', v, out)
        else:
            out.append(f'{where}: neither TracesData nor LogsData')
    return out


if __name__ == '__main__':
    problems = [p for f in sys.argv[1:] for p in check(f)]
    print('\n'.join(problems) if problems else 'ok')
    sys.exit(1 if problems else 0)
