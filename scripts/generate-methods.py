#!/usr/bin/env python3
"""Generates the method lists that follow from the services declared in proto/home/v1, so that
none is kept by hand: the server's declared methods (each with the access it requires and whether
it mutates and the token scope it needs, from the `home.v1.access`, `home.v1.mutates`,
`home.v1.scope` and `home.v1.every_home` options), the Swift SDK's
`MethodTypes.all` (every method with its message types), the C SDK's method name constants
(clients/c/include/homerpc_methods.h) and docs/API.md's method tables (each method's role, its
leading comment as what it answers, its `home.v1.codes`). A method without an access option, or one
that no table of docs/API.md lists, fails the generation.

    generate-methods.py DESCRIPTOR_SET SERVER_OUT SWIFT_OUT C_OUT API_DOC

DESCRIPTOR_SET is `protoc --include_source_info --descriptor_set_out` of proto/home/v1
(scripts/generate-protos.sh makes it and runs this). It is read with a few lines of protobuf wire
decoding: no library needed.

API_DOC's tables are rewritten in place, between a marker and `<!-- end methods -->`:

    <!-- methods HomeService section="Rooms and zones" -->   a service's methods under a section comment
    <!-- methods AccountService -->                          all of a service's methods
    <!-- methods Health ServerInfo names=full -->            `home.v1.Health/Check` in the method column
    <!-- methods AccessoryLink names=service columns=kind --> `AccessoryLink/Attach`, and its kind column

A section is the detached comment `// ---- Title ----` before a group of rpcs in the service.
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
ACCESS_OPTION, MUTATES_OPTION, CODES_OPTION, SCOPE_OPTION, EVERY_HOME_OPTION = 50001, 50002, 50003, 50004, 50005


def enum_names(files, enum: str) -> dict:
    """A home.v1 enum's value numbers to their names (`ACCESS_MEMBER`)."""
    for file in files:
        for n, _, enumeration in fields(file):
            if n != 5:  # FileDescriptorProto.enum_type
                continue
            values = list(fields(enumeration))
            if next(value.decode() for m, _, value in values if m == 1) != enum:
                continue
            names = {}
            for m, _, value in values:
                if m == 2:  # EnumDescriptorProto.value
                    entry = {k: v for k, _, v in fields(value)}
                    names[entry.get(2, 0)] = entry[1].decode()
            return names
    raise SystemExit(f"home.v1.{enum} is not declared")


def packed(value) -> list:
    """A repeated int32's values, packed (bytes) or not (one int)."""
    if isinstance(value, int):
        return [value]
    numbers, position = [], 0
    while position < len(value):
        number, position = varint(value, position)
        numbers.append(number)
    return numbers


def comments(file: bytes) -> dict:
    """SourceCodeInfo's comments by path: (leading comment, detached comments before it)."""
    found = {}
    for n, _, info in fields(file):
        if n != 9:  # FileDescriptorProto.source_code_info
            continue
        for m, _, location in fields(info):
            if m != 1:  # SourceCodeInfo.location
                continue
            path, leading, detached = [], "", []
            for k, _, value in fields(location):
                if k == 1:
                    path += packed(value)
                elif k == 3:
                    leading = value.decode()
                elif k == 6:
                    detached.append(value.decode())
            found[tuple(path)] = (leading, detached)
    return found


def prose(comment: str) -> str:
    """A comment's lines as one paragraph."""
    return " ".join(line.strip() for line in comment.strip().splitlines())


def methods(descriptor_set: bytes):
    """Every method as a dict (package, service, method, request, response, streaming, access,
    mutates, names_home: whether the request's field 1 is `bytes home_id`, codes, answers, section),
    in SERVICE_ORDER."""
    files = [
        file
        for number, _, file in fields(descriptor_set)
        if number == 1 and next((value.decode() for n, _, value in fields(file) if n == 2), "") == "home.v1"
    ]
    access = enum_names(files, "Access")
    scopes = enum_names(files, "TokenScope")
    # Whether each message's field 1 is a singular `bytes home_id`: the home a member or
    # administrator method acts in, which the server checks at dispatch.
    names_home = {}
    for file in files:
        for n, _, message in fields(file):
            if n != 4:  # FileDescriptorProto.message_type
                continue
            name = next(value.decode() for m, _, value in fields(message) if m == 1)
            names_home[f"home.v1.{name}"] = any(
                (entry := {k: v for k, _, v in fields(field)}).get(3) == 1
                and entry.get(1) == b"home_id"
                and entry.get(5) == 12  # TYPE_BYTES
                and entry.get(4) == 1  # LABEL_OPTIONAL
                for m, _, field in fields(message)
                if m == 2  # DescriptorProto.field
            )
    found = []
    for file in files:
        notes = comments(file)
        service_index = -1
        for n, _, service in fields(file):
            if n != 6:  # FileDescriptorProto.service
                continue
            service_index += 1
            service_name = next(value.decode() for m, _, value in fields(service) if m == 1)
            method_index, section = -1, None
            for m, _, method in fields(service):
                if m != 2:  # ServiceDescriptorProto.method
                    continue
                method_index += 1
                values = {k: value for k, _, value in fields(method)}
                options = {k: value for k, _, value in fields(values.get(4, b""))}
                name = f"home.v1.{service_name}/{values[1].decode()}"
                level = access.get(options.get(ACCESS_OPTION, 0), "ACCESS_UNSPECIFIED")
                if level == "ACCESS_UNSPECIFIED":
                    raise SystemExit(f"{name} names no access: give it option (home.v1.access)")
                # Accounts call every method but the accessories' and the health check: each of
                # those names the least token scope it needs, and the others name none.
                scope = scopes.get(options.get(SCOPE_OPTION, 0), "TOKEN_SCOPE_UNSPECIFIED")
                called_by_accounts = level not in ("ACCESS_ANYONE", "ACCESS_ACCESSORY")
                if called_by_accounts != (scope != "TOKEN_SCOPE_UNSPECIFIED"):
                    raise SystemExit(
                        f"{name}: a method accounts call names its option (home.v1.scope), and only such a method"
                    )
                leading, detached = notes.get((6, service_index, 2, method_index), ("", []))
                for comment in detached:
                    if match := re.fullmatch(r"\s*---- (.+) ----\s*", comment):
                        section = match.group(1)
                found.append(
                    {
                        "package": "home.v1",
                        "service": service_name,
                        "method": values[1].decode(),
                        "request": values[2].decode().lstrip("."),
                        "response": values[3].decode().lstrip("."),
                        "streaming": bool(values.get(6, 0)),
                        "access": level,
                        "mutates": bool(options.get(MUTATES_OPTION, 0)),
                        "scope": scope,
                        "every_home": bool(options.get(EVERY_HOME_OPTION, 0)),
                        "names_home": names_home.get(values[2].decode().lstrip("."), False),
                        "codes": options.get(CODES_OPTION, b"").decode(),
                        "answers": prose(leading),
                        "section": section,
                    }
                )
    rank = {name: index for index, name in enumerate(SERVICE_ORDER)}
    return sorted(found, key=lambda entry: rank.get(entry["service"], len(rank)))  # stable: declaration order within


# docs/API.md's words for each access.
ROLE_WORDS = {
    "ACCESS_ANYONE": "anyone, no token",
    "ACCESS_ACCESSORY": "an accessory",
    "ACCESS_ANY_ACCOUNT": "any account",
    "ACCESS_MEMBER": "member",
    "ACCESS_ADMINISTRATOR": "administrator",
    "ACCESS_SERVER_OWNER": "server owner",
}
# docs/API.md's words for each token scope.
SCOPE_WORDS = {
    "TOKEN_SCOPE_UNSPECIFIED": "—",
    "TOKEN_SCOPE_READ": "read",
    "TOKEN_SCOPE_CONTROL": "control",
    "TOKEN_SCOPE_FULL": "full",
}
MARKER = re.compile(r"<!-- methods ((?:\w+ )+)(?:section=\"([^\"]+)\" )?(?:names=(\w+) )?(?:columns=(\w+) )?-->")
END_MARKER = "<!-- end methods -->"


def method_table(declared, marker) -> list:
    """The table a marker asks for, as lines."""
    services, section, names, columns = marker.group(1).split(), marker.group(2), marker.group(3), marker.group(4)
    rows = [
        entry
        for entry in declared
        if entry["service"] in services and (section is None or entry["section"] == section)
    ]
    if not rows:
        raise SystemExit(f"docs/API.md: {marker.group(0)} lists no method")
    if columns == "kind":
        lines = ["| method | kind | what it does | failures |", "|---|---|---|---|"]
    else:
        lines = ["| method | role | token scope | answers | HomeKit codes |", "|---|---|---|---|---|"]
    for entry in rows:
        entry["listed"] = True
        name = {
            "full": f"{entry['package']}.{entry['service']}/{entry['method']}",
            "service": f"{entry['service']}/{entry['method']}",
        }.get(names, entry["method"])
        second = (
            (f"server stream of `{entry['response'].split('.')[-1]}`" if entry["streaming"] else "unary")
            if columns == "kind"
            else f"{ROLE_WORDS[entry['access']]} | {SCOPE_WORDS[entry['scope']]}"
            + (", every home" if entry["every_home"] else "")
        )
        lines.append(f"| `{name}` | {second} | {entry['answers'] or '—'} | {entry['codes'] or '—'} |")
    return lines


def rewrite_tables(path: str, declared) -> None:
    """Rewrites every marked table of the document at `path`; fails if a method is in none."""
    with open(path) as file:
        lines = file.read().split("\n")
    written, index = [], 0
    while index < len(lines):
        line = lines[index]
        written.append(line)
        index += 1
        if marker := MARKER.fullmatch(line):
            end = lines.index(END_MARKER, index)
            written += method_table(declared, marker)
            index = end
    unlisted = [f"{entry['service']}/{entry['method']}" for entry in declared if not entry.get("listed")]
    if unlisted:
        raise SystemExit(f"{path} lists no table for {', '.join(unlisted)}: add it to a marked table's section")
    with open(path, "w") as file:
        file.write("\n".join(written))


def swift_case(access: str) -> str:
    """`ACCESS_ANY_ACCOUNT` -> `anyAccount`."""
    words = access.removeprefix("ACCESS_").lower().split("_")
    return words[0] + "".join(word.capitalize() for word in words[1:])


def scope_case(scope: str) -> str:
    """`TOKEN_SCOPE_READ` -> `.read`; `nil` for a method no account calls."""
    return "nil" if scope == "TOKEN_SCOPE_UNSPECIFIED" else "." + scope.removeprefix("TOKEN_SCOPE_").lower()


def swift_type(full_name: str) -> str:
    """swift-protobuf's name for a top-level message: `home.v1.AddRoomRequest` -> `Home_V1_AddRoomRequest`."""
    *package, name = full_name.split(".")
    return "_".join(part[:1].upper() + part[1:] for part in package) + "_" + name


def c_name(service: str, method: str) -> str:
    words = lambda text: re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", text).upper()
    return f"HOMERPC_{words(service)}_{words(method)}"


def main() -> None:
    descriptor_path, server_path, swift_path, c_path, api_path = sys.argv[1:6]
    with open(descriptor_path, "rb") as file:
        declared = methods(file.read())

    server = [
        "// DO NOT EDIT. Generated by scripts/generate-methods.py from the services in proto/home/v1.",
        "// swift-format-ignore-file",
        "",
        "import HomeService",
        "",
        "extension DeclaredMethod {",
        "    /// Every method proto/home/v1 declares, by full name, with its options.",
        "    static let byName: [String: DeclaredMethod] = [",
    ]
    for entry in declared:
        server.append(
            f'        "{entry["package"]}.{entry["service"]}/{entry["method"]}": '
            f"DeclaredMethod(access: .{swift_case(entry['access'])}, "
            f"mutates: {'true' if entry['mutates'] else 'false'}, "
            f"isStreaming: {'true' if entry['streaming'] else 'false'}, "
            f"namesHomeInFieldOne: {'true' if entry['names_home'] else 'false'}, "
            f"scope: {scope_case(entry['scope'])}, "
            f"spansEveryHome: {'true' if entry['every_home'] else 'false'}, "
            f'request: "{entry["request"]}", response: "{entry["response"]}"),'
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
    for entry in declared:
        swift.append(
            f'        Entry(name: "{entry["package"]}.{entry["service"]}/{entry["method"]}", '
            f"request: {swift_type(entry['request'])}.self, response: {swift_type(entry['response'])}.self, "
            f"isStreaming: {'true' if entry['streaming'] else 'false'}),"
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
    for entry in declared:
        comment = f"/* {entry['request']} -> {'stream ' if entry['streaming'] else ''}{entry['response']} */"
        full_name = f"{entry['package']}.{entry['service']}/{entry['method']}"
        c.append(f'#define {c_name(entry["service"], entry["method"])} "{full_name}" {comment}')
    c += ["", f"#endif /* {guard} */", ""]
    with open(c_path, "w") as file:
        file.write("\n".join(c))

    rewrite_tables(api_path, declared)


if __name__ == "__main__":
    main()
