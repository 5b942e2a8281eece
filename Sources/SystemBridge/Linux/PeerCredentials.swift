import CEarshotLinux
#if canImport(Glibc)
import Glibc
#endif

/// The credentials the kernel recorded for the process at the other end of a Unix socket
/// (SO_PEERCRED): the uid cannot be forged by the peer, unlike anything it sends.
///
/// Its only stored property is C's `struct ucred` (redeclared in CEarshotLinux, where
/// `_Static_assert`s hold it to glibc's layout).
public struct PeerCredentials: Sendable, Hashable, CustomStringConvertible {
    private var raw: CEarshotLinux_ucred

    public init(pid: Int32 = 0, uid: UInt32 = 0, gid: UInt32 = 0) {
        raw = CEarshotLinux_ucred(pid: pid, uid: uid, gid: gid)
    }

    public var pid: Int32 { raw.pid }
    public var uid: UInt32 { raw.uid }
    public var gid: UInt32 { raw.gid }

    /// The credentials of the peer of the connected Unix socket `descriptor`.
    public static func of(socket descriptor: Int32) throws(SystemError) -> PeerCredentials {
        var credentials = PeerCredentials()
        guard CEarshotLinux_peer_credentials(descriptor, &credentials.raw) == 0 else {
            throw SystemError("getsockopt SO_PEERCRED", errno: .current)
        }
        return credentials
    }

    public static func == (lhs: PeerCredentials, rhs: PeerCredentials) -> Bool {
        lhs.pid == rhs.pid && lhs.uid == rhs.uid && lhs.gid == rhs.gid
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(pid)
        hasher.combine(uid)
        hasher.combine(gid)
    }

    public var description: String { "pid \(pid) uid \(uid) gid \(gid)" }
}
