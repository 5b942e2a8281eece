import NIOCore
import SystemBridge

extension Channel {
    /// The credentials the kernel recorded for the connecting process (SO_PEERCRED): the uid
    /// cannot be forged by the peer, unlike anything it sends. `PeerCredentials` has the layout
    /// of `struct ucred`, checked where it is declared, so NIO's getsockopt fills it directly.
    func peerCredentials() -> EventLoopFuture<PeerCredentials> {
        guard let provider = self as? any SocketOptionProvider else {
            return eventLoop.makeFailedFuture(ControlServerError.socket("peer", "this channel has no socket options"))
        }
        return provider.unsafeGetSocketOption(
            level: SocketOptionLevel(PeerCredentials.socketOptionLevel), name: SocketOptionName(PeerCredentials.socketOptionName))
    }
}
