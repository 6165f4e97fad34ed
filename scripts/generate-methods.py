#!/usr/bin/env python3
"""Generates the method lists that follow from the services declared in proto/home/v1, so that
none is kept by hand: the server's declared methods (each with the access it requires and whether
it mutates, from the `home.v1.access` and `home.v1.mutates` options), the Swift SDK's
`MethodTypes.all` (every method with its message types) and the C SDK's method name constants
(clients/c/include/homerpc_methods.h). A method without an access option fails the generation.

    generate-methods.py DESCRIPTOR_SET SERVER_OUT SWIFT_OUT C_OUT

DESCRIPTOR_SET is `protoc --descriptor_set_out` of proto/home/v1 (scripts/generate-protos.sh makes
it and runs this). It is read with a few lines of protobuf wire decoding: no library needed.
"""

import re
import sys

# The order services are listed in (the API first, then the accessories' face and the server's own).
SERVICE_ORDER = ["HomeService", "AccountService", "AdminService", "AccessoryLink", "Health", "ServerInfo"]


def fields(data: bytes):
    """(field number, wire type, value) of each field of one message; value is an int or bytes."""
    position = 0
    while position < len(data):
        key, position = varint(data, position)
        number, kind = key >> 3, key & 7
        if kind == 0:
            value, position = varint(data, position)
        elif kind == 2:
            length, position = varint(data, position)
            value, position = data[position : position + length], position + length
        elif kind == 1:
            value, position = data[position : position + 8], position + 8
        elif kind == 5:
            value, position = data[position : position + 4], position + 4
        else:
            raise ValueError(f"wire type {kind} in a descriptor")
        yield number, kind, value


def varint(data: bytes, position: int):
    result = shift = 0
    while True:
        byte = data[position]
        position += 1
        result |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return result, position


# The method options of proto/home/v1/options.proto (extensions of google.protobuf.MethodOptions).
ACCESS_OPTION, MUTATES_OPTION = 50001, 50002


def access_names(files) -> dict:
    """home.v1.Access's value numbers to their names (`ACCESS_MEMBER`)."""
    for file in files:
        for n, _, enumeration in fields(file):
            if n != 5:  # FileDescriptorProto.enum_type
                continue
            values = list(fields(enumeration))
            if next(value.decode() for m, _, value in values if m == 1) != "Access":
                continue
            names = {}
            for m, _, value in values:
                if m == 2:  # EnumDescriptorProto.value
                    entry = {k: v for k, _, v in fields(value)}
                    names[entry.get(2, 0)] = entry[1].decode()
            return names
    raise SystemExit("home.v1.Access is not declared")


def methods(descriptor_set: bytes):
    """(package, service, method, request type, response type, server streaming, access, mutates),
    in SERVICE_ORDER."""
    files = [
        file
        for number, _, file in fields(descriptor_set)
        if number == 1 and next((value.decode() for n, _, value in fields(file) if n == 2), "") == "home.v1"
    ]
    access = access_names(files)
    found = []
    for file in files:
        for n, _, service in fields(file):
            if n != 6:  # FileDescriptorProto.service
                continue
            service_name = next(value.decode() for m, _, value in fields(service) if m == 1)
            for m, _, method in fields(service):
                if m != 2:  # ServiceDescriptorProto.method
                    continue
                values = {k: value for k, _, value in fields(method)}
                options = {k: value for k, _, value in fields(values.get(4, b""))}
                name = f"home.v1.{service_name}/{values[1].decode()}"
                level = access.get(options.get(ACCESS_OPTION, 0), "ACCESS_UNSPECIFIED")
                if level == "ACCESS_UNSPECIFIED":
                    raise SystemExit(f"{name} names no access: give it option (home.v1.access)")
                found.append(
                    (
                        "home.v1",
                        service_name,
                        values[1].decode(),
                        values[2].decode().lstrip("."),
                        values[3].decode().lstrip("."),
                        bool(values.get(6, 0)),
                        level,
                        bool(options.get(MUTATES_OPTION, 0)),
                    )
                )
    rank = {name: index for index, name in enumerate(SERVICE_ORDER)}
    return sorted(found, key=lambda entry: rank.get(entry[1], len(rank)))  # stable: declaration order within


def swift_case(access: str) -> str:
    """`ACCESS_ANY_ACCOUNT` -> `anyAccount`."""
    words = access.removeprefix("ACCESS_").lower().split("_")
    return words[0] + "".join(word.capitalize() for word in words[1:])


def swift_type(full_name: str) -> str:
    """swift-protobuf's name for a top-level message: `home.v1.AddRoomRequest` -> `Home_V1_AddRoomRequest`."""
    *package, name = full_name.split(".")
    return "_".join(part[:1].upper() + part[1:] for part in package) + "_" + name


def c_name(service: str, method: str) -> str:
    words = lambda text: re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", text).upper()
    return f"HOMERPC_{words(service)}_{words(method)}"


def main() -> None:
    descriptor_path, server_path, swift_path, c_path = sys.argv[1:5]
    with open(descriptor_path, "rb") as file:
        declared = methods(file.read())

    server = [
        "// DO NOT EDIT. Generated by scripts/generate-methods.py from the services in proto/home/v1.",
        "// swift-format-ignore-file",
        "",
        "extension DeclaredMethod {",
        "    /// Every method proto/home/v1 declares, by full name, with its options.",
        "    static let byName: [String: DeclaredMethod] = [",
    ]
    for package, service, method, request, response, streaming, access, mutates in declared:
        server.append(
            f'        "{package}.{service}/{method}": DeclaredMethod(access: .{swift_case(access)}, '
            f"mutates: {'true' if mutates else 'false'}, isStreaming: {'true' if streaming else 'false'}, "
            f'request: "{request}", response: "{response}"),'
        )
    server += ["    ]", "}", ""]
    with open(server_path, "w") as file:
        file.write("\n".join(server))

    swift = [
        "// DO NOT EDIT. Generated by scripts/generate-methods.py from the services in proto/home/v1.",
        "// swift-format-ignore-file",
        "",
        "import HomeProto",
        "",
        "extension MethodTypes {",
        "    /// Every method proto/home/v1 declares, service by service, in declaration order.",
        "    public static let all: [Entry] = [",
    ]
    for package, service, method, request, response, streaming, _, _ in declared:
        swift.append(
            f'        Entry(name: "{package}.{service}/{method}", request: {swift_type(request)}.self, '
            f"response: {swift_type(response)}.self, isStreaming: {'true' if streaming else 'false'}),"
        )
    swift += ["    ]", "}", ""]
    with open(swift_path, "w") as file:
        file.write("\n".join(swift))

    guard = "HOMERPC_METHODS_H"
    c = [
        "/* DO NOT EDIT. Generated by scripts/generate-methods.py from the services in proto/home/v1. */",
        "/*",
        " * Every method's full name, for homerpc_call() and homerpc_stream_open(): a misspelt constant is",
        " * a compile error, where a misspelt string is UNIMPLEMENTED at run time. Streaming methods are",
        " * marked; their request and response types are the protobuf-c ones of the same names.",
        " */",
        f"#ifndef {guard}",
        f"#define {guard}",
        "",
    ]
    for package, service, method, request, response, streaming, _, _ in declared:
        comment = f"/* {request} -> {'stream ' if streaming else ''}{response} */"
        c.append(f'#define {c_name(service, method)} "{package}.{service}/{method}" {comment}')
    c += ["", f"#endif /* {guard} */", ""]
    with open(c_path, "w") as file:
        file.write("\n".join(c))


if __name__ == "__main__":
    main()
