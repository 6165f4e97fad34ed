"""What docs/API.md promises, checked through docs_client.py: accounts and roles, the home API's
codes, answer sizes, idempotency keys, change subscriptions, the accessory face, the bounds on what
slow subscribers and the browser hold, drain and restart.
"""

import signal
import struct
import tempfile
import time
import uuid

from docs_client import (CALL_END, CANCEL, CREDIT, GOAWAY, MESSAGE, CallEnd, Connection, GoAway, bearer, decode,
                         field_bytes, field_varint, frame)
from harness import (ACCOUNTS, ALREADY_EXISTS, DEADLINE_EXCEEDED, HOME, INVALID_ARGUMENT, LINK, NOT_FOUND, OK,
                     PERMISSION_DENIED, RESOURCE_EXHAUSTED, UNAUTHENTICATED, UNAVAILABLE, Server, advertise,
                     answer_commands, characteristic_ids, check, lamp, message_field, new_account, pair, read_messages,
                     subscribe)


def check_accounts_and_homes(server):
    connection = Connection(server.address)
    _, end = connection.unary(HOME + "ListHomes")
    check("Authentication: a call without a token: UNAUTHENTICATED", end.code == UNAUTHENTICATED, end)
    check("Authentication: without a token, the message says \"authenticate first\"",
          end.message.startswith("authenticate first"), end)
    for token in ["nonsense", "hrt_" + "0" * 40, ""]:
        _, end = connection.unary(HOME + "ListHomes", metadata=bearer(token))
        check("Authentication: a wrong token %r: UNAUTHENTICATED" % token[:12], end.code == UNAUTHENTICATED, end)
        if token:
            check("Authentication: a token not accepted is told apart from none, without saying which it is",
                  end.message == "the bearer token was not accepted: it is unknown or was revoked", end)
    _, end = connection.unary(HOME + "ListHomes", metadata=[("authorization", "Basic " + server.owner_token)])
    check("Authentication: not a bearer token: UNAUTHENTICATED", end.code == UNAUTHENTICATED, end)

    owner = server.owner()
    _, end = owner.unary(HOME + "ListHomes")
    check("Authentication: the first valid token authenticates the connection for its later calls",
          end.code == OK, end)
    name = "Docs " + uuid.uuid4().hex[:6]
    response, end = owner.unary(HOME + "AddHome", field_bytes(1, name))
    home = message_field(response, 1)
    home_id = home[1][0]
    check("AddHome answers the home with a 16-byte id", end.code == OK and len(home_id) == 16, (end, home))
    response, end = owner.unary(HOME + "ListHomes")
    homes = [decode(home) for home in decode(response).get(1, [])]
    check("ListHomes: the homes in the order added, the caller's first home its primary one",
          end.code == OK and homes[-1][1][0] == home_id and [home.get(3) == [1] for home in homes]
          == [True] + [False] * (len(homes) - 1), [home.get(3) for home in homes])
    _, end = owner.unary(HOME + "AddHome", field_bytes(1, name.upper().replace(" ", "")))
    check("AddHome: a similar name (case and spaces ignored): ALREADY_EXISTS, 32",
          (end.code, end.homekit_code) == (ALREADY_EXISTS, 32), end)
    for bad, code in [("", 3), ("x" * 65, 46), (" Room", 36), ("Room!", 35), ("Room'", 60)]:
        _, end = owner.unary(HOME + "AddRoom", field_bytes(1, home_id) + field_bytes(2, bad))
        check("Name codes: %r: INVALID_ARGUMENT, %d, field name" % (bad, code),
              (end.code, end.homekit_code, end.field) == (INVALID_ARGUMENT, code, "name"), end)
    response, end = owner.unary(HOME + "AddRoom", field_bytes(1, home_id) + field_bytes(2, "卧室"))
    room_id = message_field(response, 1)[1][0]
    check("AddRoom takes Unicode letters", end.code == OK, end)
    _, end = owner.unary(HOME + "AddRoom", field_bytes(1, home_id[:15]) + field_bytes(2, "Hall"))
    check("Identifiers: a 15-byte id: INVALID_ARGUMENT, 3, naming the field",
          (end.code, end.homekit_code, end.field) == (INVALID_ARGUMENT, 3, "home_id"), end)
    _, end = owner.unary(HOME + "AddRoom", b"\xff\xff\xff")
    check("a request that does not decode: INVALID_ARGUMENT", end.code == INVALID_ARGUMENT, end)
    response, end = owner.unary(HOME + "GetHome", field_bytes(1, home_id))
    home = message_field(response, 1)
    room_for_entire_home = decode(home[5][0])[1][0]
    check("GetHome: the room for the entire home, the room, the four built-in action sets, the owner",
          end.code == OK and len(home.get(6, [])) == 1 and len(home.get(10, [])) == 4 and len(home.get(12, [])) == 1,
          {key: len(values) for key, values in home.items()})
    _, end = owner.unary(HOME + "RenameRoom", field_bytes(1, home_id) + field_bytes(2, room_for_entire_home)
                         + field_bytes(3, "Everywhere"))
    check("RenameRoom: the room for the entire home: FAILED_PRECONDITION, 29",
          (end.code, end.homekit_code) == (9, 29), end)
    response, end = owner.unary(HOME + "AddZone", field_bytes(1, home_id) + field_bytes(2, "Upstairs"))
    zone_id = message_field(response, 1)[1][0]
    _, end = owner.unary(HOME + "AddRoomToZone", field_bytes(1, home_id) + field_bytes(2, zone_id)
                         + field_bytes(3, room_for_entire_home))
    check("AddRoomToZone: the room for the entire home: FAILED_PRECONDITION, 24",
          (end.code, end.homekit_code) == (9, 24), end)

    streams = {owner.start(HOME + "AddRoom", field_bytes(1, home_id) + field_bytes(2, "Room %d" % i)): "Room %d" % i
               for i in range(20)}
    answers = owner.collect(list(streams))
    matched = all(end.code == OK and message_field(messages[0], 1)[2][0] == streams[stream].encode()
                  for stream, (messages, end) in answers.items())
    check("CALL_START: 20 calls at once, each answer matched to its call by stream id", matched)

    # Roles: a guest and a non-member.
    account_id, token_id, outsider = new_account(server, owner, "Guest " + uuid.uuid4().hex[:4])
    check("IssueToken answers a secret that authenticates, and the token's id", len(token_id) == 16, token_id)
    _, hidden = outsider.unary(HOME + "GetHome", field_bytes(1, home_id))
    _, missing = outsider.unary(HOME + "GetHome", field_bytes(1, uuid.uuid4().bytes))
    check("Homes in requests: a non-member gets exactly what a home that does not exist gets (NOT_FOUND, 2)",
          (hidden.code, hidden.homekit_code, hidden.message) == (missing.code, missing.homekit_code, missing.message)
          == (NOT_FOUND, 2, missing.message), (hidden, missing))
    _, end = owner.unary(HOME + "AddUser", field_bytes(1, home_id) + field_bytes(2, account_id))
    check("AddUser adds a guest", end.code == OK, end)
    _, end = outsider.unary(HOME + "AddRoom", field_bytes(1, home_id) + field_bytes(2, "Den"))
    check("Roles: a guest adding a room: PERMISSION_DENIED, 17", (end.code, end.homekit_code) == (PERMISSION_DENIED, 17),
          end)
    _, end = outsider.unary(HOME + "GetHome", field_bytes(1, home_id))
    check("Roles: a guest reads the home", end.code == OK, end)
    _, end = outsider.unary(ACCOUNTS + "ListAccounts")
    check("ListAccounts is the server owner's: PERMISSION_DENIED, 17",
          (end.code, end.homekit_code) == (PERMISSION_DENIED, 17), end)
    _, end = owner.unary(ACCOUNTS + "RevokeToken", field_bytes(1, token_id))
    _, after = outsider.unary(HOME + "ListHomes")
    check("Authentication: revoking a token ends its connection's rights (UNAUTHENTICATED)",
          end.code == OK and after.code == UNAUTHENTICATED, (end, after))
    return home_id, room_id


def check_token_scopes(server, home_id):
    """Tokens and their scope: a token issued read-only, for one home, for an hour, as docs/API.md's
    IssueTokenRequest describes it, and what each kind of call then gets."""
    owner = server.owner()
    response, _ = owner.unary(HOME + "AddHome", field_bytes(1, "Elsewhere " + uuid.uuid4().hex[:6]))
    elsewhere = message_field(response, 1)[1][0]
    request = (field_bytes(2, "dashboard") + field_varint(3, 1) + field_bytes(4, home_id)
               + field_varint(5, 3600))
    response, end = owner.unary(ACCOUNTS + "IssueToken", request)
    check("IssueToken takes name, scope, home_ids and expires_in_seconds", end.code == OK, end)
    issued = decode(response)
    info, secret = decode(issued[1][0]), issued[2][0].decode()
    now_ms = time.time() * 1000
    check("TokenInfo shows the name, scope READ (1), the home and an expiry an hour ahead",
          info[4] == [b"dashboard"] and info[5] == [1] and info[6] == [home_id]
          and abs(info[7][0] - (now_ms + 3_600_000)) < 60_000, info)
    reader = Connection(server.address)
    response, end = reader.unary(HOME + "ListHomes", metadata=bearer(secret))
    listed = [decode(home)[1][0] for home in decode(response).get(1, [])]
    check("Tokens and their scope: ListHomes lists only the token's homes", end.code == OK and listed == [home_id],
          (end, listed))
    _, end = reader.unary(HOME + "GetHome", field_bytes(1, home_id))
    check("Tokens and their scope: a read token reads its home", end.code == OK, end)
    _, end = reader.unary(HOME + "AddRoom", field_bytes(1, home_id) + field_bytes(2, "Pantry"))
    check("Tokens and their scope: a method above the token's scope: PERMISSION_DENIED, 17, "
          "\"this token's scope is read: ... needs full\"",
          (end.code, end.homekit_code) == (PERMISSION_DENIED, 17) and "this token's scope is read" in end.message
          and "needs full" in end.message, end)
    _, outside = reader.unary(HOME + "GetHome", field_bytes(1, elsewhere))
    _, missing = reader.unary(HOME + "GetHome", field_bytes(1, uuid.uuid4().bytes))
    check("Tokens and their scope: a home outside the token's homes is answered like one the account cannot see",
          (outside.code, outside.homekit_code, outside.message) == (missing.code, missing.homekit_code, missing.message)
          == (NOT_FOUND, 2, missing.message), (outside, missing))
    _, end = reader.unary(HOME + "AddHome", field_bytes(1, "Never"))
    check("Tokens and their scope: AddHome (every home) from a token limited to homes: 17",
          (end.code, end.homekit_code) == (PERMISSION_DENIED, 17), end)
    _, end = reader.unary(ACCOUNTS + "IssueToken", field_varint(3, 3))
    check("Tokens and their scope: a read token cannot issue tokens: 17",
          (end.code, end.homekit_code) == (PERMISSION_DENIED, 17), end)
    response, end = owner.unary(ACCOUNTS + "ListTokens")
    listed = [decode(token) for token in decode(response).get(1, [])]
    used = [token for token in listed if token.get(4) == [b"dashboard"]]
    check("ListTokens shows the token's last use", end.code == OK and len(used) == 1 and used[0].get(8, [0])[0] > 0,
          used)
    for body, field in [(field_varint(5, -1), "expires_in_seconds"), (field_bytes(2, "n" * 65), "name")]:
        _, end = owner.unary(ACCOUNTS + "IssueToken", body)
        check("IssueToken: a lifetime out of range or a name past 64 bytes: INVALID_ARGUMENT, 3",
              (end.code, end.homekit_code) == (INVALID_ARGUMENT, 3) and end.field == field, end)
    reader.close()
    owner.close()


def check_answer_sizes(server):
    """Answer sizes: an answer larger than the client's MAX_FRAME_SIZE ends its call, not the connection."""
    owner = server.owner()
    response, _ = owner.unary(HOME + "AddHome", field_bytes(1, "Large " + uuid.uuid4().hex[:6]))
    home_id = message_field(response, 1)[1][0]
    for batch in range(0, 400, 80):  # within MAX_CONCURRENT_STREAMS
        streams = [owner.start(HOME + "AddRoom", field_bytes(1, home_id) + field_bytes(2, "Room number %03d of many" % i))
                   for i in range(batch, batch + 80)]
        owner.collect(streams)
    small = Connection(server.address, max_frame_size=16_384)
    small.unary(HOME + "ListHomes", metadata=bearer(server.owner_token))
    _, end = small.unary(HOME + "GetHome", field_bytes(1, home_id))
    _, after = small.unary(HOME + "ListHomes")
    check("Answer sizes: a home larger than the client's MAX_FRAME_SIZE (16,384): RESOURCE_EXHAUSTED, "
          "\"exceeds the peer's max frame size\"; the connection goes on",
          end.code == RESOURCE_EXHAUSTED and "exceeds the peer's max frame size" in end.message and after.code == OK,
          (end, after))
    response, end = owner.unary(HOME + "GetHome", field_bytes(1, home_id))
    check("... and a client that announces 16 MiB reads it (%d bytes)" % len(response or b""),
          end.code == OK and len(response) > 16_384 and len(message_field(response, 1).get(6, [])) == 400, end)


def check_idempotency(server, home_id):
    owner = server.owner()
    key = [("idempotency-key", uuid.uuid4().hex)]
    request = field_bytes(1, home_id) + field_bytes(2, "Pantry")
    first, first_end = owner.unary(HOME + "AddRoom", request, metadata=key)
    again, again_end = owner.unary(HOME + "AddRoom", request, metadata=key)
    check("Retries: the same key and request answer the first outcome and change nothing",
          first_end.code == OK and again_end.code == OK and first == again, (first_end, again_end))
    _, end = owner.unary(HOME + "AddRoom", field_bytes(1, home_id) + field_bytes(2, "Larder"), metadata=key)
    check("Retries: another request under a used key: INVALID_ARGUMENT", end.code == INVALID_ARGUMENT, end)
    _, end = owner.unary(HOME + "AddRoom", field_bytes(1, home_id) + field_bytes(2, "Attic"),
                         metadata=[("idempotency-key", "k" * 129)])
    check("Retries: a key over 128 bytes: INVALID_ARGUMENT", end.code == INVALID_ARGUMENT, end)
    refused_key = [("idempotency-key", uuid.uuid4().hex)]
    _, refused = owner.unary(HOME + "AddRoom", field_bytes(1, home_id) + field_bytes(2, "Pantry"), metadata=refused_key)
    return key, request, first, refused_key, refused


def check_subscription(server, home_id):
    subscriber = server.owner(initial_stream_credit=2)
    stream = subscribe(subscriber, field_bytes(1, home_id))
    writer = server.owner()
    for index in range(5):
        writer.unary(HOME + "AddZone", field_bytes(1, home_id) + field_bytes(2, "Zone %d" % index))
    events = read_messages(subscriber, stream, 1.0)
    check("Stream credit: with INITIAL_STREAM_CREDIT 2 the server sends 2 events and waits", len(events) == 2,
          len(events))
    subscriber.send(frame(CREDIT, 0, stream, struct.pack(">I", 3)))
    events += read_messages(subscriber, stream, 1.0)
    revisions = [decode(event)[2][0] for event in events]
    check("Stream credit: CREDIT 3 lets the other 3 through, in revision order, each a ZoneAdded",
          len(events) == 5 and revisions == list(range(revisions[0], revisions[0] + 5))
          and all(118 in decode(event) for event in events), revisions)
    subscriber.send(frame(CANCEL, 0, stream))


ROOM_ADDED_KIND, HOME_ADDED_FIELD, ROOM_ADDED_FIELD, ZONE_ADDED_FIELD = 15, 103, 115, 118
SNAPSHOT_FIELD, RESYNC_FIELD, USER_REMOVED_FIELD = 10, 11, 137


def check_subscription_options(server, home_id):
    """Change subscriptions: where a stream starts, what it filters, when it ends."""
    owner = server.owner()
    response, _ = owner.unary(HOME + "GetHome", field_bytes(1, home_id))
    revision = message_field(response, 1)[14][0]
    stream = subscribe(owner, field_bytes(1, home_id) + field_varint(5, 1))
    owner.unary(HOME + "AddRoom", field_bytes(1, home_id) + field_bytes(2, "Own change"))
    other = server.owner()
    other.unary(HOME + "AddRoom", field_bytes(1, home_id) + field_bytes(2, "Their change"))
    events = [decode(event) for event in read_messages(owner, stream, 0.7)]
    check("snapshot: a HomeSnapshot at GetHome's revision first, then the changes after it; not the stream's "
          "own connection's (HomeKit does not echo)",
          len(events) == 2 and SNAPSHOT_FIELD in events[0] and events[0][2] == [revision]
          and ROOM_ADDED_FIELD in events[1] and decode(decode(events[1][ROOM_ADDED_FIELD][0])[1][0])[2]
          == [b"Their change"] and events[1][2] == [revision + 2], events)
    owner.send(frame(CANCEL, 0, stream))

    stream = subscribe(owner, field_bytes(1, home_id) + field_varint(2, ROOM_ADDED_KIND) + field_varint(6, 1))
    owner.unary(HOME + "AddZone", field_bytes(1, home_id) + field_bytes(2, "Unwanted"))
    owner.unary(HOME + "AddRoom", field_bytes(1, home_id) + field_bytes(2, "Wanted"))
    events = [decode(event) for event in read_messages(owner, stream, 0.7)]
    check("kinds: only ROOM_ADDED; include_own_changes: own changes come, marked `own`",
          len(events) == 1 and ROOM_ADDED_FIELD in events[0] and events[0].get(5) == [1], events)
    owner.send(frame(CANCEL, 0, stream))

    resume = field_bytes(4, field_bytes(1, home_id) + field_varint(2, revision))
    stream = subscribe(owner, field_bytes(1, home_id) + resume + field_varint(6, 1))
    events = [decode(event) for event in read_messages(owner, stream, 0.7)]
    check("resume_from (with include_own_changes): exactly the changes after that revision, in order",
          [event[2][0] for event in events] == list(range(revision + 1, revision + 5))
          and ROOM_ADDED_FIELD in events[0] and ZONE_ADDED_FIELD in events[2], [event[2] for event in events])
    owner.send(frame(CANCEL, 0, stream))
    never_issued = field_bytes(4, field_bytes(1, home_id) + field_varint(2, revision + 1000))
    stream = subscribe(owner, field_bytes(1, home_id) + never_issued)
    events = [decode(event) for event in read_messages(owner, stream, 0.7)]
    resync = decode(events[0][RESYNC_FIELD][0]) if events and RESYNC_FIELD in events[0] else {}
    check("resume_from a revision never issued: a Resync, RESUME_POINT_NOT_RETAINED, with the whole home",
          resync.get(1) == [1] and decode(resync[2][0])[1] == [home_id], events)
    owner.send(frame(CANCEL, 0, stream))

    for name, request, code, homekit, field in [
            ("a home that does not exist: NOT_FOUND, 2, naming home_ids[0]", field_bytes(1, uuid.uuid4().bytes),
             NOT_FOUND, 2, "home_ids[0]"),
            ("a home named twice: INVALID_ARGUMENT, 3", field_bytes(1, home_id) * 2, INVALID_ARGUMENT, 3, None),
            ("an unknown kind: INVALID_ARGUMENT, 3, naming kinds[0]", field_varint(2, 99), INVALID_ARGUMENT, 3,
             "kinds[0]")]:
        _, end = owner.unary(HOME + "Subscribe", request)
        check("Subscribe with " + name, (end.code, end.homekit_code) == (code, homekit)
              and (field is None or end.field == field), end)

    stream = subscribe(owner, b"")
    response, _ = other.unary(HOME + "AddHome", field_bytes(1, "Later " + uuid.uuid4().hex[:6]))
    later = message_field(response, 1)[1][0]
    events = [decode(event) for event in read_messages(owner, stream, 0.7)]
    check("no home_ids: a home the caller creates meanwhile starts with HomeAdded carrying the whole home",
          any(HOME_ADDED_FIELD in event and event[1] == [later] and 5 in decode(decode(event[HOME_ADDED_FIELD][0])[1][0])
              for event in events), events)
    owner.send(frame(CANCEL, 0, stream))

    account_id, _, member = new_account(server, owner, "Member " + uuid.uuid4().hex[:4])
    response, _ = owner.unary(HOME + "AddUser", field_bytes(1, later) + field_bytes(2, account_id))
    user_id = message_field(response, 1)[1][0]
    response, _ = member.unary(HOME + "GetHome", field_bytes(1, later))
    check("Users: a member's User.id is its own in the home, not its account's; Home.current_user_id is the "
          "caller's", user_id != account_id and len(user_id) == 16 and message_field(response, 1)[16] == [user_id],
          (user_id, account_id))
    stream = subscribe(member, field_bytes(1, later))
    owner.unary(HOME + "RemoveUser", field_bytes(1, later) + field_bytes(3, user_id))
    messages, end = member.collect([stream])[stream]
    check("Membership: a member removed gets UserRemoved with its user id and subscriber set, then the stream "
          "ends OK", end.code == OK and len(messages) == 1
          and decode(decode(messages[0])[USER_REMOVED_FIELD][0]) == {1: [user_id], 2: [1]}, (end, messages))


def check_accessory_face(server, home_id):
    _, refused = advertise(server, lamp("Docs Lamp"), "123-45-678")
    check("Pairing: a guessable setup code (123-45-678) is refused: INVALID_ARGUMENT",
          isinstance(refused, CallEnd) and refused.code == INVALID_ARGUMENT, refused)
    link, description = advertise(server, lamp("Docs Lamp"), "135-79-246")
    accessory_id = description[1][0]
    brightness = characteristic_ids(description)[(0x43, 0x08)]
    check("Pairing: Advertise's first message returns the description with every id filled in",
          len(accessory_id) == 16 and len(brightness) == 16, description)
    owner = server.owner()
    end, _ = pair(owner, link, home_id, accessory_id, "135-79-247")
    check("Pairing: a wrong setup code: PERMISSION_DENIED, 18", (end.code, end.homekit_code) == (PERMISSION_DENIED, 18),
          end)
    end, credential = pair(owner, link, home_id, accessory_id, "135-79-246")
    check("Pairing: AddAccessory with the right code; the link gets `paired` with a hac_ credential",
          end.code == OK and credential.startswith("hac_"), (end, credential))

    def write(value, timeout_ms=3000):
        request = field_bytes(1, home_id) + field_bytes(2, brightness) + field_bytes(3, field_varint(2, value))
        return owner.unary(HOME + "WriteCharacteristic", request, timeout_ms=timeout_ms)[1]

    def answered_write(value, hap_status=0):
        accessory = answer_commands(link, [hap_status])
        end = write(value)
        accessory.join()
        return end, accessory.answered

    for hap_status, expected in [(0, (OK, None)), (-70403, (UNAVAILABLE, 14)), (-70404, (9, 5)), (-70410, (3, 43)),
                                 (-70401, (PERMISSION_DENIED, 17)), (-70411, (PERMISSION_DENIED, 87)),
                                 (-70000, (3, 50))]:
        end, answered = answered_write(80, hap_status)
        check("Commands: a write the accessory answers with HAP status %d: %r" % (hap_status, expected),
              (end.code, end.homekit_code) == expected and answered[0][1].code == OK
              and decode(answered[0][0][3][0])[1][0] == brightness, (end, answered))
    for value, code in [(101, 45), (-1, 44)]:
        end = write(value)
        check("Value codes: Brightness %d: INVALID_ARGUMENT, %d, without asking the accessory" % (value, code),
              (end.code, end.homekit_code) == (INVALID_ARGUMENT, code), end)
    request = field_bytes(1, home_id) + field_bytes(2, brightness) + field_bytes(3, field_varint(1, 1))
    _, end = owner.unary(HOME + "WriteCharacteristic", request)
    check("Value codes: a bool for an integer characteristic: INVALID_ARGUMENT, 43",
          (end.code, end.homekit_code) == (INVALID_ARGUMENT, 43), end)

    started = time.monotonic()
    end = write(60, timeout_ms=600)
    check("Commands: unanswered, the write fails with 8 (DEADLINE_EXCEEDED) 40 ms before the call's deadline",
          (end.code, end.homekit_code) == (DEADLINE_EXCEEDED, 8) and time.monotonic() - started < 0.6, end)
    _, _, _, payload = link.read_frame()
    late = decode(decode(payload)[4][0])[1][0]
    _, end = link.unary(LINK + "AnswerCommand", field_varint(1, late) + field_varint(2, 0))
    check("Commands: a late answer gets NOT_FOUND", end.code == NOT_FOUND, end)

    named, plain = server.owner(), server.owner()
    named_stream = subscribe(named, field_bytes(1, home_id) + field_bytes(3, brightness))
    plain_stream = subscribe(plain, field_bytes(1, home_id))
    report = field_bytes(1, field_bytes(1, brightness) + field_bytes(2, field_varint(2, 12)))
    _, end = link.unary(LINK + "ReportValues", report)
    response, read = owner.unary(HOME + "ReadCharacteristic", field_bytes(1, home_id) + field_bytes(2, brightness))
    check("Value reports: ReportValues changes the cached value ReadCharacteristic answers",
          end.code == OK and read.code == OK and decode(decode(response)[1][0]) == {2: [12]}, (end, response))
    named_events = [decode(event) for event in read_messages(named, named_stream, 0.5)]
    plain_events = [decode(event) for event in read_messages(plain, plain_stream, 0.5)]
    updated = decode(named_events[0][157][0]) if named_events and 157 in named_events[0] else {}
    check("Value reports: CharacteristicValueUpdated, initiator the accessory, to a stream naming the "
          "characteristic, not to one without notifications enabled",
          updated.get(1) == [brightness] and decode(updated[4][0]) == {2: [12]}
          and decode(named_events[0][4][0]) == {2: [accessory_id]} and plain_events == [],
          (named_events, plain_events))
    _, end = plain.unary(HOME + "EnableNotification", field_bytes(1, home_id) + field_bytes(2, brightness)
                         + field_varint(3, 1))
    link.unary(LINK + "ReportValues", field_bytes(1, field_bytes(1, brightness) + field_bytes(2, field_varint(2, 13))))
    plain_events = [decode(event) for event in read_messages(plain, plain_stream, 0.5)]
    check("EnableNotification: the account's streams then get the characteristic's value events",
          end.code == OK and len(plain_events) == 1 and 157 in plain_events[0], (end, plain_events))

    impostor = Connection(server.address)
    _, end = impostor.unary(LINK + "Attach", field_bytes(1, accessory_id) + field_bytes(2, "hac_" + "0" * 40))
    check("Pairing: Attach with a wrong credential: UNAUTHENTICATED", end.code == UNAUTHENTICATED, end)
    _, end = advertise(server, field_bytes(1, accessory_id) + lamp("Docs Lamp"), "135-79-246")
    check("Pairing: advertising a paired accessory's id: ALREADY_EXISTS, 13",
          isinstance(end, CallEnd) and (end.code, end.homekit_code) == (ALREADY_EXISTS, 13), end)
    end, _ = answered_write(42)
    check("... and the accessory holding the credential is not disturbed: writes still reach it", end.code == OK, end)

    read_messages(plain, plain_stream, 0.3)  # the value events of the writes above, made by another connection
    link.close()
    time.sleep(0.3)
    end = write(40)
    check("Reachability: once the link ends, a write: UNAVAILABLE, 4", (end.code, end.homekit_code) == (UNAVAILABLE, 4),
          end)
    link = Connection(server.address)
    attach = link.start(LINK + "Attach", field_bytes(1, accessory_id) + field_bytes(2, credential))
    frame_type, _, _, payload = link.read_frame()
    check("Pairing: Attach with the credential: `attached`", frame_type == MESSAGE and 3 in decode(payload), payload)
    end, _ = answered_write(41)
    check("... and writes reach it again", end.code == OK, end)
    link.unary(LINK + "ReportValues", field_bytes(1, field_bytes(1, brightness) + field_bytes(2, field_varint(2, 14))))
    plain_events = [decode(event) for event in read_messages(plain, plain_stream, 0.5)]
    check("Reachability: the link's end reset the notification enablement (ReachabilityUpdated false, then "
          "true; no value event)", [decode(event[156][0]).get(2) for event in plain_events if 156 in event]
          == [None, [1]] and not any(157 in event for event in plain_events), plain_events)
    return link, attach


def check_drain(server, link, attach):
    """Graceful drain: SIGTERM with a subscription and an accessory's link open."""
    owner = server.owner()
    stream = subscribe(owner, b"")
    server.process.send_signal(signal.SIGTERM)
    away, ended = None, None
    try:
        while away is None or ended is None:
            frame_type, flags, frame_stream, payload = owner.read_frame()
            if frame_type == GOAWAY:
                away = GoAway(payload)
            elif frame_type == CALL_END and frame_stream == stream:
                ended = CallEnd(payload, flags)
    except EOFError:
        pass
    check("Graceful drain: GOAWAY(OK, \"server is draining\")",
          away is not None and away.code == OK and "draining" in away.message, away)
    check("Graceful drain: an open Subscribe ends UNAVAILABLE, retryable",
          ended is not None and ended.code == UNAVAILABLE and ended.retryable, ended)
    ended = None
    try:
        while ended is None:
            frame_type, flags, frame_stream, payload = link.read_frame()
            if frame_type == CALL_END and frame_stream == attach:
                ended = CallEnd(payload, flags)
    except EOFError:
        pass
    check("Draining (Accessories): the accessory's link ends UNAVAILABLE, retryable",
          ended is not None and ended.code == UNAVAILABLE and ended.retryable, ended)
    check("Graceful drain: homed exits 0", server.process.wait(timeout=15) == 0, server.process.returncode)


def check_after_restart(server, home_id, rooms_before, key, request, first, refused_key, refused):
    server.start()
    owner = server.owner()
    response, end = owner.unary(HOME + "GetHome", field_bytes(1, home_id))
    rooms = sorted(decode(room)[1][0] for room in message_field(response, 1).get(6, []))
    check("Mutations answer when durable: the %d rooms acknowledged before the restart are there" % len(rooms_before),
          end.code == OK and rooms == rooms_before and len(rooms) > 20, (end, len(rooms), len(rooms_before)))
    again, end = owner.unary(HOME + "AddRoom", request, metadata=key)
    check("Retries: after a restart the same key still answers the first outcome",
          end.code == OK and again == first, end)
    _, end = owner.unary(HOME + "AddRoom", field_bytes(1, home_id) + field_bytes(2, "Pantry"), metadata=refused_key)
    check("Retries: a refused request's key answers the same refusal after a restart",
          (end.code, end.homekit_code, end.message) == (refused.code, refused.homekit_code, refused.message)
          and refused.homekit_code == 31, (refused, end))
    server.process.send_signal(signal.SIGTERM)
    server.process.wait(timeout=15)


def check_bounds(binary):
    """"Slow subscribers" and "Pairing" (API.md): what one connection's streams and the accessory
    browser may hold, against a homed of their own with small bounds."""
    with tempfile.TemporaryDirectory() as directory:
        server = Server(binary, directory, ["--max-unread-bytes", "4000", "--max-advertised-bytes", "1500"])
        server.start()
        try:
            owner = server.owner()
            response, end = owner.unary(HOME + "AddHome", field_bytes(1, "Bounds"))
            home_id = message_field(response, 1)[1][0]
            stalled = Connection(server.address, initial_stream_credit=0)
            _, end = stalled.unary(HOME + "ListHomes", metadata=bearer(server.owner_token))
            stream = subscribe(stalled, field_bytes(1, home_id))
            # 4,000 bytes hold 50 events waiting, at about 80 bytes each.
            for index in range(60):
                owner.unary(HOME + "AddRoom", field_bytes(1, home_id) + field_bytes(2, "Room %d" % index))
            frame_type, flags, _, payload = stalled.next_frame([stream])
            end = CallEnd(payload, flags) if frame_type == CALL_END else (frame_type, payload)
            check("Slow subscribers: a stream that never reads ends with RESOURCE_EXHAUSTED once its connection's "
                  "streams hold more than --max-unread-bytes",
                  isinstance(end, CallEnd) and end.code == RESOURCE_EXHAUSTED
                  and end.message.startswith("this connection's subscriptions would hold "), end)
            _, end = owner.unary("home.v1.Health/Check")
            check("Slow subscribers: ... and the server goes on serving", end.code == OK, end)

            links, refusal = [], None
            for index in range(10):
                link, result = advertise(server, lamp("Bound Lamp %d" % index), "135-79-246")
                if isinstance(result, CallEnd):
                    refusal = result
                    break
                links.append(link)
            check("Pairing: past --max-advertised-bytes of descriptions, Advertise fails with RESOURCE_EXHAUSTED "
                  "and 49", 0 < len(links) < 10 and refusal is not None
                  and (refusal.code, refusal.homekit_code) == (RESOURCE_EXHAUSTED, 49), (len(links), refusal))
            if links:
                links.pop().close()
            accepted = False
            for _ in range(20):
                time.sleep(0.1)
                link, result = advertise(server, lamp("Bound Lamp again"), "135-79-246")
                accepted = not isinstance(result, CallEnd)
                if accepted:
                    break
            check("Pairing: ... and an advertisement that ends makes room for another", accepted)
        finally:
            server.process.kill()
            server.process.wait()
