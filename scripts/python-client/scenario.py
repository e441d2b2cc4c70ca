"""
A backend in Python with a client generated from paysaga's OpenAPI document (openapi-python-client):
it registers where its events go, takes a card payment, reads it until it is final, and verifies the
event paysaga signs (Paysaga-Signature: t=<unix>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>, as
api/README.md documents it). Run by scripts/python-client/run.js; prints one JSON line, never card data.
"""

import hashlib
import hmac
import json
import os
import threading
import time
from http.server import BaseHTTPRequestHandler, HTTPServer

from paysaga_client import AuthenticatedClient
from paysaga_client.api.events import create_event_endpoint, delete_event_endpoint
from paysaga_client.api.sessions import create_checkout, get_session
from paysaga_client.models import ApiError, CardCheckoutRequest, EventEndpointRequest, Session

TOLERANCE_SEC = 300


def verify(raw: bytes, header: str, secret: str) -> dict:
    """The event, when `header` signs `raw` with `secret` within the tolerance; ValueError otherwise."""
    parts = [p.split("=", 1) for p in header.split(",") if "=" in p]
    stamps = [v for k, v in parts if k.strip() == "t"]
    signatures = [v.strip().lower() for k, v in parts if k.strip() == "v1"]
    if len(stamps) != 1 or not stamps[0].strip().isdigit() or not signatures:
        raise ValueError("bad_header")
    t = int(stamps[0])
    expected = hmac.new(secret.encode(), f"{t}.".encode() + raw, hashlib.sha256).hexdigest()
    if not any(hmac.compare_digest(expected, s) for s in signatures):
        raise ValueError("no_matching_signature")
    if abs(time.time() - t) > TOLERANCE_SEC:
        raise ValueError("outside_tolerance")
    return json.loads(raw)


verified: list = []
secret = {"value": ""}


class Receiver(BaseHTTPRequestHandler):
    def do_POST(self):  # noqa: N802 (the http.server name)
        raw = self.rfile.read(int(self.headers.get("content-length", "0")))
        try:
            verified.append(verify(raw, self.headers.get("paysaga-signature", ""), secret["value"]))
            self.send_response(200)
        except ValueError:
            self.send_response(400)
        self.end_headers()

    def log_message(self, *args):  # quiet
        pass


def main() -> None:
    server = HTTPServer(("127.0.0.1", 0), Receiver)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    client = AuthenticatedClient(base_url=os.environ["PAYSAGA_URL"], token=os.environ["PAYSAGA_TOKEN"])
    client = client.with_timeout(__import__("httpx").Timeout(40.0))

    endpoint = create_event_endpoint.sync(
        client=client,
        body=EventEndpointRequest.from_dict(
            {
                "url": f"http://127.0.0.1:{server.server_port}/paysaga-events",
                "events": ["session.succeeded"],
                "description": "generated Python client",
            }
        ),
    )
    if isinstance(endpoint, ApiError) or endpoint is None:
        raise SystemExit(f"event endpoint not created: {endpoint}")
    secret["value"] = endpoint.secret

    reference = f"py-{int(time.time() * 1000)}"
    created = create_checkout.sync(
        client=client,
        wait=10_000,
        body=CardCheckoutRequest.from_dict(
            {
                "method": "card",
                "reference": reference,
                "amount": {"amount": 4_200, "currency": "rub"},
                "card": {
                    "card_number": os.environ["TEST_CARD_NUMBER"],
                    "card_exp_month": "12",
                    "card_exp_year": "30",
                    "card_code": "123",
                },
                "customer": {"user_id": "python-client"},
            }
        ),
    )
    if not isinstance(created, Session):
        raise SystemExit(f"checkout not created: {created}")

    session = created
    deadline = time.time() + 90
    while not session.final and time.time() < deadline:
        read = get_session.sync(client=client, id=session.session_id, wait=10_000, after=session.version)
        if isinstance(read, Session):
            session = read
    while not any(e.get("session_id") == session.session_id for e in verified) and time.time() < deadline:
        time.sleep(0.2)
    event = next((e for e in verified if e.get("session_id") == session.session_id), None)

    try:
        verify(b'{"forged":true}', f"t={int(time.time())},v1={'0' * 64}", secret["value"])
        forged = "accepted"
    except ValueError as err:
        forged = str(err)

    delete_event_endpoint.sync(client=client, id=endpoint.id)
    server.shutdown()
    print(
        json.dumps(
            {
                "sessionId": session.session_id,
                "reference": session.reference,
                "phase": session.phase.value,
                "final": session.final,
                "captured": session.totals.captured,
                "model": type(session).__name__,
                "event": event and {"type": event["type"], "sessionId": event["session_id"]},
                "forged": forged,
            }
        )
    )


if __name__ == "__main__":
    main()
