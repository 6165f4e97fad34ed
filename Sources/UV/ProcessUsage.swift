import CLibUV
import Glibc

/// The process's own resource use: CPU time from `getrusage`, resident memory from /proc.
public struct ProcessUsage: Sendable {
    public var residentBytes: UInt64 = 0
    public var userMilliseconds: UInt64 = 0
    public var systemMilliseconds: UInt64 = 0

    public static var current: ProcessUsage {
        var found = ProcessUsage()
        var usage = rusage()
        if getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage) == 0 {
            found.userMilliseconds = UInt64(usage.ru_utime.tv_sec) * 1000 + UInt64(usage.ru_utime.tv_usec) / 1000
            found.systemMilliseconds = UInt64(usage.ru_stime.tv_sec) * 1000 + UInt64(usage.ru_stime.tv_usec) / 1000
        }
        // /proc/self/statm: size and resident, in pages.
        let descriptor = open("/proc/self/statm", O_RDONLY)
        if descriptor >= 0 {
            var buffer = [UInt8](repeating: 0, count: 128)
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            close(descriptor)
            let fields = buffer.prefix(max(0, count)).split(separator: UInt8(ascii: " "))
            if fields.count > 1, let pages = UInt64(String(decoding: fields[1], as: UTF8.self)) {
                found.residentBytes = pages * UInt64(sysconf(Int32(_SC_PAGESIZE)))
            }
        }
        return found
    }

    /// Hands memory that is free inside the allocator back to the system. glibc keeps freed pages for
    /// later allocations; after start-up, whose temporary copies of whole tables are freed by then,
    /// they would stay resident for nothing.
    public static func returnFreedMemory() {
        malloc_trim(0)
    }
}
