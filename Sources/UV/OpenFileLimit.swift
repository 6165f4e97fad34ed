import Glibc

/// The process's open-file limit, which bounds its connections: one descriptor each.
public enum OpenFileLimit {
    /// Raises the soft limit to at least `needed` descriptors, as far as the hard limit allows.
    /// - Returns: the soft limit now (below `needed` when the hard limit is lower).
    @discardableResult
    public static func raise(toAtLeast needed: Int) -> Int {
        let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
        var limit = rlimit()
        guard getrlimit(resource, &limit) == 0 else { return 0 }
        guard limit.rlim_cur < rlim_t(needed) else { return Int(clamping: limit.rlim_cur) }
        var raised = limit
        raised.rlim_cur = min(rlim_t(needed), limit.rlim_max)
        guard setrlimit(resource, &raised) == 0 else { return Int(clamping: limit.rlim_cur) }
        return Int(clamping: raised.rlim_cur)
    }
}
