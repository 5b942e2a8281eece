#if canImport(Glibc)
import Glibc
#endif

extension CurrentProcess {
    /// The home directory the user database (passwd: /etc/passwd or NSS) gives the real user id
    /// (`getpwuid_r` of `getuid()`), never `$HOME`; nil when the user has no entry or its entry
    /// names no directory. A failure of the lookup itself (an NSS module that cannot answer) is
    /// thrown with its errno.
    public static func passwdHomeDirectory() throws(SystemError) -> String? {
        try homeDirectory(of: userID)
    }

    /// `passwdHomeDirectory` for any user id (tests ask for one that has no entry).
    public static func homeDirectory(of uid: UInt32) throws(SystemError) -> String? {
        // The buffer holds the entry's strings; ERANGE asks for a larger one (bounded: no
        // entry needs a megabyte).
        var size = max(Int(sysconf(Int32(_SC_GETPW_R_SIZE_MAX))), 1024)
        while true {
            let (code, home) = lookUp(uid, size: size)
            if code == ERANGE, size < 1 << 20 {
                size *= 4
                continue
            }
            if code == EINTR { continue }
            // 0 and no entry, or one of the "not found" codes glibc's NSS modules give.
            if code == 0 || code == ENOENT || code == ESRCH || code == EBADF || code == EPERM {
                guard let home, !home.isEmpty else { return nil }
                return home
            }
            throw SystemError("getpwuid_r", detail: "uid \(uid)", code: code)
        }
    }

    /// One `getpwuid_r` with a buffer of `size` bytes: its code, and the home directory when an
    /// entry was found.
    private static func lookUp(_ uid: UInt32, size: Int) -> (Int32, String?) {
        // The entry's strings point into the buffer: read while it is lent.
        var entry = passwd()
        var result: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: size)
        return buffer.withUnsafeMutableBufferPointer { storage in
            guard let base = storage.baseAddress else { return (ERANGE, nil) }
            let code = getpwuid_r(uid_t(uid), &entry, base, storage.count, &result)
            guard code == 0, result != nil, let home = entry.pw_dir else { return (code, nil) }
            return (code, String(cString: home))
        }
    }
}
