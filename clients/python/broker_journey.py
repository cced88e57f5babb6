"""A broker's journey through the Python client generated from
`/v1/openapi.json` (openapi-python-client), against a running service:
ping -> webhook endpoint -> group -> census -> quote -> enrollment ->
elections -> account, then every delivery the local receiver got is
verified with the `standardwebhooks` package.

Usage: broker_journey.py BASE_URL API_KEY
Exit 0 when every step answered as the contract says; otherwise the
failing step is printed and the exit is 1.
"""

import sys
import threading
import time
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, HTTPServer

from standardwebhooks import Webhook

from partner_benefits_pricing_and_enrollment_api_client import AuthenticatedClient
from partner_benefits_pricing_and_enrollment_api_client.api.account import get_account
from partner_benefits_pricing_and_enrollment_api_client.api.census import replace_census
from partner_benefits_pricing_and_enrollment_api_client.api.elections import submit_elections
from partner_benefits_pricing_and_enrollment_api_client.api.enrollments import create_enrollment
from partner_benefits_pricing_and_enrollment_api_client.api.groups import create_group
from partner_benefits_pricing_and_enrollment_api_client.api.integration import ping
from partner_benefits_pricing_and_enrollment_api_client.api.quotes import create_quote
from partner_benefits_pricing_and_enrollment_api_client.api.webhooks import put_webhook
from partner_benefits_pricing_and_enrollment_api_client.models import (
    AccountOut,
    CensusInput,
    CensusResult,
    ElectionsInput,
    ElectionsOut,
    EnrollmentInput,
    EnrollmentOut,
    GroupInput,
    GroupOut,
    Ping,
    QuoteInput,
    QuoteOut,
    WebhookIn,
    WebhookOut,
)


def expect(step, response, status, model):
    """The parsed answer of `step`, which must be `status` and a `model`."""
    if response.status_code != status or not isinstance(response.parsed, model):
        body = response.content.decode("utf-8", "replace")
        sys.exit(f"{step}: expected {status} {model.__name__}, got {int(response.status_code)}: {body}")
    print(f"ok  {step}: {int(response.status_code)}")
    return response.parsed


class Receiver(BaseHTTPRequestHandler):
    """A webhook endpoint on this machine: keeps every delivery."""

    deliveries = []

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("content-length", "0")))
        Receiver.deliveries.append((dict(self.headers.items()), body))
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args):
        pass


def main(base_url, key):
    receiver = HTTPServer(("127.0.0.1", 0), Receiver)
    threading.Thread(target=receiver.serve_forever, daemon=True).start()
    client = AuthenticatedClient(base_url=base_url, token=key, raise_on_unexpected_status=False)

    pinged = expect("ping", ping.sync_detailed(client=client), HTTPStatus.OK, Ping)
    assert pinged.mode == "test", pinged

    endpoint = expect(
        "put webhook",
        put_webhook.sync_detailed(
            client=client,
            body=WebhookIn.from_dict({"url": f"http://127.0.0.1:{receiver.server_port}/hooks"}),
        ),
        HTTPStatus.OK,
        WebhookOut,
    )
    secret = endpoint.secret

    group = expect(
        "create group",
        create_group.sync_detailed(
            client=client,
            body=GroupInput.from_dict(
                {
                    "company_name": "Acme Manufacturing",
                    "domain": "acme-sdk.example",
                    "external_id": "crm-sdk-1",
                    "address": {"line1": "1 Main St", "city": "Chicago", "state": "IL", "zip": "60601"},
                }
            ),
        ),
        HTTPStatus.CREATED,
        GroupOut,
    )

    members = CensusInput.from_dict(
        {
            "members": [
                {"external_id": "E-1", "first_name": "Ana", "last_name": "Diaz",
                 "email": "ana@acme-sdk.example", "dob": "1988-04-12", "zip": "60601"},
                {"external_id": "E-2", "first_name": "Ben", "last_name": "Okafor",
                 "dob": "1979-11-02", "zip": "60614",
                 "dependents": [{"relationship": "spouse", "dob": "1981-05-20"}]},
            ]
        }
    )
    replaced = replace_census.sync_detailed(group_id=group.id, client=client, body=members)
    census = expect("replace census", replaced, HTTPStatus.OK, CensusResult)
    assert census.accepted == 2, census

    # The market comparison runs in the background: 409 rates_pending
    # until it is done.
    deadline = time.monotonic() + 60
    while True:
        answer = create_quote.sync_detailed(group_id=group.id, client=client, body=QuoteInput.from_dict({}))
        if answer.status_code != HTTPStatus.CONFLICT or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    quote = expect("create quote", answer, HTTPStatus.CREATED, QuoteOut)
    assert quote.status == "ready", quote

    enrollment = expect(
        "create enrollment",
        create_enrollment.sync_detailed(
            group_id=group.id,
            client=client,
            body=EnrollmentInput.from_dict(
                {"quote_id": quote.id, "signatory": {"name": "Dana Lee", "email": "dana@acme-sdk.example"}}
            ),
        ),
        HTTPStatus.CREATED,
        EnrollmentOut,
    )
    assert enrollment.group_id == group.id, enrollment

    start = quote.plan_year_start_date
    choices = ElectionsInput.from_dict(
        {
            "elections": [
                {"external_id": "E-1", "election": "enrolled", "tier": "employeeOnly",
                 "effective_date": start.isoformat()},
                {"external_id": "E-2", "election": "waived", "waiver_reason": "other_employer_group"},
            ]
        }
    )
    submitted = submit_elections.sync_detailed(group_id=group.id, client=client, body=choices)
    elections = expect("submit elections", submitted, HTTPStatus.OK, ElectionsOut)
    assert elections.enrolled == 1 and not elections.errors, elections.to_dict()

    account = expect(
        "get account",
        get_account.sync_detailed(group_id=group.id, client=client),
        HTTPStatus.OK,
        AccountOut,
    )
    assert account.enrolled_count == 1 and account.waived_count == 1, account

    # Deliveries: enrollment.created at least, each verified.
    deadline = time.monotonic() + 30
    while not any(b"enrollment.created" in body for _, body in Receiver.deliveries):
        if time.monotonic() > deadline:
            sys.exit(f"no enrollment.created delivery in 30 s: {len(Receiver.deliveries)} deliveries")
        time.sleep(0.1)
    verifier = Webhook(secret)
    for headers, body in Receiver.deliveries:
        event = verifier.verify(body, headers)
        print(f"ok  webhook {event['type']} verified")
    receiver.shutdown()
    print("journey: ok")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
