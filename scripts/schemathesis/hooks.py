"""
Schemathesis hooks for paysaga's API (scripts/schemathesis/run.js loads them with SCHEMATHESIS_HOOKS).

The OpenAPI document states every rule of a request that OpenAPI 3.1 can state (api/schemas.ts
generates it from the same zod schemas that validate; rules relating query parameters are stated on one
object parameter, api/plugins/openapi.ts). These hooks hold only rules the document states in words
that a schema cannot: a body field related to a header, times relative to the clock, rules across the
items of an array or between two numbers, bounds in bytes and depth, a subscription anchor's offset
(its time zone's at that instant), and the provider's data (its banks) or the server's (a page's
cursor). They drop (or, for a case generated to fit the document,
repair) a generated request that breaks one, so that schemathesis neither counts a refusal of it as
"schema-valid request rejected" nor its acceptance as "schema-violating request accepted". Nothing else
is filtered: every other failure is one a reader of the document could not have predicted.
"""
import datetime
import json
import re
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import schemathesis


@schemathesis.hook
def filter_case(context, case):
    body = case.body if isinstance(case.body, dict) else None
    headers = case.headers or {}

    # No object in a JSON body may have a `__proto__` key, at any depth (api/plugins/json-body.ts): the
    # document says so in its description and with each object schema's `propertyNames`, but an object
    # nested in a free-form value has no schema of its own to say it on.
    if _has_proto_key(case.body):
        return False
    key = next((v for k, v in headers.items() if k.lower() == "idempotency-key"), None)

    # A creating request is named by the body's `reference` or by the Idempotency-Key header (api/http.ts
    # withReference): one of the two is required, and both must agree. The rule spans the body and a
    # header, which one JSON Schema cannot relate.
    # A missing body counts as `{}` (api/http.ts objectBody), so it needs the header.
    if (body is not None or case.body is None or _is_not_set(case.body)) and any(
        p["name"].lower() == "idempotency-key" for p in _header_params(case)
    ):
        reference = (body or {}).get("reference")
        if reference is None and key is None:
            return False
        if reference is not None and key is not None and reference != key:
            return False

    # Free-form JSON (extraInfo, customer, participant, payee, pass-through bodies) is bounded in bytes and
    # depth (common/json-bounds.ts), stated as `x-max-json-bytes` / `x-max-depth`: JSON Schema has no
    # keyword for either. A generated value that may break them is dropped (measured with every
    # non-ASCII character escaped, which is never smaller than the server's UTF-8 count).
    # The body's schema, its named components resolved once for both checks below.
    schema = _body_schema(case) if body is not None else {}
    if body is not None and _breaks_json_bounds(body, schema):
        return False

    # A batch of payouts (client/inputs.ts payoutBatchInput) is in one currency, each payout's reference
    # used once: rules across the items of an array, which JSON Schema cannot state. Each payout's own
    # customer and participant are bounded like the body's.
    payouts = body.get("payouts") if body is not None else None
    if isinstance(payouts, list) and not _batch_ok(payouts, schema):
        return False

    # A subscription's times are relative to the clock, and its anchor's offset is its time zone's at that
    # instant (client/subscription-inputs.ts; each field's description says so): map_case moves a time the
    # document allows into its window and writes the anchor in its zone. filter_case runs first, so it
    # drops only a case whose times stay wrong once moved.
    if body is not None and not _subscription_times_ok(_with_subscription_times(body)):
        return False

    # A partial finalization may not exceed the payment (client/inputs.ts partialWithinAmount): a
    # comparison of two fields of the body, which JSON Schema cannot express.
    if body is not None:
        settings = body.get("settings")
        finalization = settings.get("finalization") if isinstance(settings, dict) else None
        amount = body.get("amount")
        if (
            isinstance(finalization, dict)
            and finalization.get("mode") == "auto_partial"
            and isinstance(finalization.get("amount"), (int, float))
            and isinstance(amount, dict)
            and isinstance(amount.get("amount"), (int, float))
            and finalization["amount"] > amount["amount"]
        ):
            return False
    return True


def _mode(case):
    """How schemathesis generated the case: "positive" (fits the document), "negative", or None."""
    mode = getattr(getattr(getattr(case, "_meta", None), "generation", None), "mode", None)
    return None if mode is None else str(getattr(mode, "value", mode))


def _query_rules(query):
    """The query without what only the server can make."""
    query = dict(query)
    # A search's `cursor` is the `next` of an earlier page of the same search (client/search.ts binds it
    # to its filters; the parameter's description says so): only the server can make a valid one.
    query.pop("cursor", None)
    return query


# A bank the provider knows (the sandbox's first FPS bank, sandbox/banks.ts; GET /v1/banks lists them).
KNOWN_BANK = "100000000111"


@schemathesis.hook
def map_case(context, case):
    # A case meant to fit the document sends no made-up cursor (_query_rules).
    if _mode(case) == "positive" and isinstance(case.query, dict):
        case.query = _query_rules(case.query)
    # Which banks exist is the provider's data, not the schema's: a bank it does not know is a 400 naming
    # bankId. Generated bank ids (strings, where the schema wants one) become a bank it knows.
    if isinstance(case.body, dict):
        case.body = _with_known_bank(case.body)
        # Times relative to the clock (see filter_case): a generated time the document allows is moved into
        # the window the server asks for, rather than dropped. Dropping them would leave too few
        # subscription cases ("filter too much"): a time picked from 2000-2099 lies in a two-year window
        # about one time in fifty.
        case.body = _with_subscription_times(case.body)
    return case


# What the document allows for these times (client/inputs.ts): an ISO 8601 date-time with its offset, in
# the years 2000-2099. Only such values are moved: a value that breaks the document stays as generated,
# so that a schema-violating case stays one.
DOCUMENT_TIME = re.compile(r"^20\d\d-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:\d\d)$")


def _document_time(value, max_length):
    return isinstance(value, str) and len(value) <= max_length and DOCUMENT_TIME.match(value) is not None


def _now_ms():
    return datetime.datetime.now(datetime.timezone.utc).timestamp() * 1000


def _iso_ms(ms):
    at = datetime.datetime.fromtimestamp(ms / 1000, datetime.timezone.utc)
    return at.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _into(value, low_ms, high_ms):
    """A time the document allows (an ISO time of 2000-2099), moved into [low, high] if it lies outside."""
    at = _instant(value) if _document_time(value, 40) else None
    if at is None:
        return value
    ms = at.timestamp() * 1000
    return value if low_ms <= ms <= high_ms else _iso_ms(low_ms + ms % (high_ms - low_ms))


def _in_zone(value, zone):
    """An ISO time written with its zone's offset at that instant (the same instant)."""
    at = _instant(value) if _document_time(value, 40) else None
    if at is None or not isinstance(zone, str):
        return value
    try:
        local = at.astimezone(ZoneInfo(zone))
    except (ZoneInfoNotFoundError, ValueError):
        return value
    return local.isoformat(timespec="milliseconds")


def _with_subscription_times(body):
    """The subscription times of a body (create, change, pause) moved where the clock wants them."""
    now = _now_ms()
    ahead = now + 365 * DAY_MS  # inside "at most two years ahead"
    body = dict(body)
    if "trialEnd" in body:
        body["trialEnd"] = _into(body["trialEnd"], now - 365 * DAY_MS, ahead)
    if "endAt" in body:
        body["endAt"] = _into(body["endAt"], now + DAY_MS, ahead)
    if "resumeAt" in body:
        body["resumeAt"] = _into(body["resumeAt"], now + DAY_MS, ahead)
    schedule = body.get("schedule")
    if isinstance(schedule, dict) and "anchor" in schedule:
        anchor = _into(schedule["anchor"], now - 365 * DAY_MS, ahead)
        body["schedule"] = {**schedule, "anchor": _in_zone(anchor, schedule.get("timeZone", "UTC"))}
    return body


def _subscription_times_ok(body):
    """What the clock and the zone ask of a body's subscription times (on values the document allows)."""
    now = _now_ms()
    ahead = now + 2 * 366 * DAY_MS - MARGIN_MS

    def ms(value):
        at = _instant(value) if _document_time(value, 40) else None
        return None if at is None else at.timestamp() * 1000

    for key, low in (("trialEnd", None), ("endAt", now + MARGIN_MS), ("resumeAt", now + MARGIN_MS)):
        t = ms(body.get(key))
        if t is not None and (t > ahead or (low is not None and t < low)):
            return False
    schedule = body.get("schedule")
    anchor = schedule.get("anchor") if isinstance(schedule, dict) else None
    t = ms(anchor)
    if t is not None and (t > ahead or _in_zone(anchor, schedule.get("timeZone", "UTC")) != anchor):
        return False
    return True


def _with_known_bank(value):
    if isinstance(value, dict):
        return {
            k: KNOWN_BANK if k == "bankId" and isinstance(v, str) and v else _with_known_bank(v)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_with_known_bank(v) for v in value]
    return value


def _body_schema(case):
    definition = getattr(case.operation, "definition", None)
    raw = getattr(definition, "raw", None) or {}
    content = (raw.get("requestBody") or {}).get("content") or {}
    # Request bodies are named components (api/plugins/openapi.ts): read them from the whole document.
    document = getattr(getattr(case.operation, "schema", None), "raw_schema", None) or {}
    return _resolved((content.get("application/json") or {}).get("schema") or {}, document)


def _resolved(schema, document, depth=0):
    """The schema with every `#/components/schemas/...` reference replaced by what it names."""
    if depth > 20:
        return schema
    if isinstance(schema, list):
        return [_resolved(v, document, depth + 1) for v in schema]
    if not isinstance(schema, dict):
        return schema
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/components/schemas/"):
        named = ((document.get("components") or {}).get("schemas") or {}).get(ref.rsplit("/", 1)[-1])
        return _resolved(named or {}, document, depth + 1)
    return {k: _resolved(v, document, depth + 1) for k, v in schema.items()}


def _bounds(schema, out):
    """Field name (None: the whole body) -> (bytes, depth), from every branch of the body's schema."""
    if not isinstance(schema, dict):
        return out
    if "x-max-json-bytes" in schema and None not in out:
        out[None] = (schema["x-max-json-bytes"], schema.get("x-max-depth"))
    for key in ("oneOf", "anyOf", "allOf"):
        for branch in schema.get(key) or []:
            _bounds(branch, out)
    for name, prop in (schema.get("properties") or {}).items():
        if isinstance(prop, dict):
            for candidate in [prop, *(prop.get("anyOf") or []), *(prop.get("allOf") or [])]:
                if isinstance(candidate, dict) and "x-max-json-bytes" in candidate:
                    out[name] = (candidate["x-max-json-bytes"], candidate.get("x-max-depth"))
    return out


def _batch_ok(payouts, schema):
    items = [p for p in payouts if isinstance(p, dict)]
    currencies = {
        str(p["amount"].get("currency")).lower()
        for p in items
        if isinstance(p.get("amount"), dict) and isinstance(p["amount"].get("currency"), str)
    }
    references = [p.get("reference") for p in items if isinstance(p.get("reference"), str)]
    if len(currencies) > 1 or len(references) != len(set(references)):
        return False
    item_schemas = [
        (branch.get("properties") or {}).get("payouts", {}).get("items")
        for branch in [schema, *(schema.get("oneOf") or [])]
        if isinstance(branch, dict)
    ]
    item_schema = next((s for s in item_schemas if isinstance(s, dict)), {})
    return not any(_breaks_json_bounds(p, item_schema) for p in items)


def _has_proto_key(value):
    if isinstance(value, dict):
        return "__proto__" in value or any(_has_proto_key(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_proto_key(v) for v in value)
    return False


def _depth(value):
    if isinstance(value, dict):
        return 1 + max((_depth(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((_depth(v) for v in value), default=0)
    return 0


def _breaks_json_bounds(body, schema):
    for name, (max_bytes, max_depth) in _bounds(schema, {}).items():
        value = body if name is None else body.get(name)
        if value is None:
            continue
        if len(json.dumps(value, ensure_ascii=True, separators=(",", ":"))) > max_bytes:
            return True
        if max_depth is not None and _depth(value) > max_depth:
            return True
    return False


DAY_MS = 24 * 3_600_000
MARGIN_MS = 10 * 60_000


def _instant(value):
    """An ISO time or date as an aware datetime (a date is UTC midnight); None when it is neither."""
    if not isinstance(value, str):
        return None
    try:
        parsed = datetime.datetime.fromisoformat(value.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=datetime.timezone.utc)


def _header_params(case):
    definition = getattr(case.operation, "definition", None)
    raw = getattr(definition, "raw", None) or {}
    return [p for p in raw.get("parameters", []) if isinstance(p, dict) and p.get("in") == "header"]


def _is_not_set(value):
    # schemathesis marks a body it leaves out with its sentinel schemathesis.core.NOT_SET (a NotSet).
    return type(value).__name__ == "NotSet"
