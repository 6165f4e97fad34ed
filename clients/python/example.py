#!/usr/bin/env python3
"""Lists your homes, adds a room to one, and follows its changes: HomeRPC's gRPC door from Python.

    ./generate.sh                       # once: gRPC for Python in .venv, stubs in generated/
    .venv/bin/python example.py 127.0.0.1:7443 homed-owner.token "My Home" Study
    HOMERPC_CA_FILE=ca.pem .venv/bin/python example.py localhost:7443 ...   # over TLS

The home is created if you have none of that name. The room's addition comes back on the change
stream (Subscribe), as every change to the home does.
"""

import os
import sys
import threading

import grpc
from grpc_status import rpc_status

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "generated"))
from home.v1 import events_pb2, home_service_pb2, home_service_pb2_grpc, status_pb2  # noqa: E402


def homekit_error(error: grpc.RpcError) -> str:
    """The status, with the HomeKit code the server puts in grpc-status-details-bin."""
    status = rpc_status.from_call(error)
    for detail in status.details if status else []:
        details = status_pb2.ErrorDetails()
        if detail.Unpack(details):
            return f"{error.code().name} {details.homekit_name} ({details.homekit_code}): {error.details()}"
    return f"{error.code().name}: {error.details()}"


def open_channel(address: str) -> grpc.Channel:
    """A channel to the gRPC door: over TLS when HOMERPC_CA_FILE names the CA of homed's certificate
    (homed --tls-cert), with a client certificate (HOMERPC_CERT_FILE, HOMERPC_KEY_FILE) for a homed
    that requires mutual TLS (--tls-client-ca); cleartext otherwise."""
    ca_file = os.environ.get("HOMERPC_CA_FILE")
    if not ca_file:
        return grpc.insecure_channel(address)

    def read(variable: str):
        path = os.environ.get(variable)
        if not path:
            return None
        with open(path, "rb") as file:
            return file.read()

    credentials = grpc.ssl_channel_credentials(
        root_certificates=read("HOMERPC_CA_FILE"),
        private_key=read("HOMERPC_KEY_FILE"),
        certificate_chain=read("HOMERPC_CERT_FILE"),
    )
    return grpc.secure_channel(address, credentials)


def main() -> int:
    if len(sys.argv) != 5:
        print(__doc__, file=sys.stderr)
        return 2
    address, token_file, home_name, room_name = sys.argv[1:]
    with open(token_file) as file:
        token = file.read().strip()
    # Every call carries the token, as gRPC call credentials would.
    metadata = [("authorization", f"Bearer {token}")]
    with open_channel(address) as channel:
        homes = home_service_pb2_grpc.HomeServiceStub(channel)
        listed = homes.ListHomes(home_service_pb2.ListHomesRequest(), metadata=metadata, timeout=10).homes
        print("homes:", ", ".join(home.name for home in listed) or "none")
        home = next((home for home in listed if home.name == home_name), None)
        if home is None:
            request = home_service_pb2.AddHomeRequest(name=home_name)
            home = homes.AddHome(request, metadata=metadata, timeout=10).home

        # Follow the home from its current revision; our own changes come too.
        request = events_pb2.SubscribeRequest(home_ids=[home.id], include_own_changes=True)
        events = homes.Subscribe(request, metadata=metadata, timeout=30)
        seen = threading.Event()

        def follow() -> None:
            try:
                for event in events:
                    kind = event.WhichOneof("payload")
                    print(f"event: revision {event.revision} {kind}")
                    if kind == "room_added" and event.room_added.room.name == room_name:
                        seen.set()
                        return
            except grpc.RpcError as error:
                if error.code() != grpc.StatusCode.CANCELLED:
                    print("stream ended:", homekit_error(error), file=sys.stderr)

        follower = threading.Thread(target=follow)
        follower.start()
        try:
            room = homes.AddRoom(
                home_service_pb2.AddRoomRequest(home_id=home.id, name=room_name), metadata=metadata, timeout=10
            ).room
            print(f"added {room.name} to {home.name}")
        except grpc.RpcError as error:
            print("AddRoom:", homekit_error(error), file=sys.stderr)
            events.cancel()
            follower.join()
            return 1
        if not seen.wait(10):
            print("the room's addition did not arrive on the change stream", file=sys.stderr)
            events.cancel()
            follower.join()
            return 1
        events.cancel()
        follower.join()
    return 0


if __name__ == "__main__":
    sys.exit(main())
