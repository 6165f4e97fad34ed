"""Checks a real homed against what docs/PROTOCOL.md and docs/API.md promise, with a client written
only from those documents (docs_client.py). Each check names the section it comes from.

Usage: check_docs.py HOMED  (starts HOMED in a temporary directory on a free loopback port, twice:
the second start checks what must survive a restart). Exit status 1 if any check failed.
"""

from docs_client import decode, field_bytes
from harness import HOME, message_field, run_checks
from protocol_checks import check_framing, check_liveness
from api_checks import (check_accounts_and_homes, check_token_scopes, check_answer_sizes, check_idempotency, check_subscription,
                        check_subscription_options, check_accessory_face, check_bounds, check_drain,
                        check_after_restart)


def check_everything(server):
    check_liveness(server.binary)
    check_bounds(server.binary)
    server.start()
    check_framing(server)
    home_id, _ = check_accounts_and_homes(server)
    check_token_scopes(server, home_id)
    check_answer_sizes(server)
    retry = check_idempotency(server, home_id)
    check_subscription(server, home_id)
    check_subscription_options(server, home_id)
    link, attach = check_accessory_face(server, home_id)
    response, _ = server.owner().unary(HOME + "GetHome", field_bytes(1, home_id))
    rooms = sorted(decode(room)[1][0] for room in message_field(response, 1).get(6, []))
    check_drain(server, link, attach)
    check_after_restart(server, home_id, rooms, *retry)


if __name__ == "__main__":
    run_checks(check_everything)
