import ControlProtocol
import NIOCore
import RoutingPolicy
import SystemBridge

/// One connection on the event loop: admits only the daemon's own uid, hands complete lines
/// to the connection's session, stops reading while the session is behind, and drops a client
/// whose unread output passes the bound.
final class ControlConnectionHandler: ChannelDuplexHandler {
    typealias InboundIn = ControlFrame
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let control: any DaemonControl
    private let limits: ControlLimits
    private let allowedUID: UInt32
    private let admitted: (ControlSession) -> Void
    private var context: ChannelHandlerContext?
    private var session: ControlSession?
    /// Nothing is read before the peer's uid is checked.
    private var isAdmitted = false
    private var queued = 0
    /// A read the pipeline asked for while reading was held back.
    private var readHeld = false

    /// `admitted` receives the session of a connection that passed the uid check.
    init(control: any DaemonControl, limits: ControlLimits, allowedUID: UInt32, admitted: @escaping (ControlSession) -> Void) {
        self.control = control
        self.limits = limits
        self.allowedUID = allowedUID
        self.admitted = admitted
    }

    func handlerAdded(context: ChannelHandlerContext) { self.context = context }

    func handlerRemoved(context: ChannelHandlerContext) { self.context = nil }

    func channelActive(context: ChannelHandlerContext) {
        context.channel.peerCredentials().hop(to: context.eventLoop).assumeIsolated().whenComplete { result in
            self.admit(result)
        }
        context.fireChannelActive()
    }

    private func admit(_ result: Result<PeerCredentials, any Error>) {
        guard let context else { return }
        switch result {
        case .success(let peer) where peer.uid == allowedUID:
            isAdmitted = true
            let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
            let loop = context.eventLoop
            let session = ControlSession(channel: context.channel, control: control, limits: limits) {
                loop.execute { bound.value.requestAnswered() }
            }
            self.session = session
            admitted(session)
            if readHeld {
                readHeld = false
                context.read()
            }
        case .success(let peer):
            refuse(context, "this daemon serves uid \(allowedUID) only and uid \(peer.uid) connected: run earshot as the user whose daemon it is")
        case .failure(let error):
            refuse(context, "cannot tell who is connecting (SO_PEERCRED: \(error)): connection refused")
        }
    }

    private func refuse(_ context: ChannelHandlerContext, _ message: String) {
        let reply = ControlWire.line(ControlWire.failure(id: nil, AccessoryError(.invalidRequest, message)))
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(ByteBuffer(bytes: reply))).assumeIsolated().whenComplete { _ in
            channel.close(promise: nil)
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard isAdmitted, let session else { return }
        queued += 1
        session.receive(unwrapInboundIn(data))
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case .inputClosed? = event as? ChannelEvent {
            // Half-closed (e.g. socat after its stdin ends): the session answers, then closes.
            // Without a session the peer was refused, and the refusal closes once written.
            session?.inputEnded()
        }
        context.fireUserInboundEventTriggered(event)
    }

    func channelInactive(context: ChannelHandlerContext) {
        session?.end()
        session = nil
        context.fireChannelInactive()
    }

    /// Writability drops when unread output passes the high water mark (maximumPendingOutputBytes):
    /// the client is not reading, so it is cut off rather than buffered for without end.
    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if !context.channel.isWritable { context.close(promise: nil) }
        context.fireChannelWritabilityChanged()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    func read(context: ChannelHandlerContext) {
        if isAdmitted, queued < limits.maximumQueuedRequests {
            context.read()
        } else {
            readHeld = true
        }
    }

    private func requestAnswered() {
        queued -= 1
        guard let context, readHeld, isAdmitted, queued < limits.maximumQueuedRequests else { return }
        readHeld = false
        context.read()
    }
}
