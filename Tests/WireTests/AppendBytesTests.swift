import Testing
import Wire

/// `OutputSpan.appendBytes`: the frame encoder's one-copy byte writing through pointers.
@Suite struct AppendBytesTests {
    @Test func bytesThatFitAreAppendedInOrder() {
        var buffer: [UInt8] = [9]
        buffer.append(addingCapacity: 6) { span in
            span.appendBytes(of: (UInt32(0x0102_0304).bigEndian, UInt16(0x0506).bigEndian))
        }
        #expect(buffer == [9, 1, 2, 3, 4, 5, 6])
    }

    /// The room is checked before the copy in every build: a slice of an unsafe buffer is checked in
    /// debug builds only, and a release build copied past the span's end before anything trapped.
    @Test func bytesThatDoNotFitTrapBeforeTheyAreWritten() async {
        await #expect(processExitsWith: .failure) {
            var buffer: [UInt8] = []
            buffer.append(addingCapacity: 2) { span in
                span.appendBytes(of: (UInt64.max, UInt64.max, UInt64.max, UInt64.max))
            }
        }
    }
}
