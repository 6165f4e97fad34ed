/// Connection parameters a side announces about what it will accept.
///
/// On the wire: a sequence of 6-byte entries, `id u16 | value u32`. Entries apply in order; unknown ids
/// are kept but ignored, so a newer peer can announce settings an older one does not know.
public struct Settings: Hashable, Sendable {
    public var entries: [Setting]

    public init(_ entries: [Setting] = []) {
        self.entries = entries
    }

    /// The last value announced for `id`, if any.
    public subscript(id: SettingID) -> UInt32? {
        entries.last { $0.id == id }?.value
    }
}

/// One announced parameter.
public struct Setting: Hashable, Sendable {
    public var id: SettingID
    public var value: UInt32

    public init(_ id: SettingID, _ value: UInt32) {
        self.id = id
        self.value = value
    }

    /// Bytes per entry on the wire.
    public static let encodedLength = 6
}

/// The number of a setting. The numbering is part of the protocol.
public struct SettingID: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    /// Largest frame payload the sender accepts, within
    /// ``WireLimits/minimumMaxFrameSize``...``WireLimits/maximumMaxFrameSize``.
    public static let maxFrameSize = SettingID(rawValue: 1)
    /// Messages the sender lets the peer send on each new server stream before any CREDIT frame.
    public static let initialStreamCredit = SettingID(rawValue: 2)
    /// Calls the sender accepts in flight at once on this connection.
    public static let maxConcurrentStreams = SettingID(rawValue: 3)

    public var description: String {
        switch self {
        case .maxFrameSize: "MAX_FRAME_SIZE"
        case .initialStreamCredit: "INITIAL_STREAM_CREDIT"
        case .maxConcurrentStreams: "MAX_CONCURRENT_STREAMS"
        default: "SETTING_\(rawValue)"
        }
    }

    /// Whether `value` is allowed for this setting; unknown settings accept anything.
    func accepts(_ value: UInt32) -> Bool {
        switch self {
        case .maxFrameSize: (WireLimits.minimumMaxFrameSize...WireLimits.maximumMaxFrameSize).contains(Int(value))
        default: true
        }
    }
}
