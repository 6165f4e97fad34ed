import WireTesting

/// libFuzzer's entry point: any input must leave the decoder's invariants intact (see
/// `FrameDecoderVerifier`); a violation aborts, which libFuzzer records as a crash.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzFrameDecoder(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let input = start.map { Array(UnsafeRawBufferPointer(start: $0, count: count)) } ?? []
    let problems = FrameDecoderVerifier.violations(in: input)
    if !problems.isEmpty {
        fatalError(problems.joined(separator: "\n"))
    }
    return 0
}
