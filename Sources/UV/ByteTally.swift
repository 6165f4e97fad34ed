/// A number of bytes that several owners add to and take from, each for what it holds: the memory a
/// server's connections hold together (``Connection/pendingWriteTally``). Loop thread only.
public final class ByteTally {
    public var byteCount = 0

    public init() {}
}
