"""Checks a real homed against the HomeKit rules of docs/HOMEKIT.md that docs/API.md promises to
keep, as an audit written from those rules would: bridges, rooms and zones, characteristic
properties, services (associated types, names), service groups, action sets, timer triggers, members
and a guest's rights, each with the HomeKit code the rule gives. The client is docs_client.py (written from the documents only).

Usage: check_homekit.py HOMED  (starts HOMED in a temporary directory). Exit status 1 if any check
failed.
"""

import threading
import time
import uuid

from docs_client import decode, field_bytes, field_varint
from harness import (HOME, OK, advertise, answer_commands, bridge, characteristic_ids, check,
                     message_field, new_account, pair, read_messages, run_checks, sensor_and_switch, subscribe,
                     uuid_type)

HAP_COMMUNICATION_FAILURE, HAP_BUSY = -70402, -70403
BRIGHTNESS, IDENTIFY, NAME = 0x08, 0x14, 0x23
LIGHTBULB, ACCESSORY_INFORMATION, SWITCH, CONTACT_SENSOR = 0x43, 0x3E, 0x49, 0x80
FAN, DOOR, WINDOW = 0x40, 0x81, 0x8B
MINUTE, HOUR, DAY = 60_000, 3_600_000, 86_400_000


class Home:
    """The owner's connection and one home, with the calls the checks repeat."""

    def __init__(self, server):
        self.owner = server.owner()
        response, _ = self.owner.unary(HOME + "AddHome", field_bytes(1, "Audit " + uuid.uuid4().hex[:6]))
        self.id = message_field(response, 1)[1][0]

    def call(self, method, request=b"", connection=None, timeout_ms=0):
        return (connection or self.owner).unary(HOME + method, field_bytes(1, self.id) + request,
                                                timeout_ms=timeout_ms)

    def add(self, method, name):
        """Adds a named object (room, zone, action set): its id."""
        response, end = self.call(method, field_bytes(2, name))
        assert end.code == OK, end
        return message_field(response, 1)[1][0]

    def state(self):
        response, end = self.call("GetHome")
        assert end.code == OK, end
        return message_field(response, 1)


def check_bridges(server, home):
    link, description = advertise(server, bridge("Hub", ["Lamp A", "Lamp B"]), "246-81-357")
    bridge_id = description[1][0]
    lamp_ids = [decode(bridged)[1][0] for bridged in description[9]]
    subscriber = server.owner()
    stream = subscribe(subscriber, field_bytes(1, home.id))
    end, _ = pair(home.owner, link, home.id, bridge_id, "246-81-357")
    events = [decode(event) for event in read_messages(subscriber, stream, 0.7)]
    added = [decode(decode(event[112][0])[1][0])[1][0] for event in events if 112 in event]
    check("Adding a bridge: an accessory-added event for each bridged accessory, none for the bridge",
          end.code == OK and sorted(added) == sorted(lamp_ids), (end, len(added), bridge_id in added))

    den = home.add("AddRoom", "Den")
    home.call("AssignAccessoryToRoom", field_bytes(2, bridge_id) + field_bytes(3, den))
    rooms = {decode(accessory)[1][0]: decode(accessory).get(3, [b""])[0] for accessory in home.state()[8]}
    check("Assigning a bridge to a room does not move its bridged accessories",
          rooms[bridge_id] == den and all(rooms[lamp] != den for lamp in lamp_ids), rooms)
    _, end = home.call("RemoveAccessory", field_bytes(2, lamp_ids[0]))
    check("Removing a bridged accessory directly: 34", end.homekit_code == 34, end)
    _, end = home.call("UnblockAccessory", field_bytes(2, lamp_ids[0]))
    check("Only bridges can be unblocked: 81", end.homekit_code == 81, end)

    upstairs = home.add("AddZone", "Upstairs")
    home.call("AddRoomToZone", field_bytes(2, upstairs) + field_bytes(3, den))
    _, end = home.call("RemoveRoom", field_bytes(2, den))
    state = home.state()
    room_for_entire_home = decode(state[5][0])[1][0]
    rooms = {decode(accessory)[1][0]: decode(accessory).get(3, [b""])[0] for accessory in state[8]}
    zone = decode(state[7][0])
    check("Removing a room moves its accessories to the room for the entire home and takes it out of every zone",
          end.code == OK and rooms[bridge_id] == room_for_entire_home and zone.get(3, []) == [], (rooms, zone))
    accessories = {decode(accessory)[1][0]: decode(accessory) for accessory in state[8]}
    return link, lamp_ids, characteristic_ids(accessories[lamp_ids[0]])


def check_services(server, home):
    """Services: the associated-type rules, names unique in the home; service groups; zones."""
    link, description = advertise(server, sensor_and_switch("Porch"), "357-24-681")
    pair(home.owner, link, home.id, description[1][0], "357-24-681")
    accessory = decode(next(item for item in home.state()[8] if decode(item)[1][0] == description[1][0]))
    services = {int(decode(service)[3][0][:8], 16): decode(service)[1][0] for service in accessory[13]}
    switch, contact = services[SWITCH], services[CONTACT_SENSOR]
    lamp_service = next(decode(service)[1][0] for accessory in home.state()[8] for service in decode(accessory).get(13, [])
                        if int(decode(service)[3][0][:8], 16) == LIGHTBULB)
    for name, service, associated, code in [
            ("a Switch as a Fan (a type with On)", switch, FAN, None),
            ("a Switch as a Door: 62", switch, DOOR, 62),
            ("a ContactSensor as a Window", contact, WINDOW, None),
            ("a ContactSensor as a Lightbulb: 62", contact, LIGHTBULB, 62),
            ("a Lightbulb as a Fan (only Outlet, Switch and ContactSensor have one): 62", lamp_service, FAN, 62)]:
        _, end = home.call("UpdateAssociatedServiceType", field_bytes(2, service) + field_bytes(3, uuid_type(associated)))
        check("Associated service type: " + name, end.homekit_code == code and (code is not None or end.code == OK), end)
    _, end = home.call("RenameService", field_bytes(2, switch) + field_bytes(3, "upstairs"))
    check("Renaming a service to a name in use in the home (a zone's): 31", end.homekit_code == 31, end)
    _, end = home.call("RenameService", field_bytes(2, switch) + field_bytes(3, "Porch  switch"))
    check("Renaming a service to its own name (case and spaces aside): 33", end.homekit_code == 33, end)

    group = home.add("AddServiceGroup", "Outside")
    _, first = home.call("AddServiceToGroup", field_bytes(2, group) + field_bytes(3, switch))
    _, again = home.call("AddServiceToGroup", field_bytes(2, group) + field_bytes(3, switch))
    check("Adding a service to a group twice: 1", first.code == OK and again.homekit_code == 1, (first, again))
    _, end = home.call("RemoveServiceFromGroup", field_bytes(2, group) + field_bytes(3, contact))
    check("Removing a service that is not in the group: 2", end.homekit_code == 2, end)
    zone = home.add("AddZone", "Garden")
    room = home.add("AddRoom", "Shed")
    _, first = home.call("AddRoomToZone", field_bytes(2, zone) + field_bytes(3, room))
    _, again = home.call("AddRoomToZone", field_bytes(2, zone) + field_bytes(3, room))
    check("Adding a room to a zone twice: 1", first.code == OK and again.homekit_code == 1, (first, again))


def check_characteristics(home, characteristics):
    identify = characteristics[(ACCESSORY_INFORMATION, IDENTIFY)]
    name = characteristics[(ACCESSORY_INFORMATION, NAME)]
    _, end = home.call("ReadCharacteristic", field_bytes(2, identify))
    check("Reading a write-only characteristic (Identify): 6", end.homekit_code == 6, end)
    _, end = home.call("WriteCharacteristic", field_bytes(2, name) + field_bytes(3, field_bytes(5, "Other")))
    check("Writing a read-only characteristic (Name): 5", end.homekit_code == 5, end)
    _, end = home.call("EnableNotification", field_bytes(2, identify) + field_varint(3, 1))
    check("Notification on a characteristic without event support (Identify): 7", end.homekit_code == 7, end)


def check_action_sets(home, link, characteristics):
    brightness = characteristics[(LIGHTBULB, BRIGHTNESS)]
    evening, night = home.add("AddActionSet", "Evening"), home.add("AddActionSet", "Night")
    _, end = home.call("ExecuteActionSet", field_bytes(2, evening))
    check("Executing an action set with no actions: 25", end.homekit_code == 25, end)
    action = field_bytes(2, brightness) + field_bytes(3, field_varint(2, 30))
    response, end = home.call("AddAction", field_bytes(2, evening) + field_bytes(3, action))
    action_id = decode(message_field(response, 1)[4][0])[1][0]
    _, other_set = home.call("AddAction", field_bytes(2, night) + field_bytes(3, action))
    check("Two action sets may each write the same characteristic", end.code == OK and other_set.code == OK,
          (end, other_set))
    _, end = home.call("AddAction", field_bytes(2, night) + field_bytes(3, field_bytes(1, action_id) + action))
    check("An action already in another action set: 30", end.homekit_code == 30, end)
    too_bright = field_bytes(2, brightness) + field_bytes(3, field_varint(2, 300))
    _, end = home.call("AddAction", field_bytes(2, home.add("AddActionSet", "Bright")) + field_bytes(3, too_bright))
    check("An action's target value is checked like a write (above maximum: 45)", end.homekit_code == 45, end)
    read_only = field_bytes(2, characteristics[(ACCESSORY_INFORMATION, NAME)]) + field_bytes(3, field_bytes(5, "X"))
    _, end = home.call("AddAction", field_bytes(2, night) + field_bytes(3, read_only))
    check("An action on a read-only characteristic: 5", end.homekit_code == 5, end)
    built_in = [decode(action_set) for action_set in home.state()[10] if decode(action_set).get(3, [1])[0] != 1]
    check("A new home has the four built-in action sets", len(built_in) == 4, built_in)
    _, end = home.call("RemoveActionSet", field_bytes(2, built_in[0][1][0]))
    check("Removing a built-in action set: 83", end.homekit_code == 83, end)
    accessory = answer_commands(link, [HAP_COMMUNICATION_FAILURE])
    _, end = home.call("ExecuteActionSet", field_bytes(2, evening), timeout_ms=3000)
    accessory.join()
    results = [decode(result) for result in end.details.get(5, [])]
    check("An execution whose every write failed: 63, with a result per action",
          end.homekit_code == 63 and len(results) == 1 and results[0].get(2) == [4], (end, results))
    return evening


def check_executions(server, home, link, lamp_ids):
    """An action set over both lamps behind the bridge: partial success (64) and a second execution
    while the first waits for the accessory (65)."""
    lamps = {decode(accessory)[1][0]: characteristic_ids(decode(accessory)) for accessory in home.state()[8]}
    both = home.add("AddActionSet", "Both Lamps")
    for lamp, value in zip(lamp_ids, [20, 40]):
        action = field_bytes(2, lamps[lamp][(LIGHTBULB, BRIGHTNESS)]) + field_bytes(3, field_varint(2, value))
        home.call("AddAction", field_bytes(2, both) + field_bytes(3, action))
    accessory = answer_commands(link, [0, HAP_BUSY])
    _, end = home.call("ExecuteActionSet", field_bytes(2, both), timeout_ms=3000)
    accessory.join()
    codes = sorted(decode(result).get(2, [0])[0] for result in end.details.get(5, []))
    check("An execution where one write of two failed: 64, with a result per action (0 and 14)",
          end.homekit_code == 64 and codes == [0, 14], (end, codes))

    first = {}
    other = server.owner()
    executing = threading.Thread(target=lambda: first.update(
        end=home.call("ExecuteActionSet", field_bytes(2, both), connection=other, timeout_ms=5000)[1]))
    executing.start()
    time.sleep(0.3)  # its two writes are out, unanswered
    _, end = home.call("ExecuteActionSet", field_bytes(2, both))
    accessory = answer_commands(link, [0, 0])
    accessory.join()
    executing.join()
    check("Executing an action set while it executes: 65; the first execution then succeeds",
          end.homekit_code == 65 and first["end"].code == OK, (end, first))


def check_triggers(home, evening):
    next_hour = int(time.time() * 1000) // MINUTE * MINUTE + HOUR

    def add_trigger(fire_date_ms, recurrence=None):
        request = field_bytes(2, "Timer " + uuid.uuid4().hex[:5]) + field_varint(3, fire_date_ms)
        if recurrence:
            request += field_bytes(4, field_varint(1, recurrence[0]) + field_varint(2, recurrence[1]))
        return home.call("AddTrigger", request)

    second, minute, week = 1, 2, 5
    for name, fire_date_ms, recurrence, code in [
            ("A fire date with seconds: 70", next_hour + 5000, None, 70),
            ("A one-shot trigger in the past: 28", next_hour - 2 * HOUR, None, 28),
            ("A recurrence under 5 minutes: 42", next_hour, (minute, 4), 42),
            ("A recurrence of 90 seconds (not whole minutes): 69", next_hour, (second, 90), 69),
            ("A recurrence over 5 weeks: 72", next_hour, (week, 6), 72)]:
        _, end = add_trigger(fire_date_ms, recurrence)
        check("Triggers: " + name, end.homekit_code == code, end)
    response, end = add_trigger(next_hour, (week, 5))
    trigger = message_field(response, 1)
    check("Triggers: a 5-week recurrence is taken; a new trigger starts disabled",
          end.code == OK and trigger.get(3) is None, (end, trigger))
    trigger_id = trigger[1][0]
    _, end = home.call("EnableTrigger", field_bytes(2, trigger_id) + field_varint(3, 1))
    check("Triggers: enabling without action sets: 26", end.homekit_code == 26, end)
    home.call("AddActionSetToTrigger", field_bytes(2, trigger_id) + field_bytes(3, home.add("AddActionSet", "Empty")))
    _, end = home.call("EnableTrigger", field_bytes(2, trigger_id) + field_varint(3, 1))
    check("Triggers: enabling with an action set without actions: 25", end.homekit_code == 25, end)
    response, _ = add_trigger(next_hour + 36 * DAY)
    far = message_field(response, 1)[1][0]
    home.call("AddActionSetToTrigger", field_bytes(2, far) + field_bytes(3, evening))
    _, end = home.call("EnableTrigger", field_bytes(2, far) + field_varint(3, 1))
    check("Triggers: enabling with a next fire date 36 days away: 71", end.homekit_code == 71, end)


def check_guest(server, home, link, lamp_ids, evening):
    account_id, _, guest = new_account(server, home.owner, "Guest " + uuid.uuid4().hex[:5])
    response, end = home.call("AddUser", field_bytes(2, account_id))
    _, again = home.call("AddUser", field_bytes(2, account_id))
    check("Adding a member twice: 1", end.code == OK and again.homekit_code == 1, (end, again))
    user_id = message_field(response, 1)[1][0]
    other, _ = home.owner.unary(HOME + "AddHome", field_bytes(1, "Elsewhere " + uuid.uuid4().hex[:5]))
    other_id = message_field(other, 1)[1][0]
    response, _ = home.owner.unary(HOME + "AddUser", field_bytes(1, other_id) + field_bytes(2, account_id))
    elsewhere = message_field(response, 1)[1][0]
    check("A user's id is never the account's (its login identity), and differs from home to home",
          len({user_id, elsewhere, account_id}) == 3 and len(user_id) == 16, (user_id, elsewhere, account_id))
    _, end = home.call("RemoveUser", field_bytes(3, account_id))
    check("RemoveUser naming the account's id instead of the user's: 2", end.homekit_code == 2, end)
    _, end = home.call("AddUser", field_bytes(2, uuid.uuid4().bytes))
    check("Adding an account that does not exist: 2", end.homekit_code == 2, end)
    response, _ = home.call("GetHome")
    owner_id = message_field(response, 1)[16][0]
    for method, request in [("RemoveUser", field_bytes(3, owner_id)),
                            ("UpdateUserAccess", field_bytes(4, owner_id) + field_varint(3, 0))]:
        _, end = home.call(method, request)
        check("%s on the home's creator: 48" % method, end.homekit_code == 48, end)
    for name, method, request in [("executes an action set", "ExecuteActionSet", field_bytes(2, evening)),
                                  ("identifies an accessory", "IdentifyAccessory", field_bytes(2, lamp_ids[1]))]:
        accessory = answer_commands(link, [0])
        _, end = home.call(method, request, connection=guest, timeout_ms=3000)
        accessory.join()
        check("A guest " + name, end.code == OK, end)
    for method, request in [("AddActionSet", field_bytes(2, "Mine")),
                            ("RenameAccessory", field_bytes(2, lamp_ids[0]) + field_bytes(3, "Mine")),
                            ("AddRoom", field_bytes(2, "Mine")),
                            ("RemoveUser", field_bytes(3, user_id)),
                            ("RemoveAccessory", field_bytes(2, lamp_ids[0]))]:
        _, end = home.call(method, request, connection=guest)
        check("A guest calling %s: 17" % method, end.homekit_code == 17, end)


def check_everything(server):
    server.start()
    home = Home(server)
    link, lamp_ids, characteristics = check_bridges(server, home)
    check_characteristics(home, characteristics)
    check_services(server, home)
    evening = check_action_sets(home, link, characteristics)
    check_executions(server, home, link, lamp_ids)
    check_triggers(home, evening)
    check_guest(server, home, link, lamp_ids, evening)


if __name__ == "__main__":
    run_checks(check_everything)
