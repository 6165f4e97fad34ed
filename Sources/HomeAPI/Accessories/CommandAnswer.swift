import HomeProto
import HomeService

/// The `AnswerCommand` request every acknowledged write sends back, read straight from its bytes:
/// `command_id` (1) and `hap_status` (2) as varints, no `value` (3). swift-protobuf's generic decoder
/// took about 2,000 instructions for these few bytes, once per forwarded write. Any other shape (a
/// read's answer with its value, an unknown field, a malformed varint) goes to the generated
/// decoder, which answers it, and its errors, as before.
struct CommandAnswer: Equatable {
    var commandID: UInt64 = 0
    var hapStatus: Int32 = 0

    /// The request read from its bytes, borrowed: an initializer takes its arguments owned, so the
    /// request's slice was retained for it and released in it (two locked operations a call).
    init?(_ bytes: borrowing ArraySlice<UInt8>) {
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let tag = bytes[index]
            guard tag == 0x08 || tag == 0x10 else { return nil }
            index += 1
            // A varint of at most ten bytes; a repeated field's last occurrence wins, as in protobuf.
            var value: UInt64 = 0
            var shift: UInt64 = 0
            while true {
                guard index < bytes.endIndex, shift < 64 else { return nil }
                let byte = bytes[index]
                index += 1
                value |= UInt64(byte & 0x7F) << shift
                if byte < 0x80 { break }
                shift += 7
            }
            if tag == 0x08 {
                commandID = value
            } else {
                // int32 travels sign-extended to 64 bits; decoders keep the low 32.
                hapStatus = Int32(truncatingIfNeeded: value)
            }
        }
    }
}
