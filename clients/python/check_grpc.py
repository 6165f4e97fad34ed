#!/usr/bin/env python3
"""Checks homed's gRPC door with grpcio and stubs generated from proto/ (run by test.sh).

    check_grpc.py HOST:PORT TOKEN_FILE SIMULATED_ACCESSORY_NAME SETUP_CODE

- every unary method of home.v1.HomeService is called once (on a home of its own): each answers OK
  or with a status whose grpc-status-details-bin holds a home.v1.ErrorDetails with a HomeKit code;
- Subscribe and BrowseAccessories are followed while an accessory (simulated over our own protocol)
  is found, added with its setup code, and written to;
- grpc.health.v1.Health Check and Watch answer without a token; a call without one is UNAUTHENTICATED;
- server reflection (grpcio-reflection's client) lists every service of proto/home/v1, and a method
  is called with message types taken from the server's descriptors alone.
"""

import os
import queue
import sys
import threading

import grpc
from google.protobuf import message_factory
from google.protobuf.descriptor_pool import DescriptorPool
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha.proto_reflection_descriptor_database import ProtoReflectionDescriptorDatabase
from grpc_status import rpc_status

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "generated"))
from home.v1 import (  # noqa: E402
    accessory_link_pb2,
    account_service_pb2,
    admin_service_pb2,
    events_pb2,
    health_pb2 as home_health_pb2,
    home_service_pb2,
    home_service_pb2_grpc,
    model_pb2,
    server_info_pb2,
    status_pb2,
)

failures = []


def check(condition: bool, what: str) -> None:
    print(("ok   " if condition else "FAIL ") + what)
    if not condition:
        failures.append(what)


def error_details(error: grpc.RpcError):
    status = rpc_status.from_call(error)
    for detail in status.details if status else []:
        details = status_pb2.ErrorDetails()
        if detail.Is(status_pb2.ErrorDetails.DESCRIPTOR) and detail.Unpack(details):
            return details
    return None


def follow(stream, into: queue.Queue) -> threading.Thread:
    def run() -> None:
        try:
            for message in stream:
                into.put(message)
        except grpc.RpcError as error:
            into.put(error)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def wait_for(into: queue.Queue, matches, seconds: float = 10):
    while True:
        try:
            message = into.get(timeout=seconds)
        except queue.Empty:
            return None
        if isinstance(message, grpc.RpcError):
            return None
        if matches(message):
            return message


def main() -> int:
    address, token_file, accessory_name, setup_code = sys.argv[1:5]
    with open(token_file) as file:
        metadata = [("authorization", f"Bearer {file.read().strip()}")]
    channel = grpc.insecure_channel(address)
    homes = home_service_pb2_grpc.HomeServiceStub(channel)
    health = health_pb2_grpc.HealthStub(channel)

    # Health, without a token.
    serving = health_pb2.HealthCheckResponse.SERVING
    check(health.Check(health_pb2.HealthCheckRequest(), timeout=5).status == serving, "Health/Check: SERVING")
    check(
        health.Check(health_pb2.HealthCheckRequest(service="home.v1.HomeService"), timeout=5).status == serving,
        "Health/Check home.v1.HomeService: SERVING",
    )
    watch = health.Watch(health_pb2.HealthCheckRequest(), timeout=5)
    check(next(watch).status == serving, "Health/Watch: SERVING first")
    watch.cancel()
    try:
        homes.ListHomes(home_service_pb2.ListHomesRequest(), timeout=5)
        check(False, "a call without a token is refused")
    except grpc.RpcError as error:
        check(error.code() == grpc.StatusCode.UNAUTHENTICATED, f"a call without a token: {error.code().name}")

    # Reflection: every service declared in proto/home/v1 is listed, and a call made with the
    # server's descriptors alone (no generated code) works.
    reflection = ProtoReflectionDescriptorDatabase(channel)
    listed = set(reflection.get_services())
    declared = {
        f"{module.DESCRIPTOR.package}.{name}"
        for module in (
            home_service_pb2,
            account_service_pb2,
            admin_service_pb2,
            accessory_link_pb2,
            home_health_pb2,
            server_info_pb2,
        )
        for name in module.DESCRIPTOR.services_by_name
    }
    check(declared <= listed and "grpc.health.v1.Health" in listed, f"reflection lists every service: {sorted(listed)}")
    pool = DescriptorPool(reflection)
    list_homes = pool.FindMethodByName("home.v1.HomeService.ListHomes")
    request_class = message_factory.GetMessageClass(list_homes.input_type)
    response_class = message_factory.GetMessageClass(list_homes.output_type)
    generic = channel.unary_unary(
        "/home.v1.HomeService/ListHomes",
        request_serializer=request_class.SerializeToString,
        response_deserializer=response_class.FromString,
    )
    answer = generic(request_class(), metadata=metadata, timeout=10)
    check(answer.DESCRIPTOR.full_name == "home.v1.ListHomesResponse", "a call with reflected descriptors only")

    # Every unary method of HomeService, each on a home of its own.
    service = home_service_pb2.DESCRIPTOR.services_by_name["HomeService"]
    answered = {}
    for method in service.methods:
        if method.server_streaming:
            continue
        home = homes.AddHome(home_service_pb2.AddHomeRequest(name=f"Probe {method.name}"), metadata=metadata).home
        request_class = getattr(home_service_pb2, method.input_type.name, None)
        if request_class is None:
            request_class = getattr(model_pb2, method.input_type.name)
        request = request_class()
        for field in method.input_type.fields:
            if field.is_repeated or field.message_type is not None:
                continue
            if field.name == "home_id":
                setattr(request, field.name, home.id)
            elif field.type == field.TYPE_BYTES:
                setattr(request, field.name, os.urandom(16))
            elif field.type == field.TYPE_STRING and field.name.endswith("name"):
                setattr(request, field.name, "Probe")
        call = channel.unary_unary(
            f"/home.v1.HomeService/{method.name}",
            request_serializer=request_class.SerializeToString,
            response_deserializer=lambda data: data,
        )
        try:
            call(request, metadata=metadata, timeout=10)
            answered[method.name] = "OK"
        except grpc.RpcError as error:
            details = error_details(error)
            if error.code() in (grpc.StatusCode.UNIMPLEMENTED, grpc.StatusCode.UNKNOWN, grpc.StatusCode.INTERNAL):
                check(False, f"{method.name}: {error.code().name} {error.details()}")
            elif details is None or details.homekit_code == 0:
                check(False, f"{method.name}: {error.code().name} without a HomeKit code in grpc-status-details-bin")
            answered[method.name] = f"{error.code().name} {details.homekit_name if details else ''}"
    unary = [method.name for method in service.methods if not method.server_streaming]
    check(sorted(answered) == sorted(unary), f"every unary HomeService method answered ({len(answered)})")
    succeeded = sum(1 for outcome in answered.values() if outcome == "OK")
    check(succeeded >= 10, f"{succeeded} of them succeeded, the rest refused with a HomeKit code")

    # Browse finds the simulated accessory; adding it shows on Subscribe; a write reaches it.
    home = homes.AddHome(home_service_pb2.AddHomeRequest(name="Accessory Home"), metadata=metadata).home
    browsed, changes = queue.Queue(), queue.Queue()
    browse = homes.BrowseAccessories(home_service_pb2.BrowseAccessoriesRequest(), metadata=metadata, timeout=60)
    subscription = homes.Subscribe(
        events_pb2.SubscribeRequest(home_ids=[home.id], include_own_changes=True), metadata=metadata, timeout=60
    )
    follow(browse, browsed)
    follow(subscription, changes)
    found = wait_for(browsed, lambda event: event.WhichOneof("kind") == "found" and event.found.name.startswith(accessory_name))
    check(found is not None, f"BrowseAccessories found {accessory_name}")
    if found is None:
        return 1
    added = homes.AddAccessory(
        home_service_pb2.AddAccessoryRequest(
            home_id=home.id, accessory_id=found.found.id, setup_code=setup_code
        ),
        metadata=metadata,
        timeout=20,
    ).accessories
    check(len(added) >= 1, "AddAccessory with the setup code")
    event = wait_for(changes, lambda event: event.WhichOneof("payload") == "accessory_added")
    check(event is not None, "Subscribe: accessory_added")
    on = next(
        characteristic
        for service in added[0].services
        for characteristic in service.characteristics
        if characteristic.metadata.format == model_pb2.CHARACTERISTIC_FORMAT_BOOL
        and characteristic.properties.writable
    )
    # A stream that names the characteristic gets its values; its snapshot says it is open.
    values = queue.Queue()
    value_stream = homes.Subscribe(
        events_pb2.SubscribeRequest(
            home_ids=[home.id], characteristic_ids=[on.id], snapshot=True, include_own_changes=True
        ),
        metadata=metadata,
        timeout=60,
    )
    follow(value_stream, values)
    check(wait_for(values, lambda event: event.WhichOneof("payload") == "snapshot") is not None, "Subscribe: snapshot")
    homes.WriteCharacteristic(
        home_service_pb2.WriteCharacteristicRequest(
            home_id=home.id, characteristic_id=on.id, value=model_pb2.CharacteristicValue(bool_value=True)
        ),
        metadata=metadata,
        timeout=20,
    )
    event = wait_for(values, lambda event: event.WhichOneof("payload") == "characteristic_value_updated")
    check(
        event is not None and event.characteristic_value_updated.value.bool_value,
        "Subscribe: the written value, as the accessory took it",
    )
    value_stream.cancel()
    browse.cancel()
    subscription.cancel()
    channel.close()
    print(f"{len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
