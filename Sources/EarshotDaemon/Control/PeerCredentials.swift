import NIOCore
#if canImport(Glibc)
import Glibc
#endif

/// `struct ucred` of <sys/socket.h> (pid_t, uid_t, gid_t), which Swift's Glibc module does not
/// import because glibc declares it only under _GNU_SOURCE. Same layout, so SO_PEERCRED can
/// fill it.
struct PeerCredentials: Sendable, Hashable {
    var pid: Int32 = 0
    var uid: UInt32 = 0
    var gid: UInt32 = 0
}

extension Channel {
    /// The credentials the kernel recorded for the connecting process (SO_PEERCRED): the uid
    /// cannot be forged by the peer, unlike anything it sends.
    func peerCredentials() -> EventLoopFuture<PeerCredentials> {
        guard let provider = self as? any SocketOptionProvider else {
            return eventLoop.makeFailedFuture(ControlServerError.socket("peer", "this channel has no socket options"))
        }
        return provider.unsafeGetSocketOption(level: SocketOptionLevel(SOL_SOCKET), name: SocketOptionName(SO_PEERCRED))
    }
}
